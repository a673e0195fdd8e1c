"""A run that raised: another attempt later, or a failure result (and maybe a dead letter)."""

from __future__ import annotations

from dataclasses import dataclass

import structlog

from shared import metrics
from shared.broker import task_message
from shared.deadletters import carried_headers
from shared.messages import failure_results
from workers.middleware.chain import Ack, DeadLetter, Job, Next, NextAttempt, Outgoing
from workers.retry import GiveUp, RetryLater, decide, describe

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class DecideOnFailure:
    """Turns an executor's error into the settlement `workers.retry.decide` chooses."""

    max_attempts: int
    retry_base_ms: int
    worker_id: str

    async def __call__(self, job: Job, call_next: Next) -> None:
        try:
            await call_next(job)
        except Exception as error:
            decision = decide(error, job.attempt, self.max_attempts, self.retry_base_ms)
            if isinstance(decision, RetryLater):
                self._retry_later(job, error, decision)
            else:
                self._give_up(job, decision)

    def _retry_later(self, job: Job, error: Exception, decision: RetryLater) -> None:
        log.warning("task failed, retrying", error=describe(error), delay_ms=decision.delay_ms)
        metrics.RETRIES.labels(job.task.component, "failure").inc()
        retry_task = job.task.model_copy(update={"retry_count": decision.attempt - 1})
        carried = carried_headers(job.delivery.headers)
        message = task_message(retry_task, decision.attempt, carried)
        job.settlement = NextAttempt(message, decision.delay_ms)

    def _give_up(self, job: Job, decision: GiveUp) -> None:
        log.error("task failed for good", reason=decision.reason)
        failures = failure_results(job.task, decision.user_reason, job.attempt, self.worker_id)
        job.results.extend(Outgoing(failure) for failure in failures)
        job.outcome = "failed"
        # Not replayable: the failure result is the whole answer.
        job.settlement = DeadLetter(decision.reason) if decision.replayable else Ack()
