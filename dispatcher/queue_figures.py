"""What the queue watch adds to its passive declares on each tick (dispatcher/queue_watch.py):
the age of each plan queue's oldest open task, from the record, and each queue's publish,
deliver and ack rates, from the RabbitMQ management API. Either may be missing (the database
or the management API away); the depths are recorded all the same."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote

import asyncpg
import httpx
import structlog

from dispatcher.queue_watch import Figures, Rates
from shared import console_store
from shared.background import raise_if_cancelled
from shared.names import Names
from shared.settings import Settings
from topology.broker import management_url

log = structlog.get_logger(__name__)

# A management API slower than this leaves the rates out rather than the tick waiting.
MANAGEMENT_TIMEOUT_S = 3.0


async def read_figures(pool: asyncpg.Pool, http: httpx.AsyncClient, settings: Settings) -> Figures:
    """The oldest open task's age by plan queue and the rates by queue, read now."""
    names = Names(settings.topology_prefix)
    if settings.transport == "postgres":  # no broker, no management API to ask for rates
        rates: dict[str, Rates] = {}
        problem: str | None = "no rates on the postgres transport"
        oldest = await _oldest_or_none(pool)
    else:
        # The management API lets in the operator role (tagged `management`), not the API's
        # own least-privilege user.
        (rates, problem), oldest = await asyncio.gather(
            queue_rates(http, settings.operator_url(), settings.rabbitmq_management_url),
            _oldest_or_none(pool),
        )
    ages = {names.task_queue(c, p): age for (c, p), age in oldest.items()}
    return Figures(oldest_s=ages, rates=rates, rates_problem=problem)


async def _oldest_or_none(pool: asyncpg.Pool) -> dict[tuple[str, int], float]:
    try:
        return await console_store.oldest_open_ages(pool)
    except Exception as exc:  # the database away: the tick keeps its depths
        raise_if_cancelled(exc)
        log.debug("oldest open tasks not read", error=repr(exc))
        return {}


async def queue_rates(
    http: httpx.AsyncClient, amqp_url: str, management: str | None
) -> tuple[dict[str, Rates], str | None]:
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


def rates_by_queue(queues: Iterable[dict[str, Any]]) -> dict[str, Rates]:
    """The rates of each queue in a management API answer (0 where it has no stats yet)."""
    found = {}
    for queue in queues:
        stats = queue.get("message_stats") or {}

        def rate(name: str, stats: dict[str, Any] = stats) -> float:
            return float((stats.get(f"{name}_details") or {}).get("rate", 0.0))

        found[queue["name"]] = Rates(rate("publish"), rate("deliver_get"), rate("ack"))
    return found
