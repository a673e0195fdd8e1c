"""One task, start to finish: a small core (run the executor) inside a list of steps.

The steps (workers/middleware, one module per concern) validate, dedupe, lock, report and
settle; the core only runs the executor under its timeout.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import asyncpg

from shared.errors import AnalysisTimeout
from shared.job_queue import deferring_writes
from shared.messages import Task
from shared.settings import Settings
from shared.signing import TaskKeys
from shared.transport import Delivery, Outbox
from workers.executor import Executor, ExecutorContext, task_timeout_s
from workers.middleware.attempts import RecordAttempt
from workers.middleware.authenticity import SignResults, VerifyTask
from workers.middleware.chain import Job, Lock, Next, Step, attempt_of, chain
from workers.middleware.dead_letters import DeadLetterOnReject, DeadLetterParked
from workers.middleware.dedupe import SkipFinished
from workers.middleware.locking import HoldLease, HoldLock, Watchdog
from workers.middleware.log_context import bind_log_context
from workers.middleware.metrics import count_outcome, time_execution
from workers.middleware.oversize import RejectOversize
from workers.middleware.parsing import ParseTask
from workers.middleware.reporting import Report, ReportSuccess
from workers.middleware.requeue import RequeueOnRetry
from workers.middleware.retries import DecideOnFailure


@dataclass(frozen=True)
class Execute:
    """The core: the executor's analysis of the task, or AnalysisTimeout past its limit."""

    executor: Executor
    context: ExecutorContext

    async def __call__(self, job: Job) -> None:
        timeout = task_timeout_s(job.task, self.context.settings)
        run = asyncio.ensure_future(self.executor(job.task, self.context))
        try:
            done, _ = await asyncio.wait({run}, timeout=timeout)
        finally:
            # Stopped (timeout, lock lost, shutdown): cancelling the run kills the process of
            # any analysis it waits for (workers.isolation), so nothing runs on behind it.
            run.cancel()
        if run not in done:
            raise AnalysisTimeout(timeout)
        job.analysis = run.result()


@dataclass(frozen=True)
class Authenticity:
    """The keys a worker checks tasks and signs results with."""

    task_keys: TaskKeys
    result_key: bytes


def steps_for(
    settings: Settings,
    component: str,
    publisher: Outbox,
    locks: Callable[[Task], Lock] | None,
    db: asyncpg.Pool,
    worker_id: str,
    keys: Authenticity,
    attempts: RecordAttempt | None = None,
) -> list[Step]:
    """The worker's steps, outermost first. Their order is the contract:

    - oversize is refused before anything reads the body; Retry and Reject, raised anywhere
      inside, become a re-queue and a dead letter;
    - the lock is held from before the run until the results are published and the
      delivery settled (exactly-once: a duplicate waits on the lock, or is skipped); on the
      table transport the lock is the claimed row's lease, and the results are written in
      the transaction that completes the row;
    - a step that must check or change the incoming task goes after ParseTask (it sees
      `job.delivery` and `job.task`); one that must see or change the outgoing results
      goes between Report and Watchdog (it sees `job.results` before they are published);
    - `attempts`, when given, notes each run once it is settled (inside the lock, so it
      sees retries and dead letters decided within); its log writes the note to Redis
      afterwards, off the task's path (shared/house.py).
    """
    park_ms = max(settings.retry_delays_ms())  # the longest tier: a full DLQ drains meanwhile
    # What this component's workers park, only they (and aggregators) can mark as parked.
    parking_key = keys.result_key
    return [
        RejectOversize(component, settings.max_header_bytes),
        DeadLetterParked(publisher, component, park_ms, parking_key),
        RequeueOnRetry(publisher, component),
        DeadLetterOnReject(publisher, component, park_ms, parking_key),
        ParseTask(publisher.names, component),
        VerifyTask(keys.task_keys),
        bind_log_context,
        count_outcome,
        SkipFinished(db, settings.lock_retry_ms),
        _exclusive(settings, locks),
        *([attempts] if attempts is not None else []),
        Report(publisher, component, park_ms, parking_key),
        SignResults(component, keys.result_key),
        Watchdog(settings.lock_retry_ms),
        DecideOnFailure(settings.max_attempts, settings.retry_base_ms, worker_id),
        ReportSuccess(worker_id),
        time_execution,
    ]


def _exclusive(settings: Settings, locks: Callable[[Task], Lock] | None) -> Step:
    """What keeps a task to one run at a time: the claimed row's lease on the table
    transport, a Redis lock per task on RabbitMQ (which always has Redis: `locks`)."""
    if settings.transport == "postgres":
        return HoldLease(settings.job_lease_s)
    if locks is None:
        raise ValueError("RabbitMQ workers need Redis locks")
    return HoldLock(locks, settings.lock_retry_ms)


class TaskHandler:
    """Takes one delivery through the steps to the core; it is acked, re-queued or
    dead-lettered, never left hanging."""

    def __init__(self, steps: Sequence[Step], core: Next) -> None:
        self._run = chain(steps, core)

    async def handle(self, delivery: Delivery) -> None:
        # A claimed row's publishes are written with its completion (shared.job_queue).
        with deferring_writes(delivery):
            await self._run(Job(delivery, attempt_of(delivery)))
