"""AMQP I/O: robust connections and a confirming publisher that speaks in project errors."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Sequence
from typing import Any

import aio_pika
import aiormq
import structlog
from aio_pika.abc import (
    AbstractChannel,
    AbstractRobustConnection,
)
from aio_pika.robust_connection import RobustConnection
from nacl.signing import SigningKey
from yarl import URL

from shared import metrics
from shared.coalesced_writes import CoalescingTransportFactory
from shared.constants import ATTEMPT_HEADER, TENANT_HEADER
from shared.deadletters import DeadLetterKind, dead_letter_headers, parking_headers
from shared.errors import BrokerUnavailable, PublishError, QueueFull
from shared.messages import Result, Task, encode
from shared.names import Names
from shared.signing import sign_task
from shared.transport import Delivery, Outbox

log = structlog.get_logger(__name__)

_CONNECTION_ERRORS = (
    aiormq.exceptions.AMQPConnectionError,
    aiormq.exceptions.ChannelInvalidStateError,
    aiormq.exceptions.ChannelClosed,
    ConnectionError,
    OSError,
    asyncio.TimeoutError,
    RuntimeError,  # aio-pika raises it when a channel has no transport during reconnect
)


class FailoverConnection(RobustConnection):
    """A robust connection over several nodes of a cluster: each attempt tries every URL once,
    starting after the node it last used, so a lost node is tried last, not first.

    aio-pika's robust connection takes one URL and reconnects to it alone; every (re)connect
    goes through its private `__connect_transport`, which reads `self.url`, so that is where
    the rotation happens (tests/integration/test_cluster.py fails if an upgrade moves it).
    """

    def __init__(self, urls: Sequence[str], **kwargs: Any) -> None:
        super().__init__(URL(urls[0]), **kwargs)
        # aio-pika passes what is in `kwargs` to aiormq's connection on every (re)connect;
        # its own parameters know no transport factory, so it goes in after they are parsed.
        self.kwargs["transport_factory"] = CoalescingTransportFactory()
        self._urls = [URL(u) for u in urls]
        self._current = 0

    def __del__(self) -> None:
        # aio-pika's own __del__ schedules close() on whatever loop is current, even one that
        # is not running (or none): the coroutine is then never awaited and Python reports it
        # from whichever code the garbage collector interrupts. Only a running loop can close.
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            return
        if running is self.loop:
            super().__del__()

    async def _RobustConnection__connect_transport(self) -> None:
        error: BaseException | None = None
        for step in range(len(self._urls)):
            index = (self._current + step + (1 if self.connection_attempt else 0)) % len(self._urls)
            self.url = self._urls[index]
            try:
                await super()._RobustConnection__connect_transport()  # type: ignore[misc]
            except _CONNECTION_ERRORS as exc:
                log.warning("broker node unreachable", node=self.url.host, port=self.url.port)
                error = exc
                continue
            self._current = index
            return
        assert error is not None
        raise error


async def connect(url: str | Sequence[str], name: str) -> AbstractRobustConnection:
    """A connection that re-establishes itself, its channels and consumers after a loss; with
    several URLs (nodes of one cluster), to whichever of them answers."""
    urls = [url] if isinstance(url, str) else list(url)
    connection = FailoverConnection(
        urls, client_properties={"connection_name": name}, reconnect_interval=1
    )
    try:
        await connection.connect(timeout=10)
    except BaseException as exc:
        # Cancelled or failed half-way (a caller shutting down while the broker is away): a
        # connection nobody holds would be closed by aio-pika's __del__, which can only
        # schedule that on a running loop and otherwise leaves a never-awaited close().
        await asyncio.shield(_close_quietly(connection))
        if isinstance(exc, _CONNECTION_ERRORS):
            raise BrokerUnavailable(f"cannot connect to RabbitMQ: {exc}") from exc
        raise
    return connection


async def _close_quietly(connection: AbstractRobustConnection) -> None:
    with contextlib.suppress(Exception):
        await connection.close()


JSON = "application/json"


def persistent_message(
    body: bytes, content_type: str | None = JSON, **properties: Any
) -> aio_pika.Message:
    """Every message the project publishes: persistent (it survives a broker restart), JSON
    unless a copy keeps its own content type; `properties` are aio_pika.Message's."""
    return aio_pika.Message(
        body,
        delivery_mode=aio_pika.DeliveryMode.PERSISTENT,
        content_type=content_type,
        **properties,
    )


def task_message(
    task: Task, attempt: int = 1, headers: dict[str, Any] | None = None
) -> aio_pika.Message:
    """The AMQP message of a task with its properties (docs/architecture.md §4.3)."""
    return persistent_message(
        encode(task),
        priority=task.priority,
        message_id=f"{task.session_id}:{task.component}",
        correlation_id=task.session_id,
        headers={
            "sessionId": task.session_id,
            "component": task.component,
            "planType": task.plan_type,
            ATTEMPT_HEADER: attempt,
            **(headers or {}),
        },
    )


def redelivery_copy(delivery: Delivery, headers: dict[str, Any] | None = None) -> aio_pika.Message:
    """A delivery republished as it came: body, properties and headers unchanged (or
    `headers` instead of its own)."""
    return persistent_message(
        delivery.body,
        delivery.content_type,
        priority=delivery.priority,
        message_id=delivery.message_id,
        correlation_id=delivery.correlation_id,
        headers=dict(delivery.headers or {}) if headers is None else headers,
    )


def result_message(
    result: Result, priority: int = 0, headers: dict[str, Any] | None = None
) -> aio_pika.Message:
    """A result carries its task's priority, so busy aggregators serve high tiers first."""
    return persistent_message(
        encode(result),
        priority=priority,
        message_id=f"{result.session_id}:{result.component}:{result.attempt}",
        correlation_id=result.session_id,
        headers=headers,
    )


class Publisher:
    """Publishes with confirms and `mandatory` on one channel; every send awaits its confirm."""

    def __init__(
        self,
        connection: AbstractRobustConnection,
        names: Names,
        timeout_s: float,
        reconnect_wait_s: float | None = None,
        urgent_priority: int | None = None,
        task_signer: SigningKey | None = None,
    ) -> None:
        self._connection = connection
        self.names = names
        # The API and media workers sign every task they publish (shared/signing.py).
        self._task_signer = task_signer
        # Results at or above this priority go to the urgent results queue (None: never).
        self._urgent_priority = urgent_priority
        self._timeout = timeout_s
        self._reconnect_wait = timeout_s if reconnect_wait_s is None else reconnect_wait_s
        self._channel: AbstractChannel | None = None
        self._renewing = asyncio.Lock()
        self._retiring: set[asyncio.Task[None]] = set()

    async def open(self) -> Publisher:
        self._channel = await self._connection.channel(
            publisher_confirms=True, on_return_raises=True
        )
        return self

    async def _publish(
        self, channel: AbstractChannel, exchange: str, routing_key: str, message: aio_pika.Message
    ) -> None:
        """Publish on aio-pika's underlying aiormq channel, without waiting for the frames to
        be written (`wait=False`), then for the confirm. aio-pika's `Exchange.publish` waits
        for the write, so a channel sends one publish per event-loop turn, and the four tasks
        of a session left in four socket writes; now they leave in one (shared.coalesced_writes).
        Flow control stays: the connection's frame queue is bounded, and a full one waits."""
        if channel.is_closed:
            raise aiormq.exceptions.ChannelInvalidStateError(f"{channel!r} closed")
        underlay = await channel.get_underlay_channel()
        await underlay.basic_publish(  # type: ignore[call-arg]  # `wait`: aiormq's Channel has it
            message.body,
            exchange=exchange,
            routing_key=routing_key,
            properties=message.properties,
            mandatory=True,
            timeout=self._timeout,
            wait=False,
        )

    async def send(self, exchange: str, routing_key: str, message: aio_pika.Message) -> None:
        """Publish and wait for the broker's confirm, or raise QueueFull / PublishError.

        A channel caught mid-recovery is waited for once (up to `reconnect_wait_s`), then the
        publish is retried: a duplicate is harmless downstream, a lost task is not.
        """
        for last_try in (False, True):
            channel = self._channel
            assert channel is not None, "Publisher.open() first"
            try:
                await self._publish(channel, exchange, routing_key, message)
                return
            except aiormq.exceptions.PublishError as exc:
                raise PublishError(
                    f"no queue is bound for {routing_key!r} on {exchange!r}"
                ) from exc
            except aiormq.exceptions.DeliveryError as exc:
                # A nack: no node took responsibility for the message, so it is not accepted.
                # Once more on a fresh channel (see _renew_channel); a full queue nacks again.
                await self._renew_channel(channel)
                if last_try:
                    raise QueueFull(
                        f"broker refused a message for {routing_key!r}: queue full or no quorum"
                    ) from exc
            except _CONNECTION_ERRORS as exc:
                if last_try or not await self._recovered():
                    raise BrokerUnavailable(
                        f"publishing to {routing_key!r} failed: {exc!r}"
                    ) from exc

    async def _renew_channel(self, nacked: AbstractChannel | None) -> None:
        """Publish on a fresh channel from now on. RabbitMQ 3.10 can keep nacking one quorum
        queue's publishes on a channel whose publish to it raced the election of its new
        leader (a node lost); a new channel reaches the new leader at once. The old channel is
        closed once the publishes still waiting on it have had their time."""
        async with self._renewing:
            if self._channel is not nacked:
                return  # a concurrent send renewed it already
            fresh = await self._connection.channel(publisher_confirms=True, on_return_raises=True)
            self._channel = fresh
        if nacked is not None:
            retire = asyncio.create_task(self._close_later(nacked))
            self._retiring.add(retire)
            retire.add_done_callback(self._retiring.discard)

    async def _close_later(self, channel: AbstractChannel) -> None:
        await asyncio.sleep(self._timeout)
        with contextlib.suppress(*_CONNECTION_ERRORS, aiormq.exceptions.AMQPError):
            await channel.close()

    async def _recovered(self) -> bool:
        """Wait for the robust channel to be restored after a connection loss."""
        assert self._channel is not None
        try:
            async with asyncio.timeout(self._reconnect_wait):
                await self._channel.ready()  # type: ignore[attr-defined]
        except _CONNECTION_ERRORS:  # includes the wait's own timeout
            return False
        return True

    async def task(self, task: Task, attempt: int = 1, tenant: str | None = None) -> None:
        """Sign (API, media workers) and publish a task; `tenant` goes in a header for
        operators looking for a tenant's dead letters."""
        if self._task_signer is not None:
            task = sign_task(self._task_signer, task)
        queue = self.names.task_queue(task.component, task.plan_type)
        headers = {TENANT_HEADER: tenant} if tenant else None
        await self.send(self.names.exchange, queue, task_message(task, attempt, headers))

    async def result(
        self, result: Result, priority: int = 0, headers: dict[str, Any] | None = None
    ) -> None:
        urgent = self._urgent_priority is not None and priority >= self._urgent_priority
        key = self.names.result_key(result.component, urgent)
        await self.send(self.names.exchange, key, result_message(result, priority, headers))

    async def retry(self, message: aio_pika.Message, routing_key: str, delay_ms: int) -> None:
        """Park a copy in the retry tier of `delay_ms`; it comes back to `routing_key`."""
        await self.send(self.names.retry_tier(delay_ms), routing_key, message)

    async def dead_letter(
        self,
        body: bytes,
        headers: dict[str, Any],
        reason: str,
        origin: str,
        priority: int | None = None,
    ) -> None:
        """Send a message to the DLQ with the reason in its headers, for inspection and replay
        (at `priority`, the original's, which a replay restores).

        Only a bounded whitelist of `headers` goes with it, so the letter always fits a frame;
        QueueFull when the DLQ is at its cap.
        """
        kept = dead_letter_headers(headers, reason, origin, int(time.time() * 1000))
        message = persistent_message(body, headers=kept, priority=priority)
        await self.send(self.names.dead_letters, self.names.dlq, message)

    async def close(self) -> None:
        """Close the publishing channel (the connection stays open)."""
        if self._channel is not None:
            await self._channel.close()
            self._channel = None


async def send_to_dlq(
    publisher: Outbox,
    delivery: Delivery,
    reason: str,
    *,
    source: str,
    kind: DeadLetterKind,
    park_ms: int,
    parking_key: bytes,
    returns_to: str | None = None,
) -> None:
    """Dead-letter `delivery` with bounded headers, then ack it.

    A full DLQ refuses the letter (reject-publish); the original is then not lost but parked
    in the retry tier of `park_ms`, returns to `returns_to` (default: the routing key it came
    with) and is dead-lettered again when it comes back: its marker is authenticated under
    `parking_key`, the key of this process's role that the consumer there checks it with.
    """
    log.warning("dead-lettering message", reason=reason, routing_key=delivery.routing_key)
    try:
        await publisher.dead_letter(
            delivery.body,
            dict(delivery.headers or {}),
            reason,
            delivery.routing_key or "",
            delivery.priority,
        )
    except QueueFull:
        log.error("DLQ full: message parked in a retry tier", reason=reason, delay_ms=park_ms)
        metrics.DLQ_FULL.labels(source).inc()
        home = (delivery.routing_key or "") if returns_to is None else returns_to
        # Marked, so that on its return it is dead-lettered again, not run or applied again
        # (a failed task's failure result is recorded: it would be skipped as done).
        marked = parking_headers(delivery.headers, reason, kind, delivery.body, parking_key)
        copy = redelivery_copy(delivery, marked)
        await publisher.retry(copy, home, park_ms)
    else:
        metrics.DEAD_LETTERS.labels(source, kind).inc()
    await delivery.ack()


async def reject_oversize(delivery: Delivery, why: str, source: str) -> None:
    """Reject unread: the broker dead-letters it through the queue's own route (`x-death`
    reason `rejected`), so this process never republishes a message too big to handle."""
    log.warning("oversize message rejected to its dead-letter route", reason=why)
    await delivery.reject(requeue=False)
    metrics.DEAD_LETTERS.labels(source, "oversize").inc()
