"""`Reject` anywhere in the chain: the delivery is poison and goes to the DLQ at once."""

from __future__ import annotations

from dataclasses import dataclass

from shared.broker import Publisher, send_to_dlq
from shared.deadletters import parked_letter
from shared.errors import Reject
from workers.middleware.chain import Job, Next


@dataclass(frozen=True)
class DeadLetterParked:
    """A copy parked while the DLQ was full is back: it goes to the DLQ, not to the executor."""

    publisher: Publisher
    component: str
    park_ms: int

    async def __call__(self, job: Job, call_next: Next) -> None:
        parked = parked_letter(job.delivery.headers)
        if parked is None:
            await call_next(job)
            return
        reason, kind = parked
        await send_to_dlq(
            self.publisher,
            job.delivery,
            reason,
            source=self.component,
            kind=kind,
            park_ms=self.park_ms,
        )


@dataclass(frozen=True)
class DeadLetterOnReject:
    """Poison is dead-lettered; a full DLQ parks it for `park_ms` (shared.broker.send_to_dlq)."""

    publisher: Publisher
    component: str
    park_ms: int

    async def __call__(self, job: Job, call_next: Next) -> None:
        try:
            await call_next(job)
        except Reject as rejected:
            await send_to_dlq(
                self.publisher,
                job.delivery,
                rejected.reason,
                source=self.component,
                kind="poison",
                park_ms=self.park_ms,
            )
