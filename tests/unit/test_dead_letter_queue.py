"""Reading dead letters, choosing them and counting replays: the pure part of the DLQ tools."""

from datetime import UTC, datetime

import pytest

from ops.dlq import format_age, parse_age, row
from shared.constants import (
    ATTEMPT_HEADER,
    DEAD_AT_HEADER,
    ORIGIN_HEADER,
    REASON_HEADER,
    REPLAYS_HEADER,
    TENANT_HEADER,
)
from shared.dead_letter_queue import (
    PREVIEW_CHARS,
    DeadLetter,
    LetterFilter,
    describe,
    matches,
    replayed_headers,
)
from shared.names import Names

NAMES = Names("analysis")
NOW = 1_700_000_000.0
OURS = {
    "sessionId": "s-1",
    "component": "claims",
    "planType": 4,
    ATTEMPT_HEADER: 3,
    TENANT_HEADER: "acme",
    REPLAYS_HEADER: 2,
    REASON_HEADER: "gave up after 3 attempts",
    ORIGIN_HEADER: "analysis.claims.4",
    DEAD_AT_HEADER: int((NOW - 600) * 1000),
}
EXPIRED = {
    "x-death": [
        {
            "reason": "expired",
            "queue": "analysis.domain.6",
            "routing-keys": ["analysis.domain.6"],
            "count": 1,
            "time": datetime.fromtimestamp(NOW - 30, UTC),
        }
    ],
    "x-first-death-reason": "expired",
}


def letter_of(headers, body=b'{"x": 1}', priority=6, now=NOW):
    return describe(
        NAMES, body, headers, priority=priority, message_id=None, timestamp=None, now=now
    )


def test_a_letter_we_dead_lettered_says_where_from_why_whose_and_how_often_replayed():
    """Origin, reason, attempt, replays, component, plan, tenant, priority and age come from
    our headers."""
    letter = letter_of(OURS)
    assert (letter.origin, letter.reason, letter.attempt, letter.replays) == (
        "analysis.claims.4",
        "gave up after 3 attempts",
        3,
        2,
    )
    assert (letter.component, letter.plan, letter.tenant, letter.session_id) == (
        "claims",
        4,
        "acme",
        "s-1",
    )
    assert letter.priority == 6 and letter.age_s == pytest.approx(600)


def test_a_letter_the_broker_dead_lettered_is_read_from_x_death():
    """An expired task: origin and component from its routing key, age from x-death's time,
    no replay yet; its headers are shown as JSON-ready values."""
    letter = letter_of(EXPIRED)
    assert (letter.origin, letter.reason) == ("analysis.domain.6", "expired in analysis.domain.6")
    assert (letter.component, letter.plan, letter.replays) == ("domain", 6, 0)
    assert letter.age_s == pytest.approx(30)
    assert isinstance(letter.headers["x-death"][0]["time"], str)


def test_the_id_is_stable_across_listings_and_differs_between_letters():
    """The same letter read twice (later) has the same id; another body or death another."""
    first, later = letter_of(OURS), letter_of(OURS, now=NOW + 3600)
    assert first.id == later.id and len(first.id) == 16
    assert letter_of(OURS, body=b"{}").id != first.id
    assert letter_of({**OURS, DEAD_AT_HEADER: OURS[DEAD_AT_HEADER] + 1}).id != first.id
    assert letter_of(EXPIRED).id != first.id


def test_a_preview_is_bounded_and_never_fails_on_bad_utf8():
    """A megabyte of body previews as PREVIEW_CHARS characters; broken bytes are replaced."""
    letter = letter_of(OURS, body=b"\xff" + b"a" * 1_000_000)
    assert len(letter.preview) == PREVIEW_CHARS and letter.preview[0] == "\ufffd"
    assert letter.size == 1_000_001


@pytest.mark.parametrize(
    ("wanted", "chosen"),
    [
        (LetterFilter(), True),
        (LetterFilter(reason="GAVE UP"), True),
        (LetterFilter(reason="invalid"), False),
        (LetterFilter(component="claims"), True),
        (LetterFilter(component="domain"), False),
        (LetterFilter(tenant="acme"), True),
        (LetterFilter(tenant="other"), False),
        (LetterFilter(min_age_s=300), True),
        (LetterFilter(min_age_s=900), False),
        (LetterFilter(max_age_s=900), True),
        (LetterFilter(max_age_s=300), False),
        (LetterFilter(reason="gave", tenant="other"), False),
    ],
)
def test_a_filter_chooses_a_letter_only_when_every_condition_holds(wanted, chosen):
    """Reason contained (any case), component, tenant, age bounds: all must hold."""
    assert matches(letter_of(OURS), wanted) is chosen


def test_a_filter_by_ids_and_a_letter_of_unknown_age():
    """Ids choose exactly those letters; a letter without a time meets no age condition."""
    letter = letter_of(OURS)
    assert matches(letter, LetterFilter(ids=frozenset({letter.id, "other"})))
    assert not matches(letter, LetterFilter(ids=frozenset({"other"})))
    ageless = letter_of({REASON_HEADER: "poison", ORIGIN_HEADER: "analysis.claims.1"})
    assert ageless.age_s is None
    assert not matches(ageless, LetterFilter(min_age_s=0))
    assert matches(ageless, LetterFilter(reason="poison"))


def test_a_replayed_copy_is_a_first_attempt_with_one_more_replay_and_no_death():
    """What it died of is dropped; attempt back to 1; the count goes up by one; the rest kept."""
    headers = replayed_headers({**OURS, **EXPIRED}, replays=2)
    assert headers == {
        "sessionId": "s-1",
        "component": "claims",
        "planType": 4,
        TENANT_HEADER: "acme",
        ATTEMPT_HEADER: 1,
        REPLAYS_HEADER: 3,
    }


@pytest.mark.parametrize(
    ("text", "seconds"), [("90", 90), ("90s", 90), ("15m", 900), ("2h", 7200), ("1.5d", 129600)]
)
def test_ages_are_typed_with_a_unit(text, seconds):
    """The ages `--older-than` and `--newer-than` take."""
    assert parse_age(text) == seconds


@pytest.mark.parametrize("text", ["", "ten minutes", "5w", "-5m"])
def test_an_age_without_a_known_unit_is_refused_in_words(text):
    """The message names the forms it takes."""
    with pytest.raises(ValueError, match="like 90s, 15m, 2h or 1d"):
        parse_age(text)


def test_a_listed_line_shows_id_age_origin_reason_attempt_and_replays():
    """What `verdict dlq list` prints for a letter."""
    letter: DeadLetter = letter_of(OURS)
    cells = row(letter).split("\t")
    assert cells[:6] == [
        letter.id,
        "10m",
        "analysis.claims.4",
        "gave up after 3 attempts",
        "3",
        "replays=2",
    ]
    assert format_age(None) == "?" and format_age(59) == "59s" and format_age(86_400) == "1d"
