"""One bootstrap for every process (shared.resources): opened in order, closed in reverse,
even when opening stops halfway; and one helper for a task that lives as long as a block
(shared.background.in_background)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from structlog.testing import capture_logs

from shared import resources
from shared.background import in_background
from shared.resources import Resources


class Opened:
    """A fake connection, client or pool recording its close in `events`."""

    def __init__(self, name: str, events: list[str]) -> None:
        self.name, self.events = name, events
        events.append(f"open {name}")

    async def close(self) -> None:
        self.events.append(f"close {self.name}")

    aclose = close


@pytest.fixture
def events(monkeypatch) -> list[str]:
    """Every opener of shared.resources replaced by a recording fake."""
    log: list[str] = []

    async def connect(url: str, name: str) -> Opened:
        return Opened("broker", log)

    class FakeRedis:
        @staticmethod
        def from_url(url: str, max_connections: int | None = None) -> Opened:
            return Opened("redis", log)

    async def create_pool(url: str, *, max_size: int) -> Opened:
        if url == "refused":
            raise OSError("postgres refused the connection")
        return Opened("pool", log)

    monkeypatch.setattr(resources, "connect", connect)
    monkeypatch.setattr(resources, "Redis", FakeRedis)
    monkeypatch.setattr(resources.database, "create_pool", create_pool)
    monkeypatch.setattr(resources.httpx, "AsyncClient", lambda timeout: Opened("http", log))
    return log


async def test_resources_close_in_the_reverse_order_of_opening(events):
    """Broker, Redis, pool, HTTP and anything held: closed last opened first."""
    async with Resources() as opened:
        await opened.broker("amqp://", "test")
        opened.redis("redis://")
        await opened.pool("postgresql://", 2)
        opened.http()
        opened.closes(Opened("analysis", events), lambda a: a.close())
    assert events == [
        *("open broker", "open redis", "open pool", "open http", "open analysis"),
        *("close analysis", "close http", "close pool", "close redis", "close broker"),
    ]


async def test_a_failure_halfway_closes_what_was_opened_and_is_raised(events):
    """Postgres refuses the pool: the broker connection and Redis are still closed, and
    the process sees the error."""
    with pytest.raises(OSError, match="refused"):
        async with Resources() as opened:
            await opened.broker("amqp://", "test")
            opened.redis("redis://")
            await opened.pool("refused", 2)
            opened.http()
    assert events == ["open broker", "open redis", "close redis", "close broker"]


async def test_a_background_task_runs_for_the_block_and_is_stopped_at_its_end():
    """It runs while the block runs; at the end it is cancelled and has finished."""
    ticks: list[int] = []
    stopped = asyncio.Event()

    async def loop() -> None:
        try:
            while True:
                ticks.append(1)
                await asyncio.sleep(0)
        finally:
            stopped.set()

    async def block() -> asyncio.Task[Any]:
        async with in_background(loop(), "ticker") as task:
            for _ in range(5):
                await asyncio.sleep(0)
            assert ticks
        return task

    task = await asyncio.wait_for(block(), 5)
    assert task.done() and stopped.is_set()


async def test_a_background_task_that_failed_is_raised_at_the_end_of_the_block():
    """A loop that died does not go unnoticed: its error comes out of the block."""

    async def broken() -> None:
        raise ValueError("loop died")

    with pytest.raises(ValueError, match="loop died"):
        async with in_background(broken(), "broken"):
            await asyncio.sleep(0)


async def test_a_background_task_that_swallows_its_cancel_does_not_hold_the_block(caplog):
    """A loop that catches its cancel (as a library's own error) and goes round again is
    left behind after the stop wait, said in the log, cancelled once more, and the block's
    exit goes on."""
    swallowed: list[int] = []

    async def stubborn() -> None:
        while True:
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                if swallowed:  # the second cancel ends it
                    raise
                swallowed.append(1)  # as if a library had turned it into its own error

    async def block() -> asyncio.Task[Any]:
        async with in_background(stubborn(), "stubborn", stop_wait_s=0.05) as task:
            await asyncio.sleep(0)
        return task

    with capture_logs() as logs:
        task = await asyncio.wait_for(block(), 5)
    await asyncio.wait({task}, timeout=5)
    assert swallowed and task.cancelled()
    assert [e["task"] for e in logs if e["event"] == "background task did not stop"] == ["stubborn"]


async def test_entered_contexts_end_with_the_resources(events):
    """A background task entered into the resources stops before what it uses is closed."""
    seen: list[str] = []

    async def uses_redis() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            seen.append(f"stopped with {len(events)} events")

    async with Resources() as opened:
        opened.redis("redis://")
        await opened.enter(in_background(uses_redis(), "user"))
        await asyncio.sleep(0)
    assert seen == ["stopped with 1 events"] and events[-1] == "close redis"


async def test_a_pool_that_will_not_close_is_terminated_after_its_bound():
    """asyncpg's close waits for every connection to come back, without limit: past the
    bound the pool is terminated (every connection cut) and the stop goes on."""
    from shared.resources import close_pool

    class Held:
        terminated = False

        async def close(self) -> None:
            await asyncio.Event().wait()  # a connection that never comes back

        def terminate(self) -> None:
            self.terminated = True

    held = Held()
    await asyncio.wait_for(close_pool(held, within_s=0.05), 5)  # type: ignore[arg-type]
    assert held.terminated
