"""Queue depths as a Prometheus gauge on the API's /metrics, read every few seconds."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import structlog
from aio_pika.abc import AbstractRobustConnection

from shared import metrics
from shared.background import raise_if_cancelled
from topology.spec import Topology

log = structlog.get_logger(__name__)

# Often enough for dashboards and alerts, rare enough to cost the broker nothing.
QUEUE_WATCH_S = 5.0


async def read_depths(connection: AbstractRobustConnection, topology: Topology) -> dict[str, int]:
    """Ready messages per queue (passive declares: exact, unlike the management stats)."""
    channel = await connection.channel()
    try:
        depths = {}
        for queue in topology.queues:
            declared = await channel.declare_queue(queue.name, passive=True, robust=False)
            depths[queue.name] = declared.declaration_result.message_count or 0
        return depths
    finally:
        await channel.close()


async def watch(
    connection_of: Callable[[], AbstractRobustConnection | None], topology: Topology
) -> None:
    """Keep `verdict_queue_depth` current while the API runs (cancel to stop)."""
    while True:
        connection = connection_of()
        if connection is not None:
            try:
                for name, depth in (await read_depths(connection, topology)).items():
                    metrics.QUEUE_DEPTH.labels(name).set(depth)
            except Exception as exc:  # broker away or a queue missing: try again next time
                raise_if_cancelled(exc)
                log.debug("queue depths not read", error=repr(exc))
        await asyncio.sleep(QUEUE_WATCH_S)
