"""Media paths resolve under media_root and never escape it; LLM replies parse or are refused."""

from pathlib import Path

import pytest
from pydantic import ValidationError

from shared.errors import MediaUnavailable
from shared.llm import ExplanationReply, TechniquesReply, parse_reply, without_fence
from workers.analysis.errors import MediaPathRefused, UnreadableMedia
from workers.analysis.media import resolve_media_path


def test_relative_paths_resolve_under_the_media_root(tmp_path: Path) -> None:
    """A relative mediaPath names a file inside media_root."""
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "clip.mp3").write_bytes(b"x")
    assert resolve_media_path(str(tmp_path), "a/clip.mp3") == tmp_path / "a" / "clip.mp3"


@pytest.mark.parametrize("escape", ["../secret.txt", "/etc/passwd", "a/../../secret.txt"])
def test_paths_escaping_the_media_root_are_refused(tmp_path: Path, escape: str) -> None:
    """Dot-dot and absolute paths outside media_root are refused as MediaUnavailable."""
    root = tmp_path / "media"
    root.mkdir()
    (tmp_path / "secret.txt").write_text("s")
    with pytest.raises(MediaPathRefused) as caught:
        resolve_media_path(str(root), escape)
    assert isinstance(caught.value, MediaUnavailable)
    assert not caught.value.retryable


def test_a_link_into_another_tenants_folder_is_refused(tmp_path: Path) -> None:
    """`<tenant>/<path>` must stay in that tenant's folder: a symlink there that leads into
    another tenant's folder is refused, though it stays inside media_root."""
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "secret.png").write_bytes(b"x")
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "link.png").symlink_to(tmp_path / "b" / "secret.png")
    with pytest.raises(MediaPathRefused):
        resolve_media_path(str(tmp_path), "a/link.png")
    assert resolve_media_path(str(tmp_path), "b/secret.png") == tmp_path / "b" / "secret.png"


def test_missing_root_path_or_file_are_clear_errors(tmp_path: Path) -> None:
    """No media_root, no mediaPath, or a missing file each fail with the reason."""
    with pytest.raises(MediaPathRefused, match="media_root is not configured"):
        resolve_media_path(None, "x.mp3")
    with pytest.raises(MediaPathRefused, match="names no media file"):
        resolve_media_path(str(tmp_path), None)
    with pytest.raises(UnreadableMedia, match="does not exist"):
        resolve_media_path(str(tmp_path), "nope.mp3")


def test_llm_replies_parse_with_code_fences() -> None:
    """A reply wrapped in a ```json fence still parses."""
    reply = parse_reply(
        '```json\n{"findings": [{"technique": "x", "quote": "ab"}]}\n```', TechniquesReply
    )
    assert reply.findings[0].quote == "ab"


@pytest.mark.parametrize(
    "reply",
    [
        '```json\n{"a": 1}\n```',
        '  ```\n{"a": 1}```  \n',
        '{"a": 1}\n```',
        '{"a": 1}',
    ],
)
def test_llm_fences_are_removed_around_the_json_only(reply: str) -> None:
    """Opening and closing fences (with or without "json") and the space around them go."""
    assert without_fence(reply) == '{"a": 1}'


def test_llm_reply_whitespace_inside_the_json_is_kept() -> None:
    """Whitespace runs inside the reply are the model's, not a fence's: they stay."""
    assert (
        without_fence('```json\n{"a":' + " " * 50_000 + "1}\n```") == '{"a":' + " " * 50_000 + "1}"
    )


def test_llm_replies_off_schema_are_rejected() -> None:
    """Missing fields or too-short texts fail validation, so the heuristic result stands."""
    with pytest.raises(ValidationError):
        parse_reply('{"en": "too short"}', ExplanationReply)
    with pytest.raises(ValidationError):
        parse_reply("not json", TechniquesReply)
