"""The console's pure parts: cookie signing and expiry, CSRF tokens, the search form, the
timeline, the overview's series and charts."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from dispatcher.console.cookies import SessionCookies
from dispatcher.console.dead_letters import letter_filter
from dispatcher.console.overview import minute_series, rates_by_queue, sparkline
from dispatcher.console.search import SearchRefused, session_query
from dispatcher.console.timeline import timeline
from shared.attempts import Attempt

KEY = "k" * 40


def test_a_cookie_reads_back_as_the_session_it_was_issued_for():
    """The key hash survives the round trip; a fresh nonce each time."""
    cookies = SessionCookies(KEY, 60)
    first, value = cookies.issue("sha256:abc")
    second, _ = cookies.issue("sha256:abc")
    assert cookies.read(value) == first
    assert first.nonce != second.nonce


def test_a_cookie_signed_with_another_key_or_altered_is_not_read():
    """Forged, altered, foreign-key or empty cookies give no session."""
    cookies = SessionCookies(KEY, 60)
    _, value = cookies.issue("sha256:abc")
    assert SessionCookies("x" * 40, 60).read(value) is None
    assert cookies.read(value[:-2] + ("AA" if value[-2:] != "AA" else "BB")) is None
    assert cookies.read("") is None
    assert cookies.read(None) is None


def test_a_cookie_expires_after_its_ttl():
    """Within the TTL it reads; one second past it, it does not."""
    cookies = SessionCookies(KEY, 60)
    session, value = cookies.issue("sha256:abc")
    assert cookies.read(value, now=time.time() + 59) == session
    assert cookies.read(value, now=time.time() + 61) is None


def test_a_csrf_token_belongs_to_one_session_and_one_key():
    """The session's own token passes; another session's, another key's, or none fail."""
    cookies = SessionCookies(KEY, 60)
    mine, _ = cookies.issue("sha256:abc")
    other, _ = cookies.issue("sha256:abc")
    token = cookies.csrf_token(mine)
    assert cookies.csrf_valid(mine, token)
    assert not cookies.csrf_valid(mine, cookies.csrf_token(other))
    assert not cookies.csrf_valid(mine, SessionCookies("x" * 40, 60).csrf_token(mine))
    assert not cookies.csrf_valid(mine, None)
    assert not cookies.csrf_valid(mine, "")


def test_times_are_compared_in_utc():
    """A time with a zone is read as the same instant in UTC; the calendar's edges still
    work when the zone keeps them inside it."""
    query = session_query({"since": "2026-11-30T14:00+02:00", "until": "9999-12-31T23:59:59"})
    assert query.since == datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    assert query.since is not None and query.since.utcoffset() == timedelta(0)
    assert query.until == datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)


@pytest.mark.parametrize(
    ("form", "message"),
    [
        ({"older_than_min": "nan"}, "must be a number of minutes"),
        ({"younger_than_min": "inf"}, "must be a number of minutes"),
        ({"older_than_min": "-1"}, "cannot be negative"),
        ({"reason": "a\x00"}, "reason contains the control character U\\+0000"),
        ({"tenant": "\x7f"}, "tenant contains the control character U\\+007F"),
    ],
)
def test_a_dead_letter_filter_that_cannot_be_used_is_explained(form, message):
    """Not-a-number, infinite or negative ages and control characters are refused in words."""
    with pytest.raises(SearchRefused, match=message):
        letter_filter(form)


def test_the_search_form_reads_into_a_query():
    """Blank fields stay open; a time without a zone is UTC."""
    sid = uuid.uuid4()
    query = session_query(
        {"session_id": str(sid), "tenant": " a ", "status": "", "since": "2026-11-30T14:00"}
    )
    assert query.session_id == sid
    assert query.tenant == "a"
    assert query.status is None
    assert query.since == datetime(2026, 11, 30, 14, 0, tzinfo=UTC)
    assert query.until is None


@pytest.mark.parametrize(
    ("form", "message"),
    [
        ({"status": "sleeping"}, "status must be one of"),
        ({"session_id": "abc"}, "is not a UUID"),
        ({"until": "tomorrow"}, "is not a time"),
        ({"tenant": "a\x00b"}, "tenant contains the control character U\\+0000"),
        ({"label": "\x00"}, "label contains the control character"),
        ({"session_id": "\x1b[2J"}, "session id contains the control character U\\+001B"),
        ({"since": "0001-01-01T00:00:00+14:00"}, "out of range once in UTC"),
        ({"until": "9999-12-31T23:59:59-14:00"}, "out of range once in UTC"),
    ],
)
def test_a_search_field_that_cannot_be_used_is_explained(form, message):
    """Each unusable field is refused with a message that names it."""
    with pytest.raises(SearchRefused, match=message):
        session_query(form)


T0 = datetime(2026, 11, 30, 14, 0, tzinfo=UTC)


def test_the_timeline_runs_from_acceptance_to_final():
    """Accepted, each run's start (result time less processing time), retries counted, the
    verdict and the final status, in time order."""
    record = {
        "created_at": T0,
        "input_type": "text",
        "plan": 3,
        "mode": "async",
        "components": ["claims", "domain"],
        "status": "completed",
        "finished_at": T0 + timedelta(seconds=5),
        "verdict": {"label": "unlikely", "created_at": T0 + timedelta(seconds=5)},
        "results": [
            {
                "component": "domain",
                "attempt": 1,
                "status": "ok",
                "score": 10.0,
                "processing_ms": 500,
                "worker_id": "w1",
                "recorded_at": T0 + timedelta(seconds=1),
            },
            {
                "component": "claims",
                "attempt": 3,
                "status": "ok",
                "score": 20.0,
                "processing_ms": 1000,
                "worker_id": None,
                "recorded_at": T0 + timedelta(seconds=4),
            },
        ],
    }
    moments = [(m.at - T0).total_seconds() for m in timeline(record)]
    whats = [(m.component, m.what) for m in timeline(record)]
    assert moments == sorted(moments)
    assert whats == [
        (None, "accepted: text on plan 3 (async), components claims, domain"),
        ("domain", "attempt 1 started on w1"),
        ("domain", "finished: ok, score 10.0"),
        ("claims", "attempt 3 started"),
        ("claims", "retried 2 times before this attempt"),
        ("claims", "finished: ok, score 20.0"),
        (None, "verdict reached: unlikely"),
        (None, "final: completed"),
    ]


def test_recorded_attempts_time_every_run_of_a_retried_task():
    """With the workers' attempts, each run's start and a retry's end are shown as recorded;
    an attempt without a result yet (still running) shows too."""
    t = T0.timestamp()
    record = {
        "created_at": T0,
        "input_type": "text",
        "plan": 1,
        "mode": "async",
        "components": ["claims", "domain"],
        "status": "processing",
        "finished_at": None,
        "verdict": None,
        "results": [
            {
                "component": "claims",
                "attempt": 2,
                "status": "ok",
                "score": None,
                "processing_ms": 100,
                "worker_id": "w2",
                "recorded_at": T0 + timedelta(seconds=3),
            }
        ],
    }
    tried = {
        "claims": [
            Attempt(1, "w1", t + 0.5, t + 1.0, "retry", "next attempt in 1000 ms"),
            Attempt(2, "w2", t + 2.0, t + 2.9, "ok"),
        ],
        "domain": [Attempt(1, "w3", t + 2.5, t + 2.6, "dead_letter", "poison")],
    }
    whats = [(m.component, m.what) for m in timeline(record, tried)]
    assert whats == [
        (None, "accepted: text on plan 1 (async), components claims, domain"),
        ("claims", "attempt 1 started on w1"),
        ("claims", "attempt 1 retried: next attempt in 1000 ms"),
        ("claims", "attempt 2 started on w2"),
        ("domain", "attempt 1 started on w3"),
        ("domain", "attempt 1 dead-lettered: poison"),
        ("claims", "finished: ok"),
    ]


def test_minute_series_puts_each_row_in_its_minute_of_the_last_hour():
    """Oldest first, ending at now's minute; rows outside the hour or another series are
    left out; empty minutes are 0."""
    now = T0 + timedelta(seconds=30)
    rows = [
        {"minute": T0, "status": "completed", "n": 4},
        {"minute": T0 - timedelta(minutes=2), "status": "completed", "n": 1},
        {"minute": T0, "status": "failed", "n": 9},
        {"minute": T0 - timedelta(minutes=60), "status": "completed", "n": 7},
    ]
    series = minute_series(rows, now, lambda r: r["n"] if r["status"] == "completed" else None)
    assert len(series) == 60
    assert series[-1] == 4
    assert series[-3] == 1
    assert sum(series) == 5


def test_rates_come_from_the_management_apis_message_stats():
    """Publish, deliver and ack rates by queue; a queue without stats has zeros."""
    rates = rates_by_queue(
        [
            {"name": "q1", "message_stats": {"publish_details": {"rate": 2.5}, "ack": 3}},
            {"name": "q2"},
        ]
    )
    assert rates == {
        "q1": {"publish": 2.5, "deliver_get": 0.0, "ack": 0.0},
        "q2": {"publish": 0.0, "deliver_get": 0.0, "ack": 0.0},
    }


def test_a_sparkline_puts_the_largest_value_at_the_top():
    """Points left to right; the maximum at y=0, zero at the bottom; nothing for no values."""
    points = sparkline([0, 5, 10], width=100, height=20).split()
    assert points == ["0.0,20.0", "50.0,10.0", "100.0,0.0"]
    assert sparkline([0, 0], width=10, height=4).split() == ["0.0,4.0", "10.0,4.0"]
    assert sparkline([]) == ""
