"""The worker process: consume a component's six plan queues, schedule, run, shut down cleanly."""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass, field

import httpx
import structlog
from aio_pika.abc import AbstractIncomingMessage, AbstractQueue
from redis.asyncio import Redis

from shared import db as database
from shared.broker import Publisher, connect
from shared.constants import PLANS
from shared.heartbeat import Heartbeat, worker_id
from shared.names import Names
from shared.settings import Settings
from shared.urgency import UrgentSignals, follow_precedence, gate_for
from workers.executor import Executor, ExecutorContext, executor_for
from workers.handling import TaskHandler
from workers.isolation import AnalysisPool
from workers.scheduling import FifoQueue, TierQueue

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class WorkerOptions:
    component: str
    concurrency: int = 4
    prefetch: int = 5
    worker_id: str = field(default_factory=worker_id)


class Worker:
    """Consumes `{prefix}.{component}.{1..6}`; free slots take the highest effective priority."""

    def __init__(
        self, settings: Settings, options: WorkerOptions, executor: Executor | None = None
    ) -> None:
        self.settings = settings
        self.options = options
        self._executor = executor or executor_for(options.component)
        self.names = Names(settings.topology_prefix)
        # Without the scheduler, no tier is urgent: plain consumption, for comparison.
        self._urgent_priority = settings.urgent_threshold
        self._buffer: TierQueue[AbstractIncomingMessage] | FifoQueue[AbstractIncomingMessage] = (
            TierQueue(settings.aging_per_s, urgent_at=self._urgent_priority)
            if settings.scheduler_enabled
            else FifoQueue()
        )
        # One permit per buffered delivery no slot has claimed yet.
        self._available = asyncio.Semaphore(0)
        self._urgent_waiting = asyncio.Event()
        self._gate = gate_for(settings)
        self._consumers: list[tuple[AbstractQueue, str]] = []
        self._running: set[asyncio.Task[None]] = set()
        self._stopping = False

    async def run(self, stop: asyncio.Event) -> None:
        """Serve until `stop` is set, then drain gracefully."""
        opts = self.options
        connection = await connect(
            self.settings.amqp_url, f"worker:{opts.component}:{opts.worker_id}"
        )
        redis = Redis.from_url(self.settings.redis_url)
        pool = await database.create_pool(
            self.settings.database_url, max_size=max(2, opts.concurrency)
        )
        http = httpx.AsyncClient(timeout=httpx.Timeout(30.0, connect=5.0))
        task_slots = opts.concurrency + (
            self.settings.urgent_slots if self._urgent_priority is not None else 0
        )
        analysis = AnalysisPool(self.settings.analysis_processes_for(task_slots))
        try:
            publisher = await Publisher(
                connection,
                self.names,
                self.settings.publish_timeout_s,
                urgent_priority=self._urgent_priority,
            ).open()
            context = ExecutorContext(
                self.settings, redis, pool, http, publisher.task, opts.worker_id, analysis=analysis
            )
            handler = TaskHandler(
                self.settings,
                opts.component,
                publisher,
                redis,
                pool,
                context,
                self._executor,
                opts.worker_id,
            )
            # Before consuming: a task's timeout must not run while the processes start.
            await analysis.start()
            await self._consume(connection)
            heartbeat = Heartbeat(
                redis, self.settings.key_prefix, opts.worker_id, opts.component, opts.concurrency
            )
            slots = [asyncio.create_task(self._slot(handler)) for _ in range(opts.concurrency)]
            if self._urgent_priority is not None:
                slots += [
                    asyncio.create_task(self._urgent_slot(handler))
                    for _ in range(self.settings.urgent_slots)
                ]
            log.info(
                "worker ready",
                component=opts.component,
                concurrency=opts.concurrency,
                prefetch=opts.prefetch,
            )
            # Urgent sessions in flight anywhere hold this worker's lower-tier starts back.
            followers = (
                follow_precedence(self._gate, UrgentSignals(redis, self.settings.key_prefix))
                if self._urgent_priority is not None
                else []
            )
            async with heartbeat.running():
                await stop.wait()
            for follower in followers:
                follower.cancel()
            await self._shutdown(slots)
        finally:
            await analysis.close()
            await http.aclose()
            await pool.close()
            await redis.aclose()
            await connection.close()

    async def _consume(self, connection: object) -> None:
        channel = await connection.channel()  # type: ignore[attr-defined]
        # Prefetch is per consumer: each plan queue keeps its own small buffer, so a newly
        # arrived enterprise task is delivered even while freemium deliveries fill theirs.
        await channel.set_qos(prefetch_count=self.options.prefetch)
        for plan in PLANS:
            # A passive declare registers the queue with the robust channel, which then
            # re-creates the consumer after a reconnect (get_queue(ensure=False) would not).
            queue = await channel.declare_queue(
                self.names.task_queue(self.options.component, plan), passive=True
            )
            tag = await queue.consume(self._on_delivery)
            self._consumers.append((queue, tag))

    async def _on_delivery(self, delivery: AbstractIncomingMessage) -> None:
        self._buffer.push(delivery, delivery.priority or 0, time.monotonic())
        self._available.release()
        self._gate.arrived(delivery.priority or 0)
        if self._gate.urgent(delivery.priority or 0):
            self._urgent_waiting.set()

    async def _slot(self, handler: TaskHandler) -> None:
        while not self._stopping:  # a slot whose task ends after SIGTERM leaves, never waits
            await self._available.acquire()
            # The slot waits before it picks: while urgent work is in flight a lower-tier
            # start is held back, and an urgent delivery arriving meanwhile is taken at once.
            await self._gate.admit(self._buffer.peek_priority)
            if self._stopping:
                return
            delivery = self._buffer.pop()
            if self._buffer.has_urgent():  # the urgent slot may have looked while we claimed
                self._urgent_waiting.set()
            await self._run(handler, delivery)

    async def _urgent_slot(self, handler: TaskHandler) -> None:
        """A slot beyond the concurrency that takes urgent deliveries only: an urgent task
        starts at once even while lower-tier tasks fill every other slot, and even when aging
        has put a lower-tier delivery ahead of it in the buffer."""
        while True:
            await self._urgent_waiting.wait()
            self._urgent_waiting.clear()
            while not self._stopping and self._buffer.has_urgent() and not self._available.locked():
                await self._available.acquire()  # free: no other slot runs in between
                await self._run(handler, self._buffer.pop_urgent())
            if self._stopping:
                return

    async def _run(self, handler: TaskHandler, delivery: AbstractIncomingMessage) -> None:
        """Handle one delivery; whatever goes wrong, it is acked, re-queued or handed back."""
        self._gate.started(delivery.priority or 0)
        job = asyncio.current_task()
        assert job is not None
        self._running.add(job)
        try:
            if delivery.channel.is_closed:
                return  # its channel died with a broker restart: the broker redelivers it
            await handler.handle(delivery)
        except Exception as exc:
            # Broker or storage gone mid-task: hand the delivery back. If its channel is
            # gone the nack fails, and the broker redelivers it anyway.
            log.error("task interrupted", error=repr(exc), routing_key=delivery.routing_key)
            with contextlib.suppress(Exception):
                await delivery.nack(requeue=True)
        finally:
            self._gate.finished(delivery.priority or 0)
            self._running.discard(job)

    async def _shutdown(self, slots: list[asyncio.Task[None]]) -> None:
        """Stop consuming, re-queue what never started, give running tasks the grace period."""
        self._stopping = True
        self._gate.open()
        for queue, tag in self._consumers:
            with contextlib.suppress(Exception):
                await queue.cancel(tag)
        for delivery in self._buffer.drain():
            with contextlib.suppress(Exception):
                await delivery.nack(requeue=True)
        idle = [s for s in slots if s not in self._running]
        for slot in idle:
            slot.cancel()
        busy = [s for s in slots if s in self._running]
        if busy:
            log.info(
                "waiting for running tasks", count=len(busy), grace_s=self.settings.shutdown_grace_s
            )
            _, late = await asyncio.wait(busy, timeout=self.settings.shutdown_grace_s)
            for slot in late:  # their deliveries stay unacked and return to the queue on close
                slot.cancel()
        await asyncio.gather(*slots, return_exceptions=True)
        log.info("worker stopped", component=self.options.component)
