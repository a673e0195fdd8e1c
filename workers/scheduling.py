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
from dataclasses import dataclass, field
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


@dataclass(order=True)
class _Entry(Generic[T]):
    key: tuple[float, int]
    item: T = field(compare=False)
    priority: int = field(compare=False)
    taken: bool = field(default=False, compare=False)


class TierQueue(Generic[T]):
    """Buffered deliveries ordered by effective priority.

    Items at or above `urgent_at` are also kept in a heap of their own, so a slot reserved
    for urgent work finds the next urgent item even when aging has put a lower tier ahead
    of it. An item taken through one heap is marked and skipped in the other."""

    def __init__(self, aging_per_s: float, urgent_at: int | None = None) -> None:
        self._aging = aging_per_s
        self._urgent_at = urgent_at
        self._heap: list[_Entry[T]] = []
        self._urgent: list[_Entry[T]] = []
        self._seq = itertools.count()
        self._size = 0

    def push(self, item: T, priority: int, arrived_s: float) -> None:
        entry = _Entry(
            schedule_key(priority, arrived_s, self._aging, next(self._seq)), item, priority
        )
        heapq.heappush(self._heap, entry)
        if self._urgent_at is not None and priority >= self._urgent_at:
            heapq.heappush(self._urgent, entry)
        self._size += 1

    def pop(self) -> T:
        return self._take(self._heap)

    def pop_urgent(self) -> T:
        """The next item at or above `urgent_at` (IndexError when there is none)."""
        return self._take(self._urgent)

    def has_urgent(self) -> bool:
        return self._top(self._urgent) is not None

    def peek_priority(self) -> int:
        """Message priority of the item `pop` returns next (0 when empty)."""
        top = self._top(self._heap)
        return 0 if top is None else top.priority

    def drain(self) -> list[T]:
        """Remove and return everything still waiting."""
        items = [e.item for e in sorted(self._heap) if not e.taken]
        self._heap.clear()
        self._urgent.clear()
        self._size = 0
        return items

    def __len__(self) -> int:
        return self._size

    def _top(self, heap: list[_Entry[T]]) -> _Entry[T] | None:
        while heap and heap[0].taken:
            heapq.heappop(heap)
        return heap[0] if heap else None

    def _take(self, heap: list[_Entry[T]]) -> T:
        if self._top(heap) is None:
            raise IndexError("pop from an empty queue")
        entry = heapq.heappop(heap)
        entry.taken = True
        self._size -= 1
        return entry.item


class FifoQueue(Generic[T]):
    """Arrival order, ignoring priority: plain per-queue consumption, for comparison.

    Nothing is urgent here (the scheduler is off)."""

    def __init__(self) -> None:
        self._items: deque[tuple[T, int]] = deque()

    def has_urgent(self) -> bool:
        return False

    def pop_urgent(self) -> T:
        raise IndexError("nothing is urgent without the scheduler")

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
