"""`Retry` anywhere in the chain: the delivery goes round a retry tier, attempt not counted."""

from __future__ import annotations

from dataclasses import dataclass

import structlog

from shared import metrics
from shared.broker import redelivery_copy
from shared.errors import Retry
from shared.transport import Outbox
from workers.middleware.chain import Job, Next

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class RequeueOnRetry:
    """Send the delivery, unchanged and with the same attempt, through the tier of the delay.

    Its headers are within `max_header_bytes`: a bigger delivery never gets this far."""

    publisher: Outbox
    component: str

    async def __call__(self, job: Job, call_next: Next) -> None:
        try:
            await call_next(job)
        except Retry as retry:
            delivery = job.delivery
            log.info("re-queued without counting an attempt", reason=retry.reason)
            metrics.RETRIES.labels(self.component, "requeue").inc()
            await self.publisher.retry(
                redelivery_copy(delivery), delivery.routing_key or "", retry.delay_ms
            )
            await delivery.ack()
