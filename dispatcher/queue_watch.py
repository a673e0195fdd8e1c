"""Queue depths as a Prometheus gauge on the API's /metrics, read every few seconds."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import structlog
from aio_pika.abc import AbstractRobustConnection

from shared import metrics
from shared.background import raise_if_cancelled
from topology.spec import Topology

log = structlog.get_logger(__name__)

# Often enough for dashboards and alerts, rare enough to cost the broker nothing.
QUEUE_WATCH_S = 5.0
# The console charts the last hour of readings.
HISTORY_S = 3600.0


@dataclass(frozen=True)
class QueueReading:
    """One queue as a passive declare saw it."""

    ready: int
    consumers: int


class QueueHistory:
    """The readings of the last hour, oldest first, as (Unix time, readings by queue)."""

    def __init__(self, keep_s: float = HISTORY_S, every_s: float = QUEUE_WATCH_S) -> None:
        self.readings: deque[tuple[float, dict[str, QueueReading]]] = deque(
            maxlen=int(keep_s / every_s) + 1
        )

    def add(self, readings: dict[str, QueueReading], at: float | None = None) -> None:
        self.readings.append((time.time() if at is None else at, readings))

    @property
    def latest(self) -> dict[str, QueueReading]:
        """The newest readings; empty before the first."""
        return self.readings[-1][1] if self.readings else {}

    def depths(self, queue: str) -> list[int]:
        """The queue's ready messages in every reading kept, oldest first."""
        return [r[queue].ready for _, r in self.readings if queue in r]


async def read_queues(
    connection: AbstractRobustConnection, topology: Topology
) -> dict[str, QueueReading]:
    """Ready messages and consumers per queue (passive declares: exact, unlike the
    management stats)."""
    channel = await connection.channel()
    try:
        readings = {}
        for queue in topology.queues:
            declared = await channel.declare_queue(queue.name, passive=True, robust=False)
            result = declared.declaration_result
            readings[queue.name] = QueueReading(
                result.message_count or 0, result.consumer_count or 0
            )
        return readings
    finally:
        await channel.close()


async def read_depths(connection: AbstractRobustConnection, topology: Topology) -> dict[str, int]:
    """Ready messages per queue."""
    return {name: r.ready for name, r in (await read_queues(connection, topology)).items()}


async def watch(
    connection_of: Callable[[], AbstractRobustConnection | None],
    topology: Topology,
    history: QueueHistory | None = None,
) -> None:
    """Keep `verdict_queue_depth` (and `history`) current while the API runs (cancel to
    stop)."""
    while True:
        connection = connection_of()
        if connection is not None:
            try:
                readings = await read_queues(connection, topology)
                for name, reading in readings.items():
                    metrics.QUEUE_DEPTH.labels(name).set(reading.ready)
                if history is not None:
                    history.add(readings)
            except Exception as exc:  # broker away or a queue missing: try again next time
                raise_if_cancelled(exc)
                log.debug("queue depths not read", error=repr(exc))
        await asyncio.sleep(QUEUE_WATCH_S)
