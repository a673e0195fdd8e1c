"""The worker's slots over its intake (workers.slots), with fake deliveries and a handler
that runs until the test lets it finish."""

from __future__ import annotations

import asyncio
from typing import Any

from shared.errors import QueueFull
from shared.urgency import UrgentGate
from tests.unit.fakes import FakeChannel, FakeDelivery
from workers.intake import Intake
from workers.scheduling import TierQueue
from workers.slots import Slots

URGENT, LOW = 9, 1


class Handler:
    """Handles a delivery by waiting for `release`; records how many ran at once."""

    def __init__(self, fail: bool = False) -> None:
        self.release = asyncio.Event()
        self.started: list[str] = []
        self.finished: list[str] = []
        self.running = 0
        self.most = 0
        self.fail = fail

    async def __call__(self, delivery: Any) -> None:
        self.running += 1
        self.most = max(self.most, self.running)
        self.started.append(delivery.message_id)
        try:
            await self.release.wait()
            if self.fail:
                raise ConnectionError("broker gone mid-task")
            await delivery.ack()
            self.finished.append(delivery.message_id)
        finally:
            self.running -= 1


def world(
    handler: Handler, concurrency: int = 2, urgent: int = 0, grace_s: float = 5.0
) -> tuple[Intake[Any], Slots]:
    gate = UrgentGate(threshold=8, max_hold_s=0.0)  # no hold: the slots alone are tested
    intake: Intake[Any] = Intake(TierQueue(0.0, urgent_at=8), gate)
    slots = Slots(intake, gate, handler, concurrency=concurrency, urgent=urgent, grace_s=grace_s)
    return intake, slots


def deliver(intake: Intake[Any], name: str, priority: int = LOW, **kw: Any) -> FakeDelivery:
    delivery = FakeDelivery(b"{}", message_id=name, priority=priority, **kw)
    intake.put(delivery, priority, 0.0)
    return delivery


async def until(condition: Any) -> None:
    """Let the slots run until `condition()` holds (bounded: a broken feature fails, never
    hangs). Nothing here waits on a clock, so passes of the event loop are the measure."""
    for _ in range(10_000):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError("condition never met")


async def test_no_more_deliveries_run_at_once_than_there_are_slots():
    """Ten deliveries, two slots: two run at a time, and all ten are handled."""
    handler = Handler()
    intake, slots = world(handler, concurrency=2)
    for n in range(10):
        deliver(intake, f"d{n}")
    slots.start()
    await until(lambda: handler.running == 2)
    handler.release.set()
    await until(lambda: len(handler.finished) == 10)
    assert handler.most == 2
    await slots.stop()


async def test_an_urgent_delivery_starts_while_every_other_slot_is_busy():
    """Both slots run lower-tier work: the urgent slot starts the urgent delivery at once."""
    handler = Handler()
    intake, slots = world(handler, concurrency=2, urgent=1)
    deliver(intake, "low1")
    deliver(intake, "low2")
    slots.start()
    await until(lambda: handler.running == 2)
    deliver(intake, "urgent", URGENT)
    await until(lambda: "urgent" in handler.started)
    assert handler.running == 3 and slots.busy == 3
    handler.release.set()
    await slots.stop()


async def test_a_stop_hands_back_what_never_started_and_lets_running_tasks_finish():
    """On stop, waiting deliveries are nacked to their queue; a running one finishes
    within the grace period and is acked."""
    handler = Handler()
    intake, slots = world(handler, concurrency=1)
    running = deliver(intake, "running")
    waiting = deliver(intake, "waiting")
    slots.start()
    await until(lambda: handler.running == 1)
    stopping = asyncio.create_task(slots.stop())
    await until(lambda: waiting.events)
    handler.release.set()
    await asyncio.wait_for(stopping, 5)
    assert waiting.events == [("nack", True)] and running.events == ["ack"]


async def test_a_task_outliving_the_grace_period_is_cancelled_and_left_unacked():
    """Past the grace period a running task is cancelled; its delivery is neither acked
    nor nacked (it returns to the queue when the channel closes)."""
    handler = Handler()
    intake, slots = world(handler, concurrency=1, grace_s=0.01)
    stuck = deliver(intake, "stuck")
    slots.start()
    await until(lambda: handler.running == 1)
    await asyncio.wait_for(slots.stop(), 5)
    assert stuck.events == [] and handler.running == 0


async def test_a_task_interrupted_by_an_error_is_handed_back_and_the_slot_goes_on():
    """The handler raised (broker gone mid-task): nacked with requeue, next one handled."""
    handler = Handler(fail=True)
    handler.release.set()
    intake, slots = world(handler, concurrency=1)
    first = deliver(intake, "first")
    second = deliver(intake, "second")
    slots.start()
    await until(lambda: second.events)
    assert first.events == [("nack", True)] and second.events == [("nack", True)]
    await slots.stop()


async def test_a_delivery_the_broker_refused_waits_its_pause_before_it_is_handed_back():
    """The handler's publish was refused (QueueFull: a quorum queue electing a leader): the
    delivery is held for the pause its earlier deliveries give (x-delivery-count 3), then
    nacked; an interruption of another kind is handed back without one."""
    asked: list[tuple[str, int]] = []

    def pause(error: BaseException, earlier: int) -> float:
        asked.append((type(error).__name__, earlier))
        return 0.05 if isinstance(error, QueueFull) else 0.0

    class Refused(Handler):
        async def __call__(self, delivery: Any) -> None:
            if delivery.message_id == "refused":
                raise QueueFull("no quorum")
            self.release.set()  # the next delivery started: the first was handed back
            raise OSError("redis gone")

    handler = Refused()
    gate = UrgentGate(threshold=8, max_hold_s=0.0)
    intake: Intake[Any] = Intake(TierQueue(0.0, urgent_at=8), gate)
    slots = Slots(intake, gate, handler, concurrency=1, grace_s=5.0, pause=pause)
    refused = deliver(intake, "refused", headers={"x-delivery-count": 3})
    deliver(intake, "lost", redelivered=True)
    clock = asyncio.get_running_loop().time
    started = clock()
    slots.start()
    await asyncio.sleep(0.02)
    assert refused.events == []  # still held
    await asyncio.wait_for(handler.release.wait(), 5)
    assert refused.events == [("nack", True)] and clock() - started >= 0.05
    await until(lambda: len(asked) == 2)
    assert asked == [("QueueFull", 3), ("OSError", 1)]
    await slots.stop()


async def test_a_delivery_whose_channel_died_is_not_handled():
    """Its channel closed with a broker restart: the broker redelivers it, so the slot
    leaves it alone and takes the next."""
    handler = Handler()
    handler.release.set()
    intake, slots = world(handler, concurrency=1)
    deliver(intake, "orphan", channel=FakeChannel(is_closed=True))
    deliver(intake, "next")
    slots.start()
    await until(lambda: handler.finished == ["next"])
    assert handler.started == ["next"]
    await slots.stop()
