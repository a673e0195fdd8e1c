"""The worker process: consume a component's six plan queues, schedule, run, shut down cleanly."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import asyncpg
import httpx
import structlog
from aio_pika.abc import AbstractQueue, AbstractRobustConnection

from shared import metrics
from shared.attempts import AttemptLog
from shared.broker import Publisher
from shared.constants import MEDIA_PREPROCESS, PLANS
from shared.heartbeat import Announce, Heartbeat, worker_id
from shared.house import House, open_house
from shared.job_queue import QueueGroup, TableConsumer, TablePublisher, dlq_caps_of, pool_size
from shared.keys import Keys
from shared.listener import Listener
from shared.messages import priority_of
from shared.names import Names
from shared.resources import Resources
from shared.settings import Settings
from shared.signing import media_signer, result_key, task_keys
from shared.transport import Delivery, Outbox
from shared.urgency import UrgentSignals, gate_for, precedence_followed
from workers.capabilities import announcer
from workers.executor import Executor, ExecutorContext, executor_for
from workers.handling import Authenticity, Execute, TaskHandler, steps_for
from workers.intake import Buffer, Intake
from workers.isolation import MAIN, AnalysisPool
from workers.middleware.attempts import RecordAttempt
from workers.middleware.locking import redis_locks
from workers.scheduling import FifoQueue, TierQueue
from workers.slots import Slots
from workers.warm import modules_for

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class WorkerOptions:
    component: str
    concurrency: int = 4
    prefetch: int = 5
    worker_id: str = field(default_factory=worker_id)


def plan_groups(
    names: Names, component: str, prefetch: int, urgent_priority: int | None
) -> list[QueueGroup]:
    """A component's plan queues as claim groups: those at or above `urgent_priority` and the
    rest (one group when nothing is urgent), each up to `prefetch` rows per queue."""
    urgent = [p for p in PLANS if urgent_priority is not None and priority_of(p) >= urgent_priority]
    groups = [[p for p in PLANS if p not in urgent], urgent]
    return [
        ([names.task_queue(component, p) for p in plans], prefetch * len(plans))
        for plans in groups
        if plans
    ]


class Worker:
    """Consumes `{prefix}.{component}.{1..6}`; free slots take the highest effective priority."""

    def __init__(
        self,
        settings: Settings,
        options: WorkerOptions,
        executor: Executor | None = None,
        announce: bool = True,
        warm: Sequence[str] | None = None,
    ) -> None:
        """`warm`: the analysers its analysis processes load first (default: its own
        component's; a WorkerGroup passes every component's, one fork server serving all)."""
        # Its own component's broker and Redis credentials, when the process has several.
        settings = settings.for_component(options.component)
        self.settings = settings
        self.options = options
        # False when a WorkerGroup announces this worker with the others of its process.
        self._announce = announce
        # Set once this worker consumes; `busy` counts its tasks running then.
        self.ready = asyncio.Event()
        self._preload = (MAIN, *(warm if warm is not None else modules_for([options.component])))
        self._slots: Slots | None = None
        self._executor = executor or executor_for(options.component)
        self.names = Names(settings.topology_prefix)
        # The keys of this worker's role, checked before anything is opened (MissingCredential).
        self._task_keys = task_keys(settings, options.component)
        self._result_key = result_key(settings, options.component)
        # Media workers dispatch the four analysis tasks: signed with their own key.
        media = options.component == MEDIA_PREPROCESS
        self._task_signer = media_signer(settings) if media else None
        # Without the scheduler, no tier is urgent: plain consumption, for comparison.
        self._urgent_priority = settings.urgent_threshold
        buffer: Buffer[Delivery] = (
            TierQueue(settings.aging_per_s, urgent_at=self._urgent_priority)
            if settings.scheduler_enabled
            else FifoQueue()
        )
        self._gate = gate_for(settings)
        self._intake = Intake(buffer, self._gate)
        self._urgent_slots = settings.urgent_slots if self._urgent_priority is not None else 0
        self._consumers: list[tuple[AbstractQueue, str]] = []
        self._table: TableConsumer | None = None  # the table transport's consumer

    async def run(self, stop: asyncio.Event, listener: Listener | None = None) -> None:
        """Serve until `stop` is set, then drain gracefully. `listener`: its process's LISTEN
        connection, when a WorkerGroup shares one among its components (any role may LISTEN)."""
        opts, settings = self.options, self.settings
        async with Resources() as opened:
            listener = listener or opened.listener(settings.database_url)
            on_table = settings.transport == "postgres"
            connection = (
                None
                if on_table
                else await opened.broker(
                    settings.amqp_urls(), f"worker:{opts.component}:{opts.worker_id}"
                )
            )
            # On the table transport the claims, settlements and publishes use the pool too
            # (and the house, without Redis: heartbeats, attempts, signals).
            size = pool_size(max(2, opts.concurrency), settings.transport)
            pool = await opened.pool(settings.database_url, max_size=size)
            house = await open_house(opened, settings, pool, listener=listener)
            http = opened.http()
            analysis = opened.closes(
                AnalysisPool(
                    settings.analysis_processes_for(opts.concurrency + self._urgent_slots),
                    preload=self._preload,
                ),
                lambda a: a.close(),
            )
            publisher: Outbox
            if connection is None:
                publisher = TablePublisher(
                    pool,
                    self.names,
                    urgent_priority=self._urgent_priority,
                    task_signer=self._task_signer,
                    dlq_caps=dlq_caps_of(settings),
                )
            else:
                publisher = await Publisher(
                    connection,
                    self.names,
                    settings.publish_timeout_s,
                    urgent_priority=self._urgent_priority,
                    task_signer=self._task_signer,
                ).open()
            context = ExecutorContext(
                settings,
                house.media_cache,
                pool,
                http,
                publisher.task,
                opts.worker_id,
                analysis=analysis,
            )
            # Locks and attempts share batches of Redis commands (the house's: closed before
            # Redis is, so what is still on its way is written first).
            locks = (
                redis_locks(house.redis, settings.key_prefix, settings.lock_ttl_ms, house.batches)
                if house.redis is not None and not on_table
                else None
            )
            attempt_log = AttemptLog(house.shelf, Keys(settings.key_prefix))
            steps = steps_for(
                settings,
                opts.component,
                publisher,
                locks,
                pool,
                opts.worker_id,
                Authenticity(self._task_keys, self._result_key),
                RecordAttempt(attempt_log, opts.worker_id),
            )
            handler = TaskHandler(steps, Execute(self._executor, context))
            # Before consuming: a task's timeout must not run while the processes start.
            await analysis.start()
            if connection is None:
                # Stopped on any exit; a clean one stops it earlier (_shutdown).
                self._table = opened.closes(
                    self._table_consumer(pool, listener),
                    TableConsumer.stop,
                )
                await self._table.start()
            else:
                await self._consume(connection)
            slots = Slots(
                self._intake,
                self._gate,
                handler.handle,
                concurrency=opts.concurrency,
                urgent=self._urgent_slots,
                grace_s=settings.shutdown_grace_s,
            )
            slots.start()
            self._slots = slots
            self.ready.set()
            log.info(
                "worker ready",
                component=opts.component,
                concurrency=opts.concurrency,
                prefetch=opts.prefetch,
            )
            # Urgent sessions in flight anywhere hold this worker's lower-tier starts back.
            # The stop is honoured before the helpers are torn down: their exits (a last
            # heartbeat write, a cancelled listener) may take seconds on a loaded machine,
            # and buffered tasks must not start meanwhile. The heartbeat keeps reporting the
            # tasks that finish in the grace period, and says "stopped" once they have.
            async with self._precedence(house), self._heartbeat(house, http):
                await stop.wait()
                await self._shutdown(slots)

    @property
    def busy(self) -> int:
        """Tasks this worker runs now (0 before it consumes)."""
        return self._slots.busy if self._slots is not None else 0

    def announcer(self, http: httpx.AsyncClient) -> Announce:
        """What this worker says of itself with each beat (its own, or its group's)."""
        opts = self.options
        return announcer(self.settings, http, opts.component, opts.concurrency, opts.prefetch)

    def _heartbeat(
        self, house: House, http: httpx.AsyncClient
    ) -> contextlib.AbstractAsyncContextManager[None]:
        if not self._announce:
            return contextlib.nullcontext()
        return Heartbeat(
            house.shelf, self.settings.key_prefix, self.announcer(http), lambda: self.busy
        ).running()

    def _precedence(self, house: House) -> contextlib.AbstractAsyncContextManager[None]:
        """Feeds the gate while the worker serves (without the scheduler nothing is urgent)."""
        if self._urgent_priority is None:
            return contextlib.nullcontext()
        signals = UrgentSignals(house.channels, self.settings.key_prefix)
        return precedence_followed(self._gate, signals)

    async def _consume(self, connection: AbstractRobustConnection) -> None:
        channel = await connection.channel()
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

    def _table_consumer(self, pool: asyncpg.Pool, listener: Listener) -> TableConsumer:
        """The table transport: claims rows of the six plan queues in two groups, the urgent
        plans and the others, each holding at most a prefetch per queue (as a broker
        consumer's prefetch per plan queue does), so a backlog of lower plans never keeps an
        urgent task from the urgent slots; the claim takes the highest plans first. A task
        settled with its result stays `answered` until the aggregator records the result."""
        opts, settings = self.options, self.settings
        return TableConsumer(
            pool,
            listener,
            plan_groups(self.names, opts.component, opts.prefetch, self._urgent_priority),
            self._on_delivery,
            consumer_id=f"{opts.component}:{opts.worker_id}",
            lease_s=settings.job_lease_s,
            poll_s=settings.job_poll_s,
            aging_per_s=settings.aging_per_s,
            ttl_s=settings.queue_message_ttl_ms / 1000,
            delivery_limit=settings.queue_delivery_limit,
            answers=(self.names.results, self.names.urgent_results),
        )

    async def _on_delivery(self, delivery: Delivery) -> None:
        if delivery.redelivered:
            metrics.REDELIVERIES.labels(self.options.component).inc()
        self._intake.put(delivery, delivery.priority or 0, time.monotonic())

    async def _shutdown(self, slots: Slots) -> None:
        """Stop claiming and consuming, re-queue what never started, let running tasks end."""
        self._intake.close()
        for queue, tag in self._consumers:
            with contextlib.suppress(Exception):
                await queue.cancel(tag)
        if self._table is not None:
            await self._table.stop_claiming()
        await slots.stop()
        if self._table is not None:  # rows still held (a task past its grace) lapse later
            await self._table.stop()
        log.info("worker stopped", component=self.options.component)
