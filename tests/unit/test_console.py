"""The console's pure parts: cookie signing and expiry, CSRF tokens, the search form, the
timeline, the overview's series and charts, the queue history behind them."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from dispatcher.console.cookies import SessionCookies
from dispatcher.console.dead_letters import letter_filter
from dispatcher.console.overview import minute_series, queue_rows, sparkline
from dispatcher.console.search import SearchRefused, session_query
from dispatcher.console.timeline import timeline
from dispatcher.queue_figures import rates_by_queue
from dispatcher.queue_watch import (
    FIGURES,
    Figures,
    QueueHistory,
    QueueReading,
    Rates,
    peaks,
    with_figures,
)
from shared.attempts import Attempt
from shared.constants import PLANS, QUEUE_COMPONENTS
from shared.names import Names

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
    assert rates == {"q1": Rates(2.5, 0.0, 0.0), "q2": Rates(0.0, 0.0, 0.0)}


def test_a_sparkline_puts_the_largest_value_at_the_top():
    """Points left to right; the maximum at y=0, zero at the bottom; nothing for no values."""
    points = sparkline([0, 5, 10], width=100, height=20).split()
    assert points == ["0.0,20.0", "50.0,10.0", "100.0,0.0"]
    assert sparkline([0, 0], width=10, height=4).split() == ["0.0,4.0", "10.0,4.0"]
    assert sparkline([]) == ""


def test_a_tick_adds_each_queues_oldest_open_task_and_rates_to_its_declare():
    """Queues the figures know get their age and rates; others keep None for both; without
    figures (none read) the readings are as declared."""
    declared = {"q1": QueueReading(3, 2), "q2": QueueReading(0, 1)}
    figures = Figures(oldest_s={"q1": 42.0}, rates={"q1": Rates(1.0, 2.0, 3.0)}, read_at=100.0)
    assert with_figures(declared, figures, now=100.0) == {
        "q1": QueueReading(3, 2, 42.0, Rates(1.0, 2.0, 3.0)),
        "q2": QueueReading(0, 1, None, None),
    }
    assert with_figures(declared, None) == declared


def test_an_age_carried_onto_a_later_tick_has_grown_by_the_time_since_it_was_read():
    """Figures are read every FIGURES_EVERY_S; the ticks between show the oldest open task
    older by the time since, not frozen at the age read."""
    figures = Figures(oldest_s={"q1": 42.0}, read_at=100.0)
    later = with_figures({"q1": QueueReading(3, 2)}, figures, now=130.0)
    assert later["q1"].oldest_s == 72.0


def test_the_history_charts_every_figure_of_a_queue_over_its_readings():
    """Depth, consumers, oldest open task (0 while none is open) and each rate, oldest first;
    readings without rates (the management API away) are left out of the rates' charts."""
    history = QueueHistory()
    history.add({"q": QueueReading(5, 2, 30.0, Rates(1.0, 0.5, 0.25))}, at=1)
    history.add({"q": QueueReading(7, 1, None, None)}, at=2, rates_problem="away")
    history.add({"q": QueueReading(0, 2, 90.0, Rates(4.0, 3.0, 2.0)), "other": QueueReading(9, 9)})
    assert [history.series("q", f) for f in FIGURES] == [
        [5.0, 7.0, 0.0],
        [2.0, 1.0, 2.0],
        [30.0, 0.0, 90.0],
        [1.0, 4.0],
        [0.5, 3.0],
        [0.25, 2.0],
    ]
    assert history.series("missing", "ready") == []
    assert history.rates_problem is None  # the newest tick had its rates


def test_the_history_keeps_an_hour_of_ticks_and_charts_at_most_a_point_per_span():
    """Memory stays bounded: the oldest tick goes once an hour of them is kept; a chart of
    the hour has CHART_POINTS points, each the largest of its span, so a spike still shows."""
    history = QueueHistory(keep_s=3600, every_s=5)
    for n in range(2000):
        history.add({"q": QueueReading(1000 if n == 1990 else 0, 1)}, at=n)
    assert len(history.readings) == 721
    chart = history.series("q", "ready", points=120)
    assert len(chart) == 120 and max(chart) == 1000 and chart[0] == 0


def test_peaks_keep_the_largest_of_each_span_and_short_series_whole():
    """Equal spans, oldest first; no more values than points: as they are."""
    assert peaks([1, 5, 2, 2, 9, 0], points=3) == [5, 2, 9]
    assert peaks([3, 1], points=5) == [3, 1]
    assert peaks([], points=5) == []


@pytest.mark.parametrize("length", [121, 123, 245, 246, 247, 490, 721])
def test_peaks_always_keep_the_newest_reading(length: int) -> None:
    """A spike in the newest reading is drawn whatever the series' length."""
    values = [0.0] * (length - 1) + [99.0]
    drawn = peaks(values, points=120)
    assert len(drawn) == 120 and drawn[-1] == 99.0


def test_the_overview_has_a_row_with_every_chart_for_each_component_and_plan():
    """Every component × plan queue, its newest reading, and a chart of each FIGURE; before
    the first tick the numbers are None and the charts empty."""
    names = Names("t")
    history = QueueHistory()
    queue = names.task_queue("claims", 6)
    history.add({queue: QueueReading(4, 2, 12.0, Rates(1.0, 1.0, 1.0))})
    rows = queue_rows(history, names)
    assert len(rows) == len(QUEUE_COMPONENTS) * len(PLANS)
    row = next(r for r in rows if r.queue == queue)
    assert (row.ready, row.consumers, row.oldest_s, row.rates) == (4, 2, 12.0, Rates(1, 1, 1))
    assert set(row.charts) == set(FIGURES) and row.charts["oldest_s"] == [12.0]
    empty = next(r for r in rows if r.queue != queue)
    assert empty.ready is None and all(chart == [] for chart in empty.charts.values())
