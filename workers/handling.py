"""One task, start to finish: validate, dedupe, lock, execute, report, ack."""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass

import asyncpg
import structlog
from aio_pika.abc import AbstractIncomingMessage
from redis.asyncio import Redis

from shared import metrics
from shared.broker import (
    Publisher,
    redelivery_copy,
    reject_oversize,
    send_to_dlq,
    task_message,
)
from shared.constants import ATTEMPT_HEADER, MEDIA_PREPROCESS
from shared.deadletters import DeadLetterKind, oversize
from shared.errors import AnalysisTimeout, InvalidMessage, Reject, Retry
from shared.locks import ComponentLock, lock_key
from shared.messages import (
    MAX_MESSAGE_BYTES,
    Task,
    decode_task,
    failure_results,
    success_result,
)
from shared.settings import Settings
from workers.executor import Analysis, Executor, ExecutorContext, task_timeout_s
from workers.retry import GiveUp, RetryLater, decide, describe

log = structlog.get_logger(__name__)


class LockLost(Exception):
    """Raised when the watchdog could not renew the lock: another worker may own the task now."""


@dataclass
class TaskHandler:
    """Orchestrates the I/O around one executor; every policy it applies is a pure function."""

    settings: Settings
    component: str
    publisher: Publisher
    redis: Redis
    db: asyncpg.Pool
    context: ExecutorContext
    executor: Executor
    worker_id: str

    async def handle(self, delivery: AbstractIncomingMessage) -> None:
        """Process one delivery; it is acked, re-queued or dead-lettered, never left hanging."""
        too_big = oversize(
            delivery.body, delivery.headers, MAX_MESSAGE_BYTES, self.settings.max_header_bytes
        )
        if too_big:  # before anything reads it, and never republished by us
            await reject_oversize(delivery, too_big, self.component)
            return
        attempt = attempt_of(delivery)
        try:
            task = self._parse(delivery)
            with structlog.contextvars.bound_contextvars(
                session_id=task.session_id, component=task.component, attempt=attempt
            ):
                await self._process(task, attempt, delivery)
        except Reject as rejected:
            await self._dead_letter(delivery, rejected.reason, "poison")
        except Retry as retry:
            await self._requeue(delivery, retry)

    def _parse(self, delivery: AbstractIncomingMessage) -> Task:
        """The task a delivery carries, or Reject (poison) saying why there is none."""
        try:
            task = decode_task(delivery.body)
        except InvalidMessage as exc:
            raise Reject(str(exc)) from exc
        expected = self.publisher.names.task_queue(task.component, task.plan_type)
        if task.component != self.component or delivery.routing_key != expected:
            raise Reject(
                f"task for {task.component}/plan {task.plan_type} arrived on {delivery.routing_key}"
            )
        return task

    async def _process(self, task: Task, attempt: int, delivery: AbstractIncomingMessage) -> None:
        if seen_before(delivery, attempt) and not await self._still_needed(task):
            log.info("session final, withdrawn or already has this result: skipping")
            await delivery.ack()
            metrics.JOBS.labels(task.component, "skipped").inc()
            return
        lock = ComponentLock(
            self.redis,
            lock_key(self.settings.key_prefix, task.session_id, task.component),
            self.settings.lock_ttl_ms,
        )
        if not await self._acquire(lock):
            metrics.LOCK_CONTENTION.labels(task.component).inc()
            raise Retry(self.settings.lock_retry_ms, "lock held by another worker")
        try:
            await self._run_and_report(task, attempt, lock, delivery)
        finally:
            await _quietly(lock.release())

    async def _still_needed(self, task: Task) -> bool:
        """False when the session is gone or final, or this component's result is recorded."""
        try:
            row = await self.db.fetchrow(
                """
                SELECT s.status, r.component IS NOT NULL AS recorded
                FROM sessions s
                LEFT JOIN component_results r ON r.session_id = s.id AND r.component = $2
                WHERE s.id = $1
                """,
                uuid.UUID(task.session_id),
                task.component,
            )
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
            raise Retry(self.settings.lock_retry_ms, f"postgres unavailable: {exc}") from exc
        return row is not None and row["status"] == "processing" and not row["recorded"]

    async def _acquire(self, lock: ComponentLock) -> bool:
        try:
            return await lock.acquire()
        except Exception as exc:  # Redis away: wait in the shortest tier rather than spin
            raise Retry(self.settings.lock_retry_ms, f"redis unavailable: {exc}") from exc

    async def _run_and_report(
        self, task: Task, attempt: int, lock: ComponentLock, delivery: AbstractIncomingMessage
    ) -> None:
        started = time.perf_counter()
        try:
            async with lock.watchdog():
                analysis = await self._execute(task, lock)
        except LockLost as exc:
            raise Retry(self.settings.lock_retry_ms, "lock lost while running") from exc
        except Exception as error:
            await self._fail(task, attempt, error, delivery)
            return
        elapsed_ms = int((time.perf_counter() - started) * 1000)
        metrics.JOB_SECONDS.labels(task.component).observe(elapsed_ms / 1000)
        # Younger than a third of the TTL the lock cannot have expired (the watchdog has not
        # even renewed it yet): only an older lock is checked before reporting.
        if elapsed_ms > lock.ttl_ms / 3 and not await lock.still_held():
            raise Retry(self.settings.lock_retry_ms, "lock lost before reporting")
        if task.component != MEDIA_PREPROCESS:
            result = success_result(
                task, analysis.score, analysis.data, attempt, self.worker_id, elapsed_ms
            )
            await self.publisher.result(result, task.priority)
        await delivery.ack()
        await _quietly(lock.finish())
        metrics.JOBS.labels(task.component, "ok").inc()
        log.info("task done", score=analysis.score, ms=elapsed_ms)

    async def _execute(self, task: Task, lock: ComponentLock) -> Analysis:
        """Run the executor under its timeout; stop at once if the lock is lost.

        Cancelling the run kills the process of any analysis it is waiting for
        (workers.isolation), so a stopped task leaves nothing running behind it.
        """
        timeout = task_timeout_s(task, self.settings)
        run = asyncio.ensure_future(self.executor(task, self.context))
        lost = asyncio.ensure_future(lock.lost.wait())
        try:
            done, _ = await asyncio.wait(
                {run, lost}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            lost.cancel()
        if run in done:
            return run.result()
        run.cancel()
        if lost in done:
            raise LockLost()
        raise AnalysisTimeout(timeout)

    async def _fail(
        self, task: Task, attempt: int, error: BaseException, delivery: AbstractIncomingMessage
    ) -> None:
        decision = decide(error, attempt, self.settings.max_attempts, self.settings.retry_base_ms)
        if isinstance(decision, RetryLater):
            log.warning("task failed, retrying", error=describe(error), delay_ms=decision.delay_ms)
            metrics.RETRIES.labels(task.component, "failure").inc()
            retry_task = task.model_copy(update={"retry_count": decision.attempt - 1})
            await self.publisher.retry(
                task_message(retry_task, decision.attempt),
                delivery.routing_key or "",
                decision.delay_ms,
            )
            await delivery.ack()
            return
        assert isinstance(decision, GiveUp)
        log.error("task failed for good", reason=decision.reason)
        for failure in failure_results(task, decision.user_reason, attempt, self.worker_id):
            await self.publisher.result(failure, task.priority)
        metrics.JOBS.labels(task.component, "failed").inc()
        if decision.replayable:
            await self._dead_letter(delivery, decision.reason)
        else:  # the failure result is the whole answer: nothing to replay
            await delivery.ack()

    async def _dead_letter(
        self, delivery: AbstractIncomingMessage, reason: str, kind: DeadLetterKind = "failed"
    ) -> None:
        """To the DLQ with bounded headers; a full DLQ parks it in the longest retry tier."""
        parking = (delivery.routing_key or "", max(self.settings.retry_delays_ms()))
        await send_to_dlq(
            self.publisher, delivery, reason, source=self.component, kind=kind, parking=parking
        )

    async def _requeue(self, delivery: AbstractIncomingMessage, retry: Retry) -> None:
        """Send the delivery, unchanged and with the same attempt, through a retry tier.

        Its headers are within `max_header_bytes`: a bigger delivery never gets this far.
        """
        log.info("re-queued without counting an attempt", reason=retry.reason)
        metrics.RETRIES.labels(self.component, "requeue").inc()
        await self.publisher.retry(
            redelivery_copy(delivery), delivery.routing_key or "", retry.delay_ms
        )
        await delivery.ack()


def seen_before(delivery: AbstractIncomingMessage, attempt: int) -> bool:
    """Whether this task may have run before: redelivered, retried, or back from a tier.

    Only then is Postgres asked whether its result is already recorded; a first delivery
    of a first attempt skips that round trip (a duplicate is caught by the lock and by the
    aggregator's idempotent insert).
    """
    return delivery.redelivered or attempt > 1 or "x-death" in (delivery.headers or {})


def attempt_of(delivery: AbstractIncomingMessage) -> int:
    """The attempt this delivery is (1 for a first delivery); bad headers count as 1."""
    raw = (delivery.headers or {}).get(ATTEMPT_HEADER, 1)
    try:
        return max(1, int(raw))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 1


async def _quietly(awaitable: object) -> None:
    try:
        await awaitable  # type: ignore[misc]
    except Exception as exc:  # a lock we cannot update expires by its TTL
        log.warning("lock update failed", error=str(exc))
