"""`Reject` anywhere in the chain: the delivery is poison and goes to the DLQ at once."""

from __future__ import annotations

from dataclasses import dataclass

import structlog

from shared.broker import send_to_dlq
from shared.deadletters import dead_letter_kind, marked_as_parked, parked_letter
from shared.errors import Reject
from shared.transport import Outbox
from workers.middleware.chain import Job, Next

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class DeadLetterParked:
    """A copy parked while the DLQ was full is back: it goes to the DLQ, not to the executor.

    Only a marker authenticated under `parking_key` (the component's result key, which this
    component's workers parked it with) counts; any other goes on as a normal delivery."""

    publisher: Outbox
    component: str
    park_ms: int
    parking_key: bytes

    async def __call__(self, job: Job, call_next: Next) -> None:
        delivery = job.delivery
        parked = parked_letter(delivery.headers, delivery.body, self.parking_key)
        if parked is None:
            if marked_as_parked(delivery.headers):
                log.warning("parking marker does not verify: handled as a normal delivery")
            await call_next(job)
            return
        reason, kind = parked
        await send_to_dlq(
            self.publisher,
            delivery,
            reason,
            source=self.component,
            kind=kind,
            park_ms=self.park_ms,
            parking_key=self.parking_key,
        )


@dataclass(frozen=True)
class DeadLetterOnReject:
    """Poison is dead-lettered; a full DLQ parks it for `park_ms` (shared.broker.send_to_dlq)."""

    publisher: Outbox
    component: str
    park_ms: int
    parking_key: bytes

    async def __call__(self, job: Job, call_next: Next) -> None:
        try:
            await call_next(job)
        except Reject as rejected:
            await send_to_dlq(
                self.publisher,
                job.delivery,
                rejected.reason,
                source=self.component,
                kind=dead_letter_kind(rejected.kind),
                park_ms=self.park_ms,
                parking_key=self.parking_key,
            )
