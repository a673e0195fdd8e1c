"""The worker's intake: the permit count that keeps the buffer, the slots, the urgent slots
and the gate in step (workers.intake), with plain strings for deliveries."""

from __future__ import annotations

import asyncio

from shared.urgency import UrgentGate
from workers.intake import Intake
from workers.scheduling import FifoQueue, TierQueue

URGENT, LOW = 9, 1


def intake(aging_per_s: float = 0.0, max_hold_s: float = 30.0) -> tuple[Intake[str], UrgentGate]:
    gate = UrgentGate(threshold=8, max_hold_s=max_hold_s)
    return Intake(TierQueue(aging_per_s, urgent_at=8), gate), gate


async def settled() -> None:
    """Let every task that can run do so (no wall-clock wait)."""
    for _ in range(20):
        await asyncio.sleep(0)


async def test_slots_never_claim_more_deliveries_than_arrived():
    """Five slots, three deliveries: three claims return, two wait for the next arrival."""
    queue, _ = intake()
    for name in "abc":
        queue.put(name, LOW, 0.0)
    claims = [asyncio.create_task(queue.claim()) for _ in range(5)]
    await settled()
    done = [c for c in claims if c.done()]
    assert sorted(c.result() for c in done) == ["a", "b", "c"]
    queue.put("d", LOW, 1.0)
    await settled()
    assert sum(c.done() for c in claims) == 4 and len(queue) == 0
    for claim in claims:
        claim.cancel()


async def test_the_highest_tier_is_claimed_first():
    """Deliveries arriving together are claimed by tier, highest first."""
    queue, _ = intake()
    for name, priority in (("free", 1), ("pro", 5), ("enterprise", 10)):
        queue.put(name, priority, 0.0)
    assert [await queue.claim() for _ in range(3)] == ["enterprise", "pro", "free"]


async def test_the_gate_holds_a_lower_tier_start_while_urgent_work_runs_here():
    """Urgent work in flight: a lower-tier claim waits; it goes as soon as that work ends."""
    queue, gate = intake()
    gate.started(URGENT)
    queue.put("low", LOW, 0.0)
    claim = asyncio.create_task(queue.claim())
    await settled()
    assert not claim.done()
    gate.finished(URGENT)
    assert await asyncio.wait_for(claim, 5) == "low"


async def test_an_urgent_arrival_overtakes_a_lower_tier_start_held_at_the_gate():
    """A slot held at the gate for a low delivery takes an urgent one arriving meanwhile."""
    queue, gate = intake()
    gate.started(URGENT)
    queue.put("low", LOW, 0.0)
    claim = asyncio.create_task(queue.claim())
    await settled()
    queue.put("urgent", URGENT, 1.0)
    assert await asyncio.wait_for(claim, 5) == "urgent"
    assert len(queue) == 1


async def test_an_urgent_slot_takes_an_urgent_delivery_that_aging_put_behind_a_lower_one():
    """Aging has put a long-waiting low delivery first: the urgent slot still finds the
    urgent one, and the regular slot still gets the low one."""
    queue, _ = intake(aging_per_s=1.0)
    queue.put("old low", LOW, 0.0)
    queue.put("urgent", URGENT, 100.0)  # 100 s younger: behind the low one by aging
    assert await asyncio.wait_for(queue.claim_urgent(), 5) == "urgent"
    assert await asyncio.wait_for(queue.claim(), 5) == "old low"


async def test_an_urgent_slot_never_takes_a_delivery_a_waiting_slot_counts_on():
    """Every delivery is reserved by slots held at the gate: the urgent slot takes nothing,
    and the next arrival still goes to a slot (no permit was spent twice)."""
    queue, gate = intake(aging_per_s=1.0)
    gate.started(URGENT)
    queue.put("old low", LOW, 0.0)
    queue.put("urgent", URGENT, 100.0)
    held = [asyncio.create_task(queue.claim()) for _ in range(2)]
    urgent_slot = asyncio.create_task(queue.claim_urgent())
    await settled()
    assert not urgent_slot.done()
    gate.finished(URGENT)
    assert sorted(await asyncio.wait_for(asyncio.gather(*held), 5)) == ["old low", "urgent"]
    queue.put("next", LOW, 200.0)
    assert await asyncio.wait_for(queue.claim(), 5) == "next"
    assert not urgent_slot.done()
    urgent_slot.cancel()


async def test_a_slot_cancelled_at_the_gate_leaves_its_delivery_for_another():
    """Cancelled while held back, a slot gives its reservation back: the delivery is not
    stranded in the buffer."""
    queue, gate = intake()
    gate.started(URGENT)
    queue.put("low", LOW, 0.0)
    cancelled = asyncio.create_task(queue.claim())
    await settled()
    cancelled.cancel()
    await settled()
    gate.finished(URGENT)
    assert await asyncio.wait_for(queue.claim(), 5) == "low"


async def test_a_closed_intake_claims_nothing_and_hands_back_what_waits():
    """On close, slots held at the gate and urgent slots return None at once, new claims
    return None, and everything unclaimed is drained in scheduling order."""
    queue, gate = intake()
    gate.started(URGENT)
    queue.put("low", LOW, 0.0)
    queue.put("lower", 0, 0.0)
    held = asyncio.create_task(queue.claim())
    urgent_slot = asyncio.create_task(queue.claim_urgent())
    await settled()
    queue.close()
    assert await asyncio.wait_for(held, 5) is None
    assert await asyncio.wait_for(urgent_slot, 5) is None
    assert await queue.claim() is None
    assert queue.drain() == ["low", "lower"]


async def test_without_the_scheduler_deliveries_go_in_arrival_order_and_none_is_urgent():
    """FIFO buffer: arrival order whatever the tier, and the urgent slots take nothing."""
    queue = Intake(FifoQueue[str](), UrgentGate(threshold=11, max_hold_s=0.0))
    queue.put("first", 1, 0.0)
    queue.put("second", 10, 1.0)
    assert [await queue.claim() for _ in range(2)] == ["first", "second"]
