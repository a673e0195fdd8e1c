"""Deliveries waiting for a worker slot, and the claims slots make on them. In memory.

Four things are kept in step here: the buffer (scheduling order), a semaphore with one
permit per buffered delivery no slot has claimed yet, an event that wakes the urgent slots,
and the urgent gate. The permit count is the invariant everything rests on: a slot that
holds a permit has a delivery reserved for it in the buffer, so an urgent slot may only
take a permit nobody holds (one is free), and never a delivery another slot counts on.
"""

from __future__ import annotations

import asyncio
from typing import Generic, Protocol, TypeVar

from shared.urgency import UrgentGate

T = TypeVar("T")


class Buffer(Protocol[T]):
    """What the intake needs of a buffer (workers.scheduling: TierQueue, FifoQueue)."""

    def push(self, item: T, priority: int, arrived_s: float) -> None: ...
    def pop(self) -> T: ...
    def pop_urgent(self) -> T: ...
    def has_urgent(self) -> bool: ...
    def peek_priority(self) -> int: ...
    def drain(self) -> list[T]: ...
    def __len__(self) -> int: ...


class Intake(Generic[T]):
    """Buffered deliveries handed to slots: highest effective priority first, lower tiers
    after the gate admits them, urgent ones also to the slots kept for them."""

    def __init__(self, buffer: Buffer[T], gate: UrgentGate) -> None:
        self._buffer = buffer
        self._gate = gate
        self._unclaimed = asyncio.Semaphore(0)
        self._urgent_waiting = asyncio.Event()
        self.stopped = False

    def put(self, delivery: T, priority: int, now_s: float) -> None:
        """A delivery arrived: buffer it, and wake whoever may take it."""
        self._buffer.push(delivery, priority, now_s)
        self._unclaimed.release()
        self._gate.arrived(priority)
        if self._gate.urgent(priority):
            self._urgent_waiting.set()

    async def claim(self) -> T | None:
        """The next delivery for a slot, once the gate lets it start; None once stopped.

        The slot waits before it picks: while urgent work is in flight a lower-tier start
        is held back, and an urgent delivery arriving meanwhile is taken at once."""
        if self.stopped:
            return None
        await self._unclaimed.acquire()
        try:
            await self._gate.admit(self._buffer.peek_priority)
        except BaseException:  # cancelled at the gate: the delivery stays for another slot
            self._unclaimed.release()
            raise
        if self.stopped:
            return None
        delivery = self._buffer.pop()
        if self._buffer.has_urgent():  # an urgent slot may have looked while we claimed
            self._urgent_waiting.set()
        return delivery

    async def claim_urgent(self) -> T | None:
        """The next urgent delivery nobody has claimed, even when aging put a lower tier
        ahead of it in the buffer; None once stopped."""
        while not self.stopped:
            if self._buffer.has_urgent() and not self._unclaimed.locked():
                await self._unclaimed.acquire()  # a free permit: returns without yielding
                return self._buffer.pop_urgent()
            await self._urgent_waiting.wait()
            self._urgent_waiting.clear()
        return None

    def close(self) -> None:
        """Claim nothing more: every start waiting at the gate is let through to find the
        intake closed (a delivery may still be put, to be drained)."""
        self.stopped = True
        self._gate.release_all()
        self._urgent_waiting.set()

    def drain(self) -> list[T]:
        """Everything never claimed, in scheduling order (to be handed back to the broker)."""
        return self._buffer.drain()

    def __len__(self) -> int:
        return len(self._buffer)
