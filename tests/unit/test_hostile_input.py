"""Pure policy against hostile input: control characters, invisible text, media paths,
idempotency fingerprints and bounded validation messages."""

import uuid

import pytest
from pydantic import TypeAdapter, ValidationError

from dispatcher.error_responses import readable_problems
from dispatcher.idempotency import IdempotencyKey, request_fingerprint
from dispatcher.media import MediaRefused, locate, media_path_problem
from dispatcher.schemas import AnalyzeRequest, has_visible_character
from dispatcher.tenancy import SessionTenants

STRING_FIELDS = ("content", "text", "url", "media_path", "user_id")


def _valid_with(field: str, value: str) -> dict[str, str]:
    body = {"content": "hello", "input_type": "text"}
    if field == "url":
        return {"url": f"https://example.com/hello{value}there", "input_type": "url"}
    if field == "media_path":
        return {"media_path": f"a{value}b.png", "input_type": "image"}
    return {**body, field: f"hello{value}there"}


@pytest.mark.parametrize("field", STRING_FIELDS)
@pytest.mark.parametrize("char", ["\x00", "\x01", "\x08", "\x0b", "\x1b", "\x1f"])
def test_every_string_field_refuses_c0_control_characters(field, char):
    """NUL and the other C0 controls are refused in each field, without quoting the value."""
    with pytest.raises(ValidationError) as refused:
        AnalyzeRequest.model_validate(_valid_with(field, char))
    message = str(refused.value.errors()[0]["msg"])
    assert "hello" not in message
    assert f"U+{ord(char):04X}" in message or "without spaces" in message  # url: \x0b, \x1f


def test_tab_newline_and_carriage_return_are_ordinary_text():
    """Multi-line text with tabs is accepted unchanged inside the content."""
    body = AnalyzeRequest.model_validate({"content": "line one\r\n\tline two\nend"})
    assert body.body == "line one\r\n\tline two\nend"


@pytest.mark.parametrize(
    "text",
    [
        "\u200b\u200c\u200d",
        "\u2060\ufeff",
        "\u202e\u2066\u2069\u200e",
        "\u00a0\u3000\u2028\u2029",
        "\u3164\u2800",
        " \t\n",
    ],
)
def test_content_without_visible_characters_is_refused(text):
    """Zero-width, bidi, separator-only or blank-letter content is not content."""
    assert not has_visible_character(text)
    with pytest.raises(ValidationError):
        AnalyzeRequest.model_validate({"content": text})


@pytest.mark.parametrize("text", ["a", "\u200bx\u200b", "é", "😀", "١"])
def test_one_visible_character_is_enough(text):
    """Any drawn character, even among invisible ones, makes content acceptable."""
    assert has_visible_character(text)


@pytest.mark.parametrize(
    "path",
    [
        "../../etc/passwd",
        "a/../../b.png",
        "/etc/shadow",
        "/proc/self/environ",
        "%2e%2e/%2e%2e/etc/passwd",
        "a%2fb.png",
        "\\\\server\\share\\x.png",
        "dir\\x.png",
        "file:///etc/passwd",
        "http://example.com/x.png",
        "C:/x.png",
        "~/x.png",
        "./x.png",
        "a//b.png",
        "a/",
        "",
        "x\x00.png",
    ],
)
def test_media_paths_that_could_leave_the_folder_are_refused(path):
    """Traversal, absolute, scheme, UNC, backslash, percent-encoded, unnormalised: refused."""
    assert media_path_problem(path) is not None


@pytest.mark.parametrize("path", ["clip.mp4", "2026/11/photo one.png", "a.b/c-d_e.wav"])
def test_plain_relative_media_paths_are_accepted(path):
    """Ordinary relative paths pass the policy."""
    assert media_path_problem(path) is None


def test_media_is_located_in_the_tenants_folder_only(tmp_path):
    """A file in the tenant's folder is carried as `<tenant>/<path>`; another tenant's file,
    a symlink out of the folder and a missing file are refused; no MEDIA_ROOT refuses all."""
    (tmp_path / "acme" / "in").mkdir(parents=True)
    (tmp_path / "acme" / "in" / "a.png").write_bytes(b"png")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "b.png").write_bytes(b"png")
    (tmp_path / "acme" / "link.png").symlink_to(tmp_path / "other" / "b.png")
    assert locate(str(tmp_path), "acme", "in/a.png") == "acme/in/a.png"
    for path in ("b.png", "link.png", "in/missing.png"):
        with pytest.raises(MediaRefused, match="no such media file"):
            locate(str(tmp_path), "acme", path)
    with pytest.raises(MediaRefused, match="no media folder is configured"):
        locate(None, "acme", "in/a.png")


def test_the_fingerprint_names_the_request_not_its_spelling():
    """`text` and `content` are one field and the plan is the effective one; any real
    difference in the request changes the fingerprint."""
    as_text = AnalyzeRequest.model_validate({"text": "hello"})
    as_content = AnalyzeRequest.model_validate({"content": " hello ", "plan_type": 6})
    other = AnalyzeRequest.model_validate({"content": "hello", "user_id": "u1"})
    assert request_fingerprint(as_text, 6) == request_fingerprint(as_content, 6)
    assert request_fingerprint(as_text, 6) != request_fingerprint(as_text, 5)
    assert request_fingerprint(as_text, 6) != request_fingerprint(other, 6)


@pytest.mark.parametrize("key", ["", "   ", "k\x00", "k\x1b", "x" * 201])
def test_unusable_idempotency_keys_are_refused(key):
    """Empty, blank, control characters or over 200 characters."""
    with pytest.raises(ValidationError):
        TypeAdapter(IdempotencyKey).validate_python(key)


def test_validation_messages_are_capped_and_never_quote_values():
    """40,000 unknown fields give ten problems and a count; no value sent is echoed."""
    body = {f"field{i}": "SECRET-VALUE" for i in range(40_000)}
    with pytest.raises(ValidationError) as refused:
        AnalyzeRequest.model_validate({"content": "x", **body})
    problems = readable_problems(refused.value.errors())
    assert len(problems) == 11 and problems[-1] == "and 39990 more"
    assert not any("SECRET" in p for p in problems)


class _Sessions:
    """A stand-in for the pool: a table of session tenants and a count of reads."""

    def __init__(self, rows: dict[uuid.UUID, str]) -> None:
        self.rows = rows
        self.reads = 0

    async def fetchval(self, query: str, sid: uuid.UUID) -> str | None:
        self.reads += 1
        return self.rows.get(sid)


async def test_session_tenants_come_from_the_record_and_only_found_ones_are_kept():
    """Owners are read once and remembered (at most `size` of them); an unknown session is
    asked again every time, since its row may appear; a non-UUID never reaches the table."""
    a, b, c = (uuid.uuid4() for _ in range(3))
    table = _Sessions({a: "acme", b: "acme"})
    tenants = SessionTenants(table, size=1)  # type: ignore[arg-type]
    assert await tenants.owns("acme", str(a)) and await tenants.owns("acme", str(a))
    assert table.reads == 1
    assert not await tenants.owns("other", str(a))  # the remembered owner, not the caller
    assert not await tenants.owns("acme", str(c)) and not await tenants.owns("acme", str(c))
    assert table.reads == 3
    table.rows[c] = "acme"
    assert await tenants.owns("acme", str(c))  # now it exists
    assert await tenants.owns("acme", str(b)) and await tenants.owns("acme", str(a))
    assert table.reads == 6  # size 1: b pushed a out
    assert not await tenants.owns("acme", "../../etc") and table.reads == 6


@pytest.mark.parametrize(
    "url",
    [
        "http://[/",
        "http://a]b/",
        "http://:80/",
        "http://@/",
        "http://%00/",
        "http://[1:2:3:4:5:6:7:8:9]/",
        "http://a.com:99999999/",
        "http://./",
        "http://[::1]x/",
        "http://[::1]garbage:80/",
        "http://-/",
        "http://_/",
        "http://a..b/",
        "http://.a/",
        "http://999.999.999.999/",
    ],
)
def test_an_address_whose_host_or_port_cannot_be_read_is_refused(url):
    with pytest.raises(ValidationError) as refused:
        AnalyzeRequest(url=url, input_type="url")
    assert "url" in str(refused.value)


@pytest.mark.parametrize(
    "url",
    [
        "HTTP://EXAMPLE.COM/",
        "https://www.example.com/a?b=c#d",
        "http://[::1]/",
        "http://127.0.0.1:8080/x",
        "https://bücher.de/",
        "http://user:pw@host.com/",
        "https://my_site.example.org/",
        "https://इंडिया.भारत/",  # combining marks in an IDN
        "https://சிங்கப்பூர்.sg/",
        "https://www.example。com/",  # the ideographic full stop IDNA reads as a dot
        "https://example.com./",
        "http://[fe80::1%25eth0]/",
        "http://u:p@[::1]:80/",
    ],
)
def test_web_addresses_of_every_ordinary_shape_are_accepted(url):
    assert AnalyzeRequest(url=url, input_type="url").url == url
