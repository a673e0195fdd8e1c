"""Results waiting to be applied, in two lanes, each handed out as one batch. In memory.

Urgent (top-tier) results have a lane of their own: they are applied at once, beside the
batch of lower tiers in progress. A lane hands out everything it received meanwhile, so the
busier the aggregator, the bigger (and cheaper per result) its batches.
"""

from __future__ import annotations

import asyncio
from typing import Generic, TypeVar

T = TypeVar("T")


class Lane(Generic[T]):
    """Items waiting to be applied, handed out as one batch."""

    def __init__(self) -> None:
        self._items: list[T] = []
        self._ready = asyncio.Event()

    def put(self, item: T) -> None:
        self._items.append(item)
        self._ready.set()

    async def take(self) -> list[T]:
        """Everything put since the last take (waits for the first item)."""
        await self._ready.wait()
        self._ready.clear()
        batch, self._items = self._items, []
        return batch


class Lanes(Generic[T]):
    """The urgent lane and the other one, with a count of what is not applied yet: a
    stopping aggregator waits until everything delivered before its stop is applied."""

    def __init__(self) -> None:
        self._lanes: dict[bool, Lane[T]] = {urgent: Lane() for urgent in (True, False)}
        self._pending = 0
        self._idle = asyncio.Event()
        self._idle.set()

    def put(self, item: T, *, urgent: bool) -> None:
        self._pending += 1
        self._idle.clear()
        self._lanes[urgent].put(item)

    async def take(self, *, urgent: bool) -> list[T]:
        return await self._lanes[urgent].take()

    def done(self, batch: list[T]) -> None:
        """A batch taken is settled (applied, dead-lettered or handed back)."""
        self._pending -= len(batch)
        if not self._pending:
            self._idle.set()

    @property
    def pending(self) -> int:
        """Items put and not yet done."""
        return self._pending

    async def idle(self) -> None:
        """Return once every item put so far is done."""
        await self._idle.wait()
