"""The queue watch's pace: the depth gauge ticks on whatever the figures read does."""

from __future__ import annotations

import asyncio
import contextlib

from dispatcher import queue_watch
from dispatcher.queue_watch import Figures, QueueHistory, QueueReading
from topology.spec import build


async def test_a_slow_figures_read_is_given_up_and_the_depth_ticks_keep_their_pace(monkeypatch):
    """The queue watch reads the figures at most every FIGURES_EVERY_S and gives up a read
    slower than FIGURES_TIMEOUT_S: the ticks between carry on with the depths alone."""

    async def two_queues(connection, topology):
        return {"q": QueueReading(3, 1)}

    monkeypatch.setattr(queue_watch, "read_queues", two_queues)
    monkeypatch.setattr(queue_watch, "QUEUE_WATCH_S", 0.01)
    monkeypatch.setattr(queue_watch, "FIGURES_EVERY_S", 0.1)
    monkeypatch.setattr(queue_watch, "FIGURES_TIMEOUT_S", 0.05)
    reads = 0

    async def never_answer() -> Figures:
        nonlocal reads
        reads += 1
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    history = QueueHistory()
    task = asyncio.create_task(
        queue_watch.watch(
            queue_watch.broker_readings(lambda: object(), build("t")),  # type: ignore[arg-type]
            history,
            never_answer,
        )
    )
    await asyncio.sleep(0.5)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    assert 2 <= reads <= 6
    assert len(history.readings) > 2 * reads
    assert all(r["q"].ready == 3 and r["q"].oldest_s is None for _, r in history.readings)
