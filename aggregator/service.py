"""The aggregator process: apply results exactly once, finalize overdue sessions."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable

import asyncpg
import structlog
from aio_pika.abc import AbstractRobustConnection

from aggregator.applier import Applier, Delivered, Storage, hand_back
from aggregator.explanation import explain
from aggregator.fanin import Explain
from aggregator.lanes import Lanes
from shared.background import in_background
from shared.broker import Publisher, reject_oversize
from shared.constants import MEDIA_INPUT_TYPES, MEDIA_PREPROCESS
from shared.deadletters import marked_as_parked, oversize, parked_letter
from shared.errors import InvalidMessage
from shared.heartbeat import Heartbeat, announcement, unchanged
from shared.house import open_house
from shared.job_queue import TableConsumer, TablePublisher, dlq_caps_of, pool_size
from shared.listener import Listener
from shared.messages import MAX_MESSAGE_BYTES, Result, decode_result
from shared.names import Names
from shared.resources import Resources
from shared.sessions import input_type_of
from shared.settings import Settings
from shared.signing import aggregator_parking_key, result_is_authentic, result_keys
from shared.transport import Delivery, Outbox
from shared.urgency import UrgentSignals, gate_for, precedence_followed

log = structlog.get_logger(__name__)

# How long a stopping aggregator waits for the ends of urgent sessions to be announced.
ENDS_GRACE_S = 2.0
UNAUTHENTICATED_RESULT = "unauthenticated result"


class Aggregator:
    """Consumes both results queues into two lanes and applies them (aggregator.applier)."""

    def __init__(self, settings: Settings, prefetch: int = 10, explain: Explain = explain) -> None:
        self.settings = settings
        self.prefetch = prefetch
        self.explain = explain
        self.names = Names(settings.topology_prefix)
        # Every component's result key: a result is applied only if its signature holds.
        self._result_keys = result_keys(settings)
        # Marks the results it parks; derived from all result keys, so no worker can forge it.
        self._parking_key = aggregator_parking_key(settings)
        # With the scheduler off no result is urgent: one lane, in arrival order.
        self._gate = gate_for(settings)
        self._lanes: Lanes[Delivered] = Lanes()
        self._applier: Applier | None = None  # built around the connections `run` opens

    async def run(self, stop: asyncio.Event) -> None:
        async with Resources() as opened:
            on_table = self.settings.transport == "postgres"
            connection = (
                None if on_table else await opened.broker(self.settings.amqp_urls(), "aggregator")
            )
            # On the table transport its claims and settlements use the pool too.
            size = pool_size(self.prefetch + 2, self.settings.transport)
            pool = await opened.pool(self.settings.database_url, max_size=size)
            house = await open_house(opened, self.settings, pool)
            http = opened.http()
            publisher: Outbox = (
                TablePublisher(pool, self.names, dlq_caps=dlq_caps_of(self.settings))
                if connection is None
                else await Publisher(connection, self.names, self.settings.publish_timeout_s).open()
            )
            # Before any consumer starts: an urgent batch announces its sessions' ends with it.
            applier = Applier(
                self.settings,
                Storage(pool, house, http, publisher),
                self._gate,
                self.explain,
                self._parking_key,
            )
            opened.closes(applier, lambda a: a.close())
            self._applier = applier
            if self.settings.urgent_threshold is not None:
                # Urgent sessions anywhere hold lower tiers back.
                signals = UrgentSignals(house.channels, self.settings.key_prefix)
                await opened.enter(precedence_followed(self._gate, signals))
            announced = announcement("aggregator", self.prefetch, input_types=())
            heartbeat = Heartbeat(
                house.shelf,
                self.settings.key_prefix,
                unchanged(announced),
                lambda: self._lanes.pending,
            )
            async with (
                in_background(applier.apply_lane(self._lanes, True), "urgent results"),
                in_background(applier.apply_lane(self._lanes, False), "results"),
                in_background(applier.janitor(stop), "janitor"),
                in_background(applier.keep_partitions_ahead(stop), "partitions"),
                in_background(applier.prune_jobs(stop), "job rows"),
            ):
                stop_consuming: Callable[[], Awaitable[None]]
                if connection is None:
                    table = opened.closes(
                        self._table_consumer(pool, opened.listener(self.settings.database_url)),
                        TableConsumer.stop,
                    )
                    await table.start()
                    stop_consuming = table.stop_claiming
                else:
                    stop_consuming = await self._consume(connection)
                log.info("aggregator ready", prefetch=self.prefetch)
                async with heartbeat.running():
                    await stop.wait()
                await stop_consuming()
                await self._lanes.idle()  # what was delivered before the cancel is applied
                # Holds lapse by themselves: a slow Redis need not delay the exit.
                await applier.ends_announced(ENDS_GRACE_S)
        log.info("aggregator stopped")

    async def _consume(self, connection: AbstractRobustConnection) -> Callable[[], Awaitable[None]]:
        """One consumer per results queue, each with its own prefetch: urgent results are
        delivered even while lower-tier ones fill the other buffer. A passive declare
        registers the queue, so the consumer is restored after a reconnect. Returns what
        cancels them."""
        channel = await connection.channel()
        await channel.set_qos(prefetch_count=self.prefetch)
        consumers = []
        for name in (self.names.urgent_results, self.names.results):
            queue = await channel.declare_queue(name, passive=True)
            consumers.append((queue, await queue.consume(self._on_result)))

        async def cancel() -> None:
            for queue, tag in consumers:
                await queue.cancel(tag)

        return cancel

    def _table_consumer(self, pool: asyncpg.Pool, listener: Listener) -> TableConsumer:
        """The table transport: claims rows of both results queues, each up to a prefetch of
        its own (urgent results are claimed even while others fill theirs)."""
        settings = self.settings
        return TableConsumer(
            pool,
            listener,
            [([self.names.urgent_results], self.prefetch), ([self.names.results], self.prefetch)],
            self._on_result,
            consumer_id=f"aggregator:{uuid.uuid4().hex[:12]}",
            lease_s=settings.job_lease_s,
            poll_s=settings.job_poll_s,
            aging_per_s=settings.aging_per_s,
            delivery_limit=settings.queue_delivery_limit,
        )

    async def _on_result(self, delivery: Delivery) -> None:
        """Route one delivery; one that cannot be routed (its dead letter not published, say)
        is nacked back to its queue rather than left unacked until the channel closes."""
        try:
            await self._route(delivery)
        except Exception:
            log.exception("result not routed, handed back", routing_key=delivery.routing_key)
            await hand_back([delivery])

    @staticmethod
    async def _may_report(applier: Applier, result: Result) -> bool:
        """Media workers report the failures of the four components of a media session only:
        their key must not fail another tenant's text session. (An unknown session passes:
        the fan-in sets its results aside.)"""
        if result.signed_by != MEDIA_PREPROCESS:
            return True
        input_type = await input_type_of(applier.storage.pool, result.session_id)
        return input_type is None or input_type in MEDIA_INPUT_TYPES

    async def _route(self, delivery: Delivery) -> None:
        applier = self._applier
        assert applier is not None, "consumers start after the applier"
        too_big = oversize(
            delivery.body, delivery.headers, MAX_MESSAGE_BYTES, self.settings.max_header_bytes
        )
        if too_big:  # unread, and never republished by us: the broker dead-letters it
            await reject_oversize(delivery, too_big, "aggregator")
            return
        parked = parked_letter(delivery.headers, delivery.body, self._parking_key)
        if parked is not None:  # back from a full DLQ: to the DLQ again, not applied
            await applier.dead_letter(delivery, *parked)
            return
        if marked_as_parked(delivery.headers):  # forged or altered: a result like any other
            log.warning("parking marker does not verify: handled as a normal result")
        try:
            result = decode_result(delivery.body)
            uuid.UUID(result.session_id)
        except (InvalidMessage, ValueError) as exc:
            await applier.dead_letter(delivery, str(exc), "poison")
            return
        if not result_is_authentic(self._result_keys, result) or not await self._may_report(
            applier, result
        ):
            await applier.dead_letter(delivery, UNAUTHENTICATED_RESULT, "unauthenticated")
            return
        self._lanes.put((delivery, result), urgent=self._gate.urgent(delivery.priority or 0))
