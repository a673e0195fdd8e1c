"""What a task reports: its results, published before the delivery is settled."""

from __future__ import annotations

from dataclasses import dataclass

from shared.broker import send_to_dlq
from shared.constants import MEDIA_PREPROCESS
from shared.messages import success_result
from shared.transport import Outbox
from workers.middleware.chain import Ack, DeadLetter, Job, Next, NextAttempt, Outgoing


@dataclass(frozen=True)
class Report:
    """Publishes `job.results` with the task's priority, then applies `job.settlement`.

    Steps between this one and the executor see the results before they leave."""

    publisher: Outbox
    component: str
    park_ms: int  # a failed task the full DLQ refuses waits this long in a retry tier
    parking_key: bytes  # and is marked with this key (the component's result key)

    async def __call__(self, job: Job, call_next: Next) -> None:
        await call_next(job)
        for outgoing in job.results:
            await self.publisher.result(outgoing.result, job.task.priority, outgoing.headers)
        await self._settle(job)

    async def _settle(self, job: Job) -> None:
        delivery, settlement = job.delivery, job.settlement
        if isinstance(settlement, NextAttempt):
            await self.publisher.retry(
                settlement.message, delivery.routing_key or "", settlement.delay_ms
            )
        if isinstance(settlement, DeadLetter):
            await send_to_dlq(
                self.publisher,
                delivery,
                settlement.reason,
                source=self.component,
                kind=settlement.kind,
                park_ms=self.park_ms,
                parking_key=self.parking_key,
            )
        else:
            assert isinstance(settlement, Ack | NextAttempt)
            await delivery.ack()


@dataclass(frozen=True)
class ReportSuccess:
    """A run that returned an analysis reports it (media_preprocess reports through the
    tasks it dispatched instead) and acks."""

    worker_id: str

    async def __call__(self, job: Job, call_next: Next) -> None:
        await call_next(job)
        task, analysis = job.task, job.analysis
        if analysis is None:
            return
        if task.component != MEDIA_PREPROCESS:
            result = success_result(
                task, analysis.score, analysis.data, job.attempt, self.worker_id, job.elapsed_ms
            )
            job.results.append(Outgoing(result))
        job.settlement = Ack()
        job.outcome = "ok"
