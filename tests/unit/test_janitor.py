"""The aggregator's janitor survives any failing pass: logged, counted, backed off."""

import asyncio

import structlog
from prometheus_client import REGISTRY

from aggregator import applier
from aggregator.applier import Applier, Storage, janitor_delay_s
from aggregator.explanation import explain
from shared.settings import Settings
from shared.urgency import gate_for


def aggregator(interval_s: float) -> Applier:
    settings = Settings(
        amqp_url="amqp://unused",
        redis_url="redis://unused",
        database_url="postgresql://unused",
        janitor_interval_s=interval_s,
    )
    storage = Storage(None, None, None, None)  # type: ignore[arg-type]  # the fake needs none
    return Applier(settings, storage, gate_for(settings), explain, b"parking-key")


def janitor_errors() -> float:
    return REGISTRY.get_sample_value("verdict_janitor_errors_total") or 0.0


async def test_a_failing_janitor_pass_is_logged_counted_and_the_loop_goes_on(monkeypatch):
    """Two passes raise an unexpected error: both are logged with their traceback and
    counted, and the third pass still runs; only the stop ends the loop."""
    passes: list[int] = []
    third = asyncio.Event()

    async def finalize_overdue(pool, weights, explain, review):
        passes.append(len(passes) + 1)
        if len(passes) <= 2:
            raise RuntimeError("bug in a finalize pass")
        third.set()
        return []

    monkeypatch.setattr(applier, "finalize_overdue", finalize_overdue)
    before = janitor_errors()
    stop = asyncio.Event()
    with structlog.testing.capture_logs() as logs:
        janitor = asyncio.create_task(aggregator(0.01).janitor(stop))
        third_pass = asyncio.create_task(third.wait())
        await asyncio.wait({janitor, third_pass}, timeout=10, return_when=asyncio.FIRST_COMPLETED)
        assert third_pass.done() and not janitor.done()
        stop.set()
        await asyncio.wait_for(janitor, 10)
    failed = [e for e in logs if e["event"] == "janitor pass failed"]
    assert [e["failures"] for e in failed] == [1, 2]
    assert all(e["exc_info"] for e in failed) and janitor_errors() - before == 2


def test_the_janitor_backs_off_while_failures_persist_and_resets_after_a_good_pass():
    """The wait doubles per failure in a row, up to a minute; no failure: the interval."""
    assert janitor_delay_s(5.0, 0) == 5.0
    assert [janitor_delay_s(5.0, n) for n in (1, 2, 3)] == [10.0, 20.0, 40.0]
    assert janitor_delay_s(5.0, 10_000) == 60.0
    assert janitor_delay_s(120.0, 3) == 120.0


async def test_the_aggregator_keeps_partitions_ahead_and_retries_after_a_failure(monkeypatch):
    """The partition keeper asks for PARTITION_DAYS_AHEAD days; a failed call (a lock not
    granted in time) is logged and tried again after PARTITION_RETRY_S, not an hour later."""
    calls: list[int] = []
    second = asyncio.Event()

    async def make_ahead(pool, days_ahead):
        calls.append(days_ahead)
        if len(calls) == 1:
            raise RuntimeError("lock timeout")
        second.set()
        return 4

    monkeypatch.setattr(applier, "make_ahead", make_ahead)
    monkeypatch.setattr(applier, "PARTITION_RETRY_S", 0.01)
    keeper = aggregator(5.0)
    stop = asyncio.Event()
    with structlog.testing.capture_logs() as logs:
        task = asyncio.create_task(keeper.keep_partitions_ahead(stop))
        await asyncio.wait_for(second.wait(), 10)
        stop.set()
        await asyncio.wait_for(task, 10)
    assert calls == [keeper.settings.partition_days_ahead] * 2
    assert [e["event"] for e in logs] == ["making day partitions failed", "day partitions created"]
