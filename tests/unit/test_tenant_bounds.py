"""Hostile tenant settings: every setting is bounded, so the signed `tenant` field of a task
stays small enough for the broker's limits, and extra terms are words matched literally."""

import re
import time

import pytest
from annotated_types import Le

from shared.broker import task_message
from shared.constants import TENANT_HEADER
from shared.deadletters import oversize
from shared.errors import TenantSettingsError
from shared.messages import MAX_MESSAGE_BYTES, Task, TaskInput
from shared.settings import Settings
from shared.signing import private_task_key, sign_task
from shared.tenant_settings import (
    MAX_BRANDS,
    MAX_HOSTS,
    MAX_TERM_CHARS,
    MAX_TERMS,
    MAX_TUNING_BYTES,
    TenantSettings,
    tuning_bytes,
    tuning_of,
    validated,
    with_changes,
)
from tests.unit.test_signing import MEDIA_PRIVATE, PRIVATE
from workers.analysis.techniques import (
    TechniqueReport,
    default_lexicon,
    with_tenant_terms,
)
from workers.executors.media_preprocess import follow_up

SID = "0b7c6a52-3f5e-4c1e-9d7e-2f1a8b9c0d11"
# A letter of four bytes in UTF-8 (DESERET CAPITAL LETTER LONG I): the costliest a term,
# a content or a URL can be per character.
WIDE = "\U00010400"


def _hosts(n: int, length: int = 12) -> list[str]:
    return [f"{'h' * (length - 12)}h{i:06d}.example"[-length:] for i in range(n)]


@pytest.mark.parametrize(
    ("changes", "says"),
    [
        ({"lexicon_terms": {"fear_appeal": ["(a+)+$"]}}, "a term is words of letters and digits"),
        ({"lexicon_terms": {"fear_appeal": ["a\x00b"]}}, "a term is words"),
        ({"lexicon_terms": {"fear_appeal": ["two  spaces"]}}, "a term is words"),
        ({"lexicon_terms": {"fear_appeal": ["<b>boo</b>"]}}, "a term is words"),
        ({"lexicon_terms": {"fear_appeal": [1, 2]}}, "terms are a list of words"),
        (
            {"lexicon_terms": {"fear_appeal": [f"w{i}" for i in range(MAX_TERMS + 1)]}},
            f"at most {MAX_TERMS} terms",
        ),
        ({"protected_brands": _hosts(MAX_BRANDS + 1)}, f"at most {MAX_BRANDS} host names"),
        ({"blocked_hosts": _hosts(MAX_HOSTS + 1)}, f"at most {MAX_HOSTS} host names"),
        ({"blocked_hosts": ["a" * 64 + ".example"]}, "is not a host name"),
        ({"blocked_hosts": [".".join(["a" * 63] * 4) + ".ro"]}, "is not a host name"),
        ({"blocked_hosts": ["ev(il)+.example"]}, "is not a host name"),
        ({"protected_brands": ["ab.ro"]}, "a brand's name (before the first dot) needs 3"),
        ({"protected_brands": ["www.a-b.ro"]}, "'a-b.ro': a brand's name"),
        ({"blocked_hosts": [{"host": "x.ro"}]}, "a list of host names"),
        ({"rate_limit": "0/second"}, "a window allows from 1 to"),
        ({"rate_limit": "99999999/second"}, "a window allows from 1 to"),
        ({"rate_limit": "5/year"}, "a window is at most a day long"),
        ({"rate_limit": ";".join(["1/second"] * 5)}, "at most 4 windows"),
        ({"read_rate_limit": "1/second" * 40}, "at most 200 characters"),
        ({"verdict_weights": {"claims": -1}}, "weights are numbers from 0 to 10"),
        ({"verdict_weights": {"claims": float("nan")}}, "weights are numbers from 0 to 10"),
        ({"verdict_weights": {"claims": float("inf")}}, "weights are numbers from 0 to 10"),
        ({"components": "techniques,media_preprocess"}, "components.1"),
        (
            {"blocked_hosts": _hosts(MAX_HOSTS, 60)},
            f"bytes in each task; at most {MAX_TUNING_BYTES}: list fewer or shorter ones",
        ),
    ],
)
def test_each_setting_is_bounded_and_a_breach_is_refused_in_words(changes, says):
    """Terms, brands, hosts, rate limits, weights and components each have a bound; past it
    the change is refused with the rule it breaks (nothing is clipped silently)."""
    with pytest.raises(TenantSettingsError, match=re.escape(says)):
        with_changes({}, changes)


def test_a_refusal_repeats_a_long_value_only_in_part():
    """A megabyte of junk is refused with a message of a line, not the junk echoed back."""
    with pytest.raises(TenantSettingsError) as refused:
        with_changes({}, {"blocked_hosts": ["x" * 1_000_000]})
    assert len(str(refused.value)) < 200


def test_a_protected_brand_is_kept_without_its_www():
    """`www.acmebank.ro` protects `acmebank.ro`: lookalikes imitate the name, not `www`."""
    settings = with_changes({}, {"protected_brands": "www.acmebank.ro,acmebank.ro,acme.com"})
    assert settings.protected_brands == ("acmebank.ro", "acme.com")


def test_words_of_any_script_are_terms():
    """Romanian, Cyrillic and hyphenated or dotted words are accepted, as NFC."""
    decomposed = "s\u0326arlatani"  # s + combining comma below: "șarlatani" once composed
    settings = with_changes(
        {},
        {"lexicon_terms": {"fear_appeal": [decomposed, "plandemie", "био-оружие", "dr. x"]}},
    )
    assert settings.lexicon_terms == {
        "fear_appeal": ("\u0219arlatani", "plandemie", "био-оружие", "dr. x")
    }


def _largest_settings() -> TenantSettings:
    """Settings as large as validation lets through: every component, terms of four-byte
    letters at full length, then blocked hosts of full length up to the byte budget."""
    terms = [WIDE * (MAX_TERM_CHARS - 3) + f"{i:03d}" for i in range(MAX_TERMS)]
    document: dict = {"lexicon_terms": {"fear_appeal": []}, "blocked_hosts": []}
    for term in terms:
        document["lexicon_terms"]["fear_appeal"].append(term)
        if tuning_bytes(TenantSettings.model_construct(**_as_tuples(document))) > MAX_TUNING_BYTES:
            document["lexicon_terms"]["fear_appeal"].pop()
            break
    for host in _hosts(MAX_HOSTS, 40):
        document["blocked_hosts"].append(host)
        if tuning_bytes(TenantSettings.model_construct(**_as_tuples(document))) > MAX_TUNING_BYTES:
            document["blocked_hosts"].pop()
            break
    return validated(document)


def _as_tuples(document: dict) -> dict:
    return {
        "lexicon_terms": {k: tuple(v) for k, v in document["lexicon_terms"].items()},
        "blocked_hosts": tuple(document["blocked_hosts"]),
    }


def _ceiling(field: str) -> int:
    """The largest value a setting may take (its `le` bound)."""
    return next(m.le for m in Settings.model_fields[field].metadata if isinstance(m, Le))


def test_the_largest_settings_fit_a_worst_case_follow_up_task_under_the_broker_limits():
    """The tenant field at its byte budget, carried twice by a follow-up task (its own and
    its media task's) with the most content a deployment may allow in four-byte letters, a
    URL of full length and a media path of full length, signed: the message the worker
    receives is within MAX_MESSAGE_BYTES and the header bound, so no tenant can make its
    tasks oversize poison."""
    largest = _largest_settings()
    size = tuning_bytes(largest)
    assert MAX_TUNING_BYTES - 300 < size <= MAX_TUNING_BYTES  # really at the bound
    media = sign_task(
        private_task_key(PRIVATE),
        Task(
            session_id=SID,
            component="media_preprocess",
            plan_type=6,
            priority=10,
            input=TaskInput(
                content=None,
                url="https://" + WIDE * (Settings.model_fields["max_url_chars"].default - 8),
                mediaPath="t/" + "p" * 1022,
                inputType="audio",
            ),
            timestamp=1,
            tenant=tuning_of(largest, 2**63 - 1),
        ),
    )
    max_chars = _ceiling("max_content_chars")
    task = follow_up(media, "techniques", WIDE * max_chars, max_chars)
    task = sign_task(private_task_key(MEDIA_PRIVATE), task.model_copy(update={"retry_count": 9}))
    message = task_message(task, 99, {TENANT_HEADER: "t" * 128})
    assert len(message.body) > 1_000_000 + 2 * size  # the worst case, measured
    header_bound = Settings.model_fields["max_header_bytes"].default
    assert oversize(message.body, message.headers, MAX_MESSAGE_BYTES, header_bound) is None
    # The settings travel in the body: the headers are the same with or without them.
    bare = task_message(task.model_copy(update={"tenant": None}), 99, {TENANT_HEADER: "t" * 128})
    assert message.headers == bare.headers


def test_a_term_is_matched_literally_and_a_pattern_in_it_costs_nothing():
    """A term written as a catastrophic pattern matches only its own characters: over a 100 kB
    text built to make `(a+)+$` backtrack, it finds nothing and takes a moment."""
    default_lexicon()  # loaded once per process, not part of what is measured
    text = "a" * 99_999 + "!"
    empty = TechniqueReport(0.0, (), {})
    started = time.perf_counter()
    found = with_tenant_terms(text, empty, {"fear_appeal": ("(a+)+$", "a*", ".*")})
    assert found.findings == ()
    literal = with_tenant_terms("it is (a+)+$ here", empty, {"fear_appeal": ("(a+)+$",)})
    assert [f.text for f in literal.findings] == ["(a+)+$"]
    assert time.perf_counter() - started < 5  # a backtracking match would take hours


def test_terms_that_occur_everywhere_give_a_bounded_number_of_findings():
    """200 terms that each occur thousands of times in a 100 kB text: each counts its first
    20 occurrences (MAX_TERM_FINDINGS), so the report stays small (and quick to build)."""
    default_lexicon()
    text = "a " * 50_000
    terms = tuple(" ".join(["a"] * k) for k in range(1, MAX_TERMS + 1))
    empty = TechniqueReport(0.0, (), {})
    found = with_tenant_terms(text, empty, {"fear_appeal": terms})
    assert 0 < len(found.findings) <= MAX_TERMS * 20
    assert found.score > 0
