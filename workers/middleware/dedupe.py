"""A task that may have run before runs again only while its result is still needed."""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg
import structlog

from shared import db as database
from shared.errors import Retry
from shared.sessions import result_still_needed
from shared.transport import Delivery
from workers.middleware.chain import Job, Next

log = structlog.get_logger(__name__)


def seen_before(delivery: Delivery, attempt: int) -> bool:
    """Whether this task may have run before: redelivered, retried, or back from a tier.

    Only then is Postgres asked whether its result is already recorded; a first delivery
    of a first attempt skips that round trip (a duplicate is caught by the lock and by the
    aggregator's idempotent insert).
    """
    return delivery.redelivered or attempt > 1 or "x-death" in (delivery.headers or {})


@dataclass(frozen=True)
class SkipFinished:
    """Acks, without running it, a task whose session is gone or final or whose result is
    recorded; Postgres away is a Retry after `retry_ms`."""

    db: asyncpg.Pool
    retry_ms: int

    async def __call__(self, job: Job, call_next: Next) -> None:
        if seen_before(job.delivery, job.attempt) and not await self._still_needed(job):
            log.info("session final, withdrawn or already has this result: skipping")
            await job.delivery.ack()
            job.outcome = "skipped"
            return
        await call_next(job)

    async def _still_needed(self, job: Job) -> bool:
        try:
            return await result_still_needed(self.db, job.task.session_id, job.task.component)
        except (*database.UNAVAILABLE, asyncpg.PostgresError) as exc:
            raise Retry(self.retry_ms, f"postgres unavailable: {exc}") from exc
