"""A message too big to handle is rejected before anything reads it."""

from __future__ import annotations

from dataclasses import dataclass

from shared.broker import reject_oversize
from shared.deadletters import oversize
from shared.messages import MAX_MESSAGE_BYTES
from workers.middleware.chain import Job, Next


@dataclass(frozen=True)
class RejectOversize:
    """Rejected unread to the queue's dead-letter route, never republished by us."""

    source: str
    max_header_bytes: int

    async def __call__(self, job: Job, call_next: Next) -> None:
        delivery = job.delivery
        too_big = oversize(
            delivery.body, delivery.headers, MAX_MESSAGE_BYTES, self.max_header_bytes
        )
        if too_big:
            await reject_oversize(delivery, too_big, self.source)
            return
        await call_next(job)
