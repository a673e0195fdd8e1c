"""Each run of a task is written down (shared/attempts.py) once it is settled: when it started,
on which worker, and how it ended, so a retried task's earlier attempts show in the console."""

from __future__ import annotations

import time
from dataclasses import dataclass

from shared.attempts import Attempt, AttemptEnd, AttemptLog
from shared.errors import Reject, Retry
from workers.middleware.chain import DeadLetter, Job, Next, NextAttempt


def attempt_end(job: Job) -> tuple[AttemptEnd, str]:
    """How a run the chain finished ended, and a detail a person can read."""
    settlement = job.settlement
    if isinstance(settlement, NextAttempt):
        return "retry", f"next attempt in {settlement.delay_ms} ms"
    if isinstance(settlement, DeadLetter):
        return "dead_letter", settlement.reason
    return job.outcome or "ok", ""


@dataclass(frozen=True)
class RecordAttempt:
    """Writes the attempt after the rest ran, a retry or a rejection raised inside included
    (handed to the log, which writes it without holding the task up)."""

    log: AttemptLog
    worker_id: str

    async def __call__(self, job: Job, call_next: Next) -> None:
        started = time.time()
        try:
            await call_next(job)
        except Retry as exc:
            await self._record(job, started, "retry", f"re-queued in {exc.delay_ms} ms: {exc}")
            raise
        except Reject as exc:
            await self._record(job, started, "dead_letter", exc.reason)
            raise
        await self._record(job, started, *attempt_end(job))

    async def _record(self, job: Job, started: float, end: AttemptEnd, detail: str) -> None:
        task = job.task
        entry = Attempt(job.attempt, self.worker_id, started, time.time(), end, detail)
        self.log.add(task.session_id, task.component, entry)
