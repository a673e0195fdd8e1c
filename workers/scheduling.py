"""Which buffered delivery a free worker slot takes next: highest tier first, with aging.

RabbitMQ has no priority across queues, and each plan queue holds a single priority,
so the worker orders deliveries itself. Effective priority is the message priority plus
`aging_per_s` for every second waited, so low tiers keep moving under steady high-tier
load. Because every waiting item ages at the same rate, ordering by
`priority - aging_per_s * arrived_at` is the same as ordering by effective priority at
any instant: the heap key never has to change.
"""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from typing import Generic, TypeVar

T = TypeVar("T")


def effective_priority(priority: int, waited_s: float, aging_per_s: float) -> float:
    """A delivery's priority after waiting `waited_s` seconds."""
    return priority + aging_per_s * waited_s


def schedule_key(
    priority: int, arrived_s: float, aging_per_s: float, seq: int
) -> tuple[float, int]:
    """Heap key: smallest first = highest effective priority; ties go to the earlier arrival."""
    return (-(priority - aging_per_s * arrived_s), seq)


class TierQueue(Generic[T]):
    """Buffered deliveries ordered by effective priority."""

    def __init__(self, aging_per_s: float) -> None:
        self._aging = aging_per_s
        self._heap: list[tuple[tuple[float, int], T, int]] = []
        self._seq = itertools.count()

    def push(self, item: T, priority: int, arrived_s: float) -> None:
        key = schedule_key(priority, arrived_s, self._aging, next(self._seq))
        heapq.heappush(self._heap, (key, item, priority))

    def pop(self) -> T:
        return heapq.heappop(self._heap)[1]

    def peek_priority(self) -> int:
        """Message priority of the item `pop` returns next (0 when empty)."""
        return self._heap[0][2] if self._heap else 0

    def drain(self) -> list[T]:
        """Remove and return everything still waiting."""
        items = [item for _, item, _ in sorted(self._heap)]
        self._heap.clear()
        return items

    def __len__(self) -> int:
        return len(self._heap)


class FifoQueue(Generic[T]):
    """Arrival order, ignoring priority: plain per-queue consumption, for comparison."""

    def __init__(self) -> None:
        self._items: deque[tuple[T, int]] = deque()

    def push(self, item: T, priority: int, arrived_s: float) -> None:
        self._items.append((item, priority))

    def pop(self) -> T:
        return self._items.popleft()[0]

    def peek_priority(self) -> int:
        return self._items[0][1] if self._items else 0

    def drain(self) -> list[T]:
        items = [item for item, _ in self._items]
        self._items.clear()
        return items

    def __len__(self) -> int:
        return len(self._items)
