"""The review queue's backlog as Prometheus gauges on the API's /metrics."""

from __future__ import annotations

import asyncio

import asyncpg
import structlog

from shared import metrics, reviews
from shared.background import raise_if_cancelled

log = structlog.get_logger(__name__)

# Review objectives are minutes to hours: a reading every 15 s costs Postgres one index scan.
REVIEW_WATCH_S = 15.0


async def watch(pool: asyncpg.Pool, every_s: float = REVIEW_WATCH_S) -> None:
    """Keep `verdict_review_pending` and `verdict_review_oldest_age_seconds` current while
    the API runs (cancel to stop)."""
    while True:
        try:
            found = await reviews.backlog(pool)
            metrics.REVIEW_PENDING.set(found.waiting)
            metrics.REVIEW_OLDEST_AGE.set(found.oldest_age_s)
        except Exception as exc:  # Postgres away: keep the last reading, try again
            raise_if_cancelled(exc)
            log.debug("review backlog not read", error=repr(exc))
        await asyncio.sleep(every_s)
