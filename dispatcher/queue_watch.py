"""Queue depths as a Prometheus gauge on the API's /metrics, read every few seconds, and the
last hour of each queue's figures for the console's charts: depth and consumers from a passive
declare, and on the same tick its oldest open task's age and its rates (`Figures`,
dispatcher/queue_figures.py)."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace

import asyncpg
import structlog
from aio_pika.abc import AbstractRobustConnection

from shared import job_queue, metrics
from shared.background import raise_if_cancelled
from shared.names import Names
from topology.spec import Topology

log = structlog.get_logger(__name__)

# Often enough for dashboards and alerts, rare enough to cost the broker nothing.
QUEUE_WATCH_S = 5.0
# The console charts the last hour of readings.
HISTORY_S = 3600.0
# A chart draws at most this many points (one per 30 s of the hour): a refresh of the overview
# sends every queue's charts, so each stays small.
CHART_POINTS = 120
# What a queue's chart may show (`QueueHistory.series`).
FIGURES = ("ready", "consumers", "oldest_s", "publish", "deliver_get", "ack")
# The oldest open tasks (a query of the record) and the rates (a management API call) are
# read this often, not every tick, by every API process: a chart point spans 30 s anyway, and
# the ticks between carry the last figures read.
FIGURES_EVERY_S = 30.0
# A read of the figures slower than this is given up: the depth gauge must keep its pace.
FIGURES_TIMEOUT_S = 4.0


@dataclass(frozen=True, slots=True)
class Rates:
    """A queue's messages per second as the RabbitMQ management API reports them."""

    publish: float
    deliver_get: float
    ack: float


@dataclass(frozen=True, slots=True)
class QueueReading:
    """One queue at one tick: a passive declare's counts, and what `Figures` added."""

    ready: int
    consumers: int
    # Age (s) of its oldest task without a result, waiting or running; None: none open.
    oldest_s: float | None = None
    rates: Rates | None = None  # None when the management API did not answer


@dataclass(frozen=True)
class Figures:
    """What one tick adds to the passive declares, by queue name."""

    oldest_s: dict[str, float] = field(default_factory=dict)
    rates: dict[str, Rates] = field(default_factory=dict)
    rates_problem: str | None = None  # why there are no rates, when there are none
    read_at: float = field(default_factory=time.monotonic)  # when the ages were read


def with_figures(
    readings: dict[str, QueueReading], figures: Figures | None, now: float | None = None
) -> dict[str, QueueReading]:
    """Each queue's reading with its oldest open task's age and its rates, where known; an
    age read earlier (figures carried onto later ticks) has grown by the time since."""
    if figures is None:
        return readings
    since = max(0.0, (time.monotonic() if now is None else now) - figures.read_at)

    def age(name: str) -> float | None:
        read = figures.oldest_s.get(name)
        return None if read is None else read + since

    return {
        name: replace(reading, oldest_s=age(name), rates=figures.rates.get(name))
        for name, reading in readings.items()
    }


def figure_of(reading: QueueReading, figure: str) -> float | None:
    """One of FIGURES from a reading: no open task is an age of 0; rates not read are None."""
    if figure == "oldest_s":
        return reading.oldest_s or 0.0
    if figure in ("ready", "consumers"):
        return float(getattr(reading, figure))
    return None if reading.rates is None else float(getattr(reading.rates, figure))


def peaks(values: list[float], points: int = CHART_POINTS) -> list[float]:
    """At most `points` values, oldest first: the largest of each of `points` equal spans
    (a short spike still shows), or the values themselves when there are no more."""
    n = len(values)
    if n <= points:
        return values
    return [max(values[i * n // points : (i + 1) * n // points]) for i in range(points)]


class QueueHistory:
    """The readings of the last hour, oldest first, as (Unix time, readings by queue)."""

    def __init__(self, keep_s: float = HISTORY_S, every_s: float = QUEUE_WATCH_S) -> None:
        self.readings: deque[tuple[float, dict[str, QueueReading]]] = deque(
            maxlen=int(keep_s / every_s) + 1
        )
        self.rates_problem: str | None = None  # the newest tick's, when it had no rates
        # Series drawn since the last reading: every open overview asks for the same ones.
        self._drawn: dict[tuple[str, str, int], list[float]] = {}

    def add(
        self,
        readings: dict[str, QueueReading],
        at: float | None = None,
        rates_problem: str | None = None,
    ) -> None:
        self.readings.append((time.time() if at is None else at, readings))
        self.rates_problem = rates_problem
        self._drawn.clear()

    @property
    def latest(self) -> dict[str, QueueReading]:
        """The newest readings; empty before the first."""
        return self.readings[-1][1] if self.readings else {}

    def series(self, queue: str, figure: str, points: int = CHART_POINTS) -> list[float]:
        """One of the queue's FIGURES over the readings kept, oldest first, as `peaks`;
        readings without it (rates the management API did not give) are left out."""
        key = (queue, figure, points)
        if key not in self._drawn:
            values = [figure_of(r[queue], figure) for _, r in self.readings if queue in r]
            self._drawn[key] = peaks([v for v in values if v is not None], points)
        return self._drawn[key]


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


# Reads every queue's counts now, or None while there is nothing to read them from.
Reader = Callable[[], Awaitable[dict[str, QueueReading]] | None]


def broker_readings(
    connection_of: Callable[[], AbstractRobustConnection | None], topology: Topology
) -> Reader:
    """Passive declares on the API's broker connection, while it has one."""

    def read() -> Awaitable[dict[str, QueueReading]] | None:
        connection = connection_of()
        return None if connection is None else read_queues(connection, topology)

    return read


def table_readings(pool: asyncpg.Pool, names: Names, topology: Topology) -> Reader:
    """The postgres transport: each queue's rows waiting (pending or in a retry's backoff;
    the DLQ's: every dead letter) and the consumers holding rows of it now."""

    async def read() -> dict[str, QueueReading]:
        counts = await job_queue.queue_counts(pool, names.prefix, names.dlq)
        return {q.name: QueueReading(*counts.get(q.name, (0, 0))) for q in topology.queues}

    return read


async def watch(
    read: Reader,
    history: QueueHistory | None = None,
    figures: Callable[[], Awaitable[Figures]] | None = None,
) -> None:
    """Keep `verdict_queue_depth` (and `history`, with what `figures` adds every
    FIGURES_EVERY_S) current while the API runs (cancel to stop)."""
    found: Figures | None = None
    read_at = -FIGURES_EVERY_S
    while True:
        pending = read()
        if pending is not None:
            try:
                readings = await pending
                for name, reading in readings.items():
                    metrics.QUEUE_DEPTH.labels(name).set(reading.ready)
                if history is not None:
                    if figures is not None and time.monotonic() - read_at >= FIGURES_EVERY_S:
                        read_at = time.monotonic()
                        found = await _within(figures, FIGURES_TIMEOUT_S)
                    problem = found.rates_problem if found is not None else None
                    history.add(with_figures(readings, found), rates_problem=problem)
            except Exception as exc:  # broker away or a queue missing: try again next time
                raise_if_cancelled(exc)
                log.debug("queue depths not read", error=repr(exc))
        await asyncio.sleep(QUEUE_WATCH_S)


async def _within(figures: Callable[[], Awaitable[Figures]], timeout_s: float) -> Figures | None:
    """The figures, or None when reading them takes longer than `timeout_s`."""
    try:
        async with asyncio.timeout(timeout_s):
            return await figures()
    except TimeoutError:
        log.debug("queue figures not read in time", timeout_s=timeout_s)
        return None
