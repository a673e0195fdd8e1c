"""Worker-side scheduling across plan queues: highest tier first, aging, ties by arrival."""

import pytest

from workers.scheduling import FifoQueue, TierQueue, effective_priority


def test_highest_priority_is_taken_first():
    """An enterprise delivery that arrives last is still served first."""
    q: TierQueue[str] = TierQueue(aging_per_s=0)
    for i in range(5):
        q.push(f"free-{i}", 1, arrived_s=i)
    q.push("enterprise", 10, arrived_s=10)
    assert q.pop() == "enterprise"
    assert q.pop() == "free-0"


def test_equal_priorities_keep_arrival_order():
    """Ties go to whoever waited longest (then to insertion order)."""
    q: TierQueue[str] = TierQueue(aging_per_s=0.5)
    q.push("b", 4, arrived_s=2.0)
    q.push("a", 4, arrived_s=1.0)
    q.push("c", 4, arrived_s=2.0)
    assert [q.pop(), q.pop(), q.pop()] == ["a", "b", "c"]


def test_aging_lets_a_long_waiting_low_tier_overtake():
    """Freemium waiting 60 s at 0.2/s (1 + 12 = 13) beats a fresh enterprise task (10)."""
    q: TierQueue[str] = TierQueue(aging_per_s=0.2)
    q.push("old-freemium", 1, arrived_s=0.0)
    q.push("new-enterprise", 10, arrived_s=60.0)
    assert q.pop() == "old-freemium"
    assert effective_priority(1, 60, 0.2) > effective_priority(10, 0, 0.2)


def test_without_enough_waiting_the_high_tier_still_wins():
    """Aging is gradual: 10 s of waiting (1 + 2 = 3) does not beat enterprise."""
    q: TierQueue[str] = TierQueue(aging_per_s=0.2)
    q.push("freemium", 1, arrived_s=0.0)
    q.push("enterprise", 10, arrived_s=10.0)
    assert q.pop() == "enterprise"


def test_drain_returns_everything_in_schedule_order_and_empties():
    """Shutdown re-queues what never started."""
    q: TierQueue[str] = TierQueue(aging_per_s=0)
    q.push("low", 1, 0)
    q.push("high", 8, 1)
    assert q.drain() == ["high", "low"]
    assert len(q) == 0


def test_fifo_ignores_priority():
    """With the scheduler off, deliveries run in arrival order."""
    q: FifoQueue[str] = FifoQueue()
    q.push("free", 1, 0)
    q.push("enterprise", 10, 1)
    assert [q.pop(), q.pop()] == ["free", "enterprise"]


def test_peek_shows_the_priority_pop_would_take():
    """The urgent gate asks what is next in line before a slot picks it."""
    tiers: TierQueue[str] = TierQueue(aging_per_s=0)
    fifo: FifoQueue[str] = FifoQueue()
    assert tiers.peek_priority() == fifo.peek_priority() == 0
    for q in (tiers, fifo):
        q.push("free", 1, 0)
        q.push("enterprise", 10, 1)
    assert tiers.peek_priority() == 10
    assert fifo.peek_priority() == 1


def test_the_urgent_slot_finds_urgent_work_behind_an_aged_lower_tier():
    """Aging put an old freemium delivery first; the urgent heap still yields the business
    one, and the freemium delivery is then next for everyone else."""
    q: TierQueue[str] = TierQueue(aging_per_s=0.2, urgent_at=8)
    q.push("old-freemium", 1, arrived_s=0.0)
    q.push("business", 8, arrived_s=60.0)
    q.push("enterprise", 10, arrived_s=61.0)
    assert q.peek_priority() == 1 and q.has_urgent()
    assert q.pop_urgent() == "enterprise"  # highest effective priority among urgent items
    assert q.pop() == "old-freemium"
    assert q.pop() == "business"  # taken once only: the urgent heap skips it from now on
    assert not q.has_urgent() and len(q) == 0


def test_an_item_taken_by_the_urgent_slot_is_gone_for_the_others():
    """Both heaps hold it; taken through one, it is skipped in the other."""
    q: TierQueue[str] = TierQueue(aging_per_s=0, urgent_at=8)
    q.push("enterprise", 10, arrived_s=0)
    q.push("freemium", 1, arrived_s=0)
    assert q.pop_urgent() == "enterprise"
    assert len(q) == 1 and q.peek_priority() == 1
    assert q.drain() == ["freemium"]


def test_nothing_is_urgent_without_a_threshold_or_without_the_scheduler():
    """Scheduler off (arrival order) or no urgent priority: the urgent slot never takes."""
    q: TierQueue[str] = TierQueue(aging_per_s=0)
    q.push("enterprise", 10, arrived_s=0)
    assert not q.has_urgent()
    fifo: FifoQueue[str] = FifoQueue()
    fifo.push("enterprise", 10, arrived_s=0)
    assert not fifo.has_urgent()
    with pytest.raises(IndexError):
        fifo.pop_urgent()
