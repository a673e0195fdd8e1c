"""The console's overview: each plan queue's backlog and rates, sessions per minute and the
POST→verdict latency, each with a chart of the last hour.

Depths and consumers come from the API's own passive declares (exact, every 5 s, kept for an
hour); rates from the RabbitMQ management API when it answers; the rest from the record.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import quote

import httpx
import structlog

from dispatcher.state import AppState
from shared import console_store
from shared.constants import PLANS, QUEUE_COMPONENTS
from shared.names import Names
from topology.broker import management_url

log = structlog.get_logger(__name__)

# The charts span the last hour, one point a minute.
CHART_MINUTES = 60
# The latency figures are over the sessions finished in the last five minutes.
LATENCY_MINUTES = 5
# A management API slower than this leaves the rates out rather than the page waiting.
MANAGEMENT_TIMEOUT_S = 3.0
# Final statuses the overview counts per minute, with acceptances first.
MINUTE_STATUSES = ("accepted", "completed", "partial", "failed")
RATES = ("publish", "deliver_get", "ack")


@dataclass(frozen=True)
class QueueRow:
    """One plan queue of one component."""

    component: str
    plan: int
    queue: str
    ready: int | None
    consumers: int | None
    oldest_s: float | None  # age of its oldest task without a result
    rates: dict[str, float] = field(default_factory=dict)  # messages/s by RATES
    depths: list[int] = field(default_factory=list)  # the last hour's readings


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
    (rates, problem), now, by_minute, latency, per_minute_latency, oldest = await asyncio.gather(
        queue_rates(state.http, _monitoring_url(state), state.settings.rabbitmq_management_url),
        console_store.now(db),
        console_store.sessions_by_minute(db, CHART_MINUTES),
        console_store.latency_over(db, LATENCY_MINUTES),
        console_store.latency_by_minute(db, CHART_MINUTES),
        console_store.oldest_open_tasks(db),
    )
    names = Names(state.settings.topology_prefix)
    latest = state.queue_history.latest
    rows = []
    for component in QUEUE_COMPONENTS:
        for plan in PLANS:
            queue = names.task_queue(component, plan)
            reading = latest.get(queue)
            since = oldest.get((component, plan))
            rows.append(
                QueueRow(
                    component,
                    plan,
                    queue,
                    reading.ready if reading else None,
                    reading.consumers if reading else None,
                    (now - since).total_seconds() if since else None,
                    rates.get(queue, {}),
                    state.queue_history.depths(queue),
                )
            )
    return Overview(
        queues=rows,
        per_minute={
            s: minute_series(by_minute, now, lambda r, s=s: r["n"] if r["status"] == s else None)
            for s in MINUTE_STATUSES
        },
        latency=latency,
        latency_per_minute={
            p: minute_series(per_minute_latency, now, lambda r, p=p: r[p]) for p in ("p50", "p95")
        },
        rates_problem=problem,
    )


def _monitoring_url(state: AppState) -> str:
    """Whose credentials read the management API: the operator role's (tagged `management`)
    when the API has them, else its own, which a least-privilege broker does not let in."""
    return state.settings.operator_amqp_url or state.settings.amqp_url


async def queue_rates(
    http: httpx.AsyncClient, amqp_url: str, management: str | None
) -> tuple[dict[str, dict[str, float]], str | None]:
    """Publish, deliver and ack rates (messages/s) by queue from the management API, or why
    there are none (unreachable, refused)."""
    base, vhost, auth = management_url(amqp_url, management)
    url = f"{base}/api/queues/{quote(vhost, safe='')}?columns=name,message_stats"
    try:
        response = await http.get(url, auth=auth, timeout=MANAGEMENT_TIMEOUT_S)
        response.raise_for_status()
        return rates_by_queue(response.json()), None
    except (httpx.HTTPError, ValueError) as exc:
        log.debug("management rates not read", error=repr(exc))
        return {}, f"rates unavailable: the management API at {base} did not answer ({exc})"


def rates_by_queue(queues: Iterable[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """The RATES of each queue in a management API answer (0 where it has no stats yet)."""
    found = {}
    for queue in queues:
        stats = queue.get("message_stats") or {}
        found[queue["name"]] = {
            rate: float((stats.get(f"{rate}_details") or {}).get("rate", 0.0)) for rate in RATES
        }
    return found


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
