"""Admission's limit follows the pipeline's pace: the sessions finished per second, measured
over windows in which the limit held a request back, times the latency aimed for."""

import asyncio
import time

import pytest
from prometheus_client import REGISTRY
from pydantic import ValidationError

from dispatcher import admission as module
from dispatcher.admission import MIN_LIMIT, Admission, Window, paced_limit, smoothed
from shared.settings import Settings


def test_the_limit_is_the_pace_times_the_target_within_its_floor_and_ceiling():
    assert paced_limit(80.0, 0.5, 64) == 40
    assert paced_limit(200.0, 0.5, 64) == 64  # never above ADMISSION_LIMIT
    assert paced_limit(0.0, 0.5, 64) == MIN_LIMIT  # a stalled pipeline keeps a trickle
    assert paced_limit(0.0, 0.5, 4) == 4  # a ceiling below the floor is the floor


def test_the_limit_never_falls_as_the_pace_rises():
    limits = [paced_limit(pace / 2, 0.5, 64) for pace in range(0, 400)]
    assert limits == sorted(limits)


def test_a_window_measures_sessions_finished_per_second():
    window = Window(began=10.0, since_ms=0, processing=30, held_back=True)
    # 30 processing at the start, 50 created since, 20 processing now: 60 finished in 2 s.
    assert window.finished_per_s(12.0, processing=20, created=50) == 30.0
    # More processing than could be (a session created before the window, recorded after
    # its first reading): no negative pace.
    assert window.finished_per_s(12.0, processing=90, created=50) == 0.0


def test_a_window_in_which_nobody_waited_says_nothing_of_the_pace():
    """Then it measured what clients asked for, not what the pipeline can do."""
    window = Window(began=10.0, since_ms=0, processing=5)
    assert window.finished_per_s(11.0, processing=5, created=3) is None


def test_a_window_that_ran_long_without_a_reading_is_not_measured():
    window = Window(began=10.0, since_ms=0, processing=5, held_back=True)
    assert window.finished_per_s(10.0 + module.PACE_STALE_S + 1, 0, 100) is None
    assert window.finished_per_s(10.0, 0, 100) is None  # no time passed


def test_the_pace_moves_toward_each_measure():
    assert smoothed(None, 80.0) == 80.0
    assert 40.0 < smoothed(40.0, 80.0) < 80.0


class Pipeline:
    """Sessions processing and created as PostgreSQL would count them, finishing at a fixed
    pace in real time (as many as the pace owes at each tick, so a slow tick loses none)."""

    def __init__(self, pace: float) -> None:
        self.pace = pace
        self.processing = 0
        self.created_ms: list[int] = []
        self.finished = 0

    def record(self) -> None:
        self.processing += 1
        self.created_ms.append(time.time_ns() // 1_000_000)

    async def fetchval(self, _sql: str, limit: int) -> int:
        await asyncio.sleep(0.001)
        return min(self.processing, limit)

    async def fetchrow(self, _sql: str, up_to: int, first_id) -> tuple[int, int]:
        await asyncio.sleep(0.001)
        since_ms = first_id.int >> 80
        return min(self.processing, up_to), sum(ms >= since_ms for ms in self.created_ms)

    async def finishing(self) -> None:
        began = time.monotonic()
        while True:
            owed = int(self.pace * (time.monotonic() - began)) - self.finished
            done = min(owed, self.processing)
            self.processing -= done
            self.finished += done
            await asyncio.sleep(0.005)


async def never_a_replay() -> bool:
    return False


async def saturate(
    gate: Admission, pipeline: Pipeline, seconds: float, clients: int = 8, gap_s: float = 0.0
):
    """`clients` submitting for `seconds`, `gap_s` apart (back to back by default), each
    recording its session once admitted; refusals (503) are retried as a client would."""
    stop_at = time.monotonic() + seconds

    async def client() -> None:
        while time.monotonic() < stop_at:
            try:
                async with gate.slot(6, never_a_replay):
                    pipeline.record()
            except module.AtCapacity:
                pass
            await asyncio.sleep(gap_s)

    finishing = asyncio.create_task(pipeline.finishing())
    try:
        await asyncio.gather(*(client() for _ in range(clients)))
    finally:
        finishing.cancel()


@pytest.fixture
def short_windows(monkeypatch):
    monkeypatch.setattr(module, "PACE_WINDOW_S", 0.2)
    monkeypatch.setattr(module, "PACE_STALE_S", 0.6)


def shown_limit() -> float | None:
    return REGISTRY.get_sample_value("verdict_admission_limit")


async def test_under_load_the_limit_settles_at_the_pace_times_the_target(short_windows):
    """100 sessions finish per second; aiming at 0.2 s, about 20 may be processing, not 64
    (the limit starts at its floor of 10 and rises to it); the metric shows where it is."""
    pipeline = Pipeline(pace=100.0)
    gate = Admission(pipeline, limit=64, wait_s=0.5, recheck_s=0.01, target_s=0.2)  # type: ignore[arg-type]
    assert shown_limit() == MIN_LIMIT
    await saturate(gate, pipeline, seconds=2.0)
    assert gate.pace is not None and 60 <= gate.pace <= 140, gate.pace
    assert 12 <= gate.limit <= 28, gate.limit
    assert shown_limit() == gate.limit
    assert pipeline.processing <= 30


async def test_a_stalled_pipeline_brings_the_limit_to_its_floor_and_the_pace_lifts_it(
    short_windows,
):
    pipeline = Pipeline(pace=0.0)
    gate = Admission(pipeline, limit=64, wait_s=0.1, recheck_s=0.01, target_s=0.5)  # type: ignore[arg-type]
    await saturate(gate, pipeline, seconds=1.0)
    assert gate.limit == MIN_LIMIT
    pipeline.pace = 100.0
    await saturate(gate, pipeline, seconds=1.5)
    assert gate.limit >= 30, gate.limit


async def test_without_a_target_or_without_waiting_the_limit_stays_where_it_was(short_windows):
    fixed = Pipeline(pace=20.0)
    gate = Admission(fixed, limit=64, wait_s=0.1, recheck_s=0.01, target_s=0.0)  # type: ignore[arg-type]
    await saturate(gate, fixed, seconds=1.0)
    assert gate.limit == 64 and gate.pace is None

    unhurried = Pipeline(pace=1000.0)  # finishes far faster than two clients submit
    gate = Admission(unhurried, limit=64, wait_s=0.1, recheck_s=0.01, target_s=0.5)  # type: ignore[arg-type]
    await saturate(gate, unhurried, seconds=1.0, clients=2, gap_s=0.01)
    assert gate.limit == MIN_LIMIT and gate.pace is None  # where a paced limit starts


@pytest.mark.parametrize("target", ["inf", "nan", "-0.5"])
def test_settings_refuse_a_target_that_is_no_latency(target):
    """An infinite target would make the first limit inf × 0, and no API could start."""
    base = {"amqp_url": "amqp://x", "redis_url": "redis://x", "database_url": "postgresql://x"}
    with pytest.raises(ValidationError, match="admission_target_s"):
        Settings(**base, admission_target_s=target)
