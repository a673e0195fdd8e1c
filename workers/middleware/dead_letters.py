"""`Reject` anywhere in the chain: the delivery is poison and goes to the DLQ at once."""

from __future__ import annotations

from dataclasses import dataclass

from shared.broker import Publisher, send_to_dlq
from shared.errors import Reject
from workers.middleware.chain import Job, Next


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
