"""One worker at a time runs a (session, component): the lock (a Redis lock, or the claimed
row's lease on the table transport), and its watchdog."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import structlog
from redis.asyncio import Redis

from shared import metrics
from shared.errors import Retry
from shared.job_queue import ClaimedRow, Lease
from shared.locks import ComponentLock, lock_key
from shared.messages import Task
from shared.redis_batches import RedisBatches
from workers.middleware.chain import Job, Lock, Next

log = structlog.get_logger(__name__)


def redis_locks(
    redis: Redis, key_prefix: str, ttl_ms: int, batches: RedisBatches | None = None
) -> Callable[[Task], Lock]:
    """The lock of a task's (session, component) in Redis (shared.locks), taken and finished
    through `batches` when given."""

    def lock_of(task: Task) -> Lock:
        key = lock_key(key_prefix, task.session_id, task.component)
        return ComponentLock(redis, key, ttl_ms, batches)

    return lock_of


@dataclass(frozen=True)
class HoldLock:
    """Runs the rest under the task's lock: held elsewhere (or Redis away) is a Retry after
    `retry_ms`; after success the lock is finished (duplicates wait), else released."""

    lock_of: Callable[[Task], Lock]
    retry_ms: int

    async def __call__(self, job: Job, call_next: Next) -> None:
        task = job.task
        lock = self.lock_of(task)
        if not await self._acquire(lock):
            metrics.LOCK_CONTENTION.labels(task.component).inc()
            raise Retry(self.retry_ms, "lock held by another worker")
        job.lock = lock
        try:
            await call_next(job)
            if job.outcome == "ok":
                await _quietly(lock.finish())
        finally:
            await _quietly(lock.release())

    async def _acquire(self, lock: Lock) -> bool:
        try:
            return await lock.acquire()
        except Exception as exc:  # Redis away: wait in the shortest tier rather than spin
            raise Retry(self.retry_ms, f"redis unavailable: {exc}") from exc


@dataclass(frozen=True)
class HoldLease:
    """The table transport's lock: the claimed row's lease (shared.job_queue.Lease). Nothing
    is taken in Redis: the claim made the task this worker's alone, and its results are
    written only with the row's completion by its holder."""

    lease_s: float

    async def __call__(self, job: Job, call_next: Next) -> None:
        row = job.delivery
        if not isinstance(row, ClaimedRow):
            raise TypeError("HoldLease serves the table transport's rows only")
        job.lock = Lease(row, int(self.lease_s * 1000))
        await call_next(job)


@dataclass(frozen=True)
class Watchdog:
    """Renews the lock while the rest runs and stops the run at once if the lock is lost:
    another worker may own the task now, so this one re-queues it (Retry) without reporting.

    Cancelling the run kills the process of any analysis it is waiting for
    (workers.isolation), so a stopped task leaves nothing running behind it."""

    retry_ms: int

    async def __call__(self, job: Job, call_next: Next) -> None:
        lock = job.held_lock
        started = time.perf_counter()
        async with lock.watchdog():
            run = asyncio.ensure_future(call_next(job))
            lost = asyncio.ensure_future(lock.lost.wait())
            try:
                await asyncio.wait({run, lost}, return_when=asyncio.FIRST_COMPLETED)
            finally:  # the lock lost, or this step cancelled (a late task at shutdown)
                lost.cancel()
                stopped = not run.done()
                if stopped:
                    run.cancel()
                    await _stopped(run)
            if stopped:
                raise Retry(self.retry_ms, "lock lost while running")
            run.result()
        elapsed_ms = (time.perf_counter() - started) * 1000
        # Younger than a third of the TTL the lock cannot have expired (the watchdog has not
        # even renewed it yet): only an older lock is checked before reporting a success.
        if (
            job.analysis is not None
            and elapsed_ms > lock.ttl_ms / 3
            and not await lock.still_held()
        ):
            raise Retry(self.retry_ms, "lock lost before reporting")


async def _stopped(run: asyncio.Future[None]) -> None:
    """Wait for a cancelled run to end, so its clean-up is over before the task is re-queued;
    whatever it ended with is retrieved (never "exception was never retrieved"). Not
    `await run`: that would raise the run's error, or swallow a cancel of the caller."""
    await asyncio.wait({run})
    if not run.cancelled():
        run.exception()


async def _quietly(update: Awaitable[None]) -> None:
    try:
        await update
    except Exception as exc:  # a lock we cannot update expires by its TTL
        log.warning("lock update failed", error=str(exc))
