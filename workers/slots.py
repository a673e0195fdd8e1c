"""The worker's task slots: each runs one delivery at a time from the intake."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

import structlog

from shared.transport import Delivery
from shared.urgency import UrgentGate
from workers.intake import Intake
from workers.retry import earlier_deliveries, handback_pause_s

log = structlog.get_logger(__name__)

Handle = Callable[[Delivery], Awaitable[None]]
# How long an interrupted delivery waits before it is handed back (workers.retry).
Pause = Callable[[BaseException, int], float]


class Slots:
    """`concurrency` slots that take any delivery, plus `urgent` slots that take urgent ones
    only: an urgent task starts at once even while lower-tier tasks fill every other slot.
    At most `concurrency + urgent` deliveries are ever being handled."""

    def __init__(
        self,
        intake: Intake[Delivery],
        gate: UrgentGate,
        handle: Handle,
        *,
        concurrency: int,
        urgent: int = 0,
        grace_s: float,
        pause: Pause = handback_pause_s,
    ) -> None:
        self._intake = intake
        self._gate = gate
        self._handle = handle
        self._sizes = (concurrency, urgent)
        self._grace_s = grace_s
        self._pause = pause
        self._tasks: list[asyncio.Task[None]] = []
        self._running: set[asyncio.Task[None]] = set()  # slots handling a delivery now

    def start(self) -> None:
        concurrency, urgent = self._sizes
        self._tasks = [asyncio.create_task(self._slot()) for _ in range(concurrency)]
        self._tasks += [asyncio.create_task(self._urgent_slot()) for _ in range(urgent)]

    @property
    def busy(self) -> int:
        """Slots handling a delivery now."""
        return len(self._running)

    async def stop(self) -> None:
        """Re-queue what never started, give running tasks the grace period, then end."""
        self._intake.close()
        for delivery in self._intake.drain():
            with contextlib.suppress(Exception):
                await delivery.nack(requeue=True)
        for slot in self._tasks:
            if slot not in self._running:
                slot.cancel()
        busy = [s for s in self._tasks if s in self._running]
        if busy:
            log.info("waiting for running tasks", count=len(busy), grace_s=self._grace_s)
            _, late = await asyncio.wait(busy, timeout=self._grace_s)
            for slot in late:  # their deliveries stay unacked and return to the queue on close
                slot.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _slot(self) -> None:
        # A slot whose task ends after the stop leaves, never waits for another.
        while (delivery := await self._intake.claim()) is not None:
            await self._run(delivery)

    async def _urgent_slot(self) -> None:
        while (delivery := await self._intake.claim_urgent()) is not None:
            await self._run(delivery)

    async def _run(self, delivery: Delivery) -> None:
        """Handle one delivery; whatever goes wrong, it is acked, re-queued or handed back."""
        self._gate.started(delivery.priority or 0)
        job = asyncio.current_task()
        assert job is not None
        self._running.add(job)
        try:
            if delivery.channel.is_closed:
                return  # its channel died with a broker restart: the broker redelivers it
            await self._handle(delivery)
        except Exception as exc:
            # Broker or storage gone mid-task: hand the delivery back, after a pause when the
            # broker refused what it published (workers.retry.handback_pause_s). If its
            # channel is gone the nack fails, and the broker redelivers it anyway.
            log.error("task interrupted", error=repr(exc), routing_key=delivery.routing_key)
            earlier = earlier_deliveries(delivery.headers or {}, delivery.redelivered)
            pause = self._pause(exc, earlier)
            if pause > 0 and not delivery.channel.is_closed:
                await asyncio.sleep(pause)
            with contextlib.suppress(Exception):
                await delivery.nack(requeue=True)
        finally:
            self._gate.finished(delivery.priority or 0)
            self._running.discard(job)
