"""The console's overview: each plan queue's backlog, consumers, oldest open task and rates,
sessions per minute and the POST→verdict latency, each with a chart of the last hour.

The queue figures come from the API's queue watch (dispatcher/queue_watch.py): depths and
consumers from its passive declares (exact, every 5 s), the oldest open task from the record
and the rates from the RabbitMQ management API when it answers (every 30 s), kept for an
hour. The rest comes from the record when the page is read.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from dispatcher.queue_watch import FIGURES, QueueHistory, Rates
from dispatcher.state import AppState
from shared import console_store
from shared.constants import PLANS, QUEUE_COMPONENTS
from shared.names import Names

# The charts span the last hour, one point a minute.
CHART_MINUTES = 60
# The latency figures are over the sessions finished in the last five minutes.
LATENCY_MINUTES = 5
# Final statuses the overview counts per minute, with acceptances first.
MINUTE_STATUSES = ("accepted", "completed", "partial", "failed")


@dataclass(frozen=True)
class QueueRow:
    """One plan queue of one component, as the newest tick of the queue watch saw it."""

    component: str
    plan: int
    queue: str
    ready: int | None
    consumers: int | None
    oldest_s: float | None  # age of its oldest task without a result: waiting or running
    rates: Rates | None  # messages/s; None when the management API did not answer
    charts: dict[str, list[float]] = field(default_factory=dict)  # FIGURES → the last hour


@dataclass(frozen=True)
class Overview:
    queues: list[QueueRow]
    per_minute: dict[str, list[float]]  # MINUTE_STATUSES → count in each minute
    latency: dict[str, Any]  # p50, p95 (seconds), n over LATENCY_MINUTES
    latency_per_minute: dict[str, list[float]]  # p50, p95 → seconds in each minute
    rates_problem: str | None  # why the rates are missing, when they are


async def overview(state: AppState) -> Overview:
    """Everything the overview shows, read now."""
    db = state.pool
    now, by_minute, latency, per_minute_latency = await asyncio.gather(
        console_store.now(db),
        console_store.sessions_by_minute(db, CHART_MINUTES),
        console_store.latency_over(db, LATENCY_MINUTES),
        console_store.latency_by_minute(db, CHART_MINUTES),
    )
    history = state.queue_history
    return Overview(
        queues=queue_rows(history, Names(state.settings.topology_prefix)),
        per_minute={
            s: minute_series(by_minute, now, lambda r, s=s: r["n"] if r["status"] == s else None)
            for s in MINUTE_STATUSES
        },
        latency=latency,
        latency_per_minute={
            p: minute_series(per_minute_latency, now, lambda r, p=p: r[p]) for p in ("p50", "p95")
        },
        rates_problem=history.rates_problem,
    )


def queue_rows(history: QueueHistory, names: Names) -> list[QueueRow]:
    """Every component's plan queues, each with its newest reading (None before the first)
    and a chart of each of its FIGURES over the hour kept."""
    latest = history.latest
    rows = []
    for component in QUEUE_COMPONENTS:
        for plan in PLANS:
            queue = names.task_queue(component, plan)
            reading = latest.get(queue)
            rows.append(
                QueueRow(
                    component,
                    plan,
                    queue,
                    reading.ready if reading else None,
                    reading.consumers if reading else None,
                    reading.oldest_s if reading else None,
                    reading.rates if reading else None,
                    {figure: history.series(queue, figure) for figure in FIGURES},
                )
            )
    return rows


def minute_series(
    rows: Iterable[dict[str, Any]],
    now: datetime,
    value: Any,
    minutes: int = CHART_MINUTES,
) -> list[float]:
    """One number per minute for the last `minutes` minutes, oldest first, from rows with a
    `minute`; `value(row)` is the row's number (None: not this series). Minutes without a
    row are 0."""
    first = now.replace(second=0, microsecond=0) - timedelta(minutes=minutes - 1)
    series = [0.0] * minutes
    for row in rows:
        number = value(row)
        index = int((row["minute"] - first).total_seconds() // 60)
        if number is not None and 0 <= index < minutes:
            series[index] += float(number)
    return series


def sparkline(values: Sequence[float], width: int = 120, height: int = 24) -> str:
    """SVG polyline points drawing `values` left to right, the largest at the top (a flat line
    at the bottom when all are 0; empty for no values)."""
    if not values:
        return ""
    top = max(values) or 1.0
    step = width / max(1, len(values) - 1)
    return " ".join(
        f"{i * step:.1f},{height - (v / top) * height:.1f}" for i, v in enumerate(values)
    )
