"""The dead-letter queue for operators: list what is there and why, replay it to its queue."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aio_pika import Message
from aio_pika.abc import AbstractIncomingMessage

from shared.broker import JSON, Publisher, persistent_message
from shared.constants import ATTEMPT_HEADER, ORIGIN_HEADER, REASON_HEADER
from shared.names import Names
from shared.resources import Resources
from shared.settings import Settings


@dataclass(frozen=True)
class DeadLetter:
    """One message in the DLQ: where it came from and why it is there."""

    origin: str
    reason: str
    size: int
    preview: str


def origin_of(headers: dict[str, Any]) -> str:
    """The routing key to replay to: ours when we dead-lettered it, else RabbitMQ's x-death."""
    if headers.get(ORIGIN_HEADER):
        return str(headers[ORIGIN_HEADER])
    deaths = headers.get("x-death") or []
    if deaths and deaths[0].get("routing-keys"):
        return str(deaths[0]["routing-keys"][0])
    return ""


def reason_of(headers: dict[str, Any]) -> str:
    if headers.get(REASON_HEADER):
        return str(headers[REASON_HEADER])
    deaths = headers.get("x-death") or []
    return f"{deaths[0].get('reason')} in {deaths[0].get('queue')}" if deaths else "unknown"


def describe(message: AbstractIncomingMessage) -> DeadLetter:
    headers = dict(message.headers or {})
    body = message.body.decode("utf-8", "replace")
    return DeadLetter(origin_of(headers), reason_of(headers), len(message.body), body[:120])


async def inspect(settings: Settings, limit: int) -> list[DeadLetter]:
    """Up to `limit` dead letters, left in place (fetched, then given back)."""
    async with Resources() as opened:
        connection = await opened.broker(settings.amqp_urls(), "dlq-inspect")
        channel = await connection.channel()
        await channel.set_qos(prefetch_count=limit)
        queue = await channel.declare_queue(Names(settings.topology_prefix).dlq, passive=True)
        held: list[AbstractIncomingMessage] = []
        while len(held) < limit and (message := await queue.get(fail=False)) is not None:
            held.append(message)
        found = [describe(m) for m in held]
        for message in held:  # unacked: closing the channel returns them, order kept
            await message.nack(requeue=True)
        return found


async def replay(settings: Settings, limit: int, reason_contains: str | None = None) -> int:
    """Send dead letters back to their queue as a fresh first attempt; the count replayed."""
    names = Names(settings.topology_prefix)
    replayed = 0
    async with Resources() as opened:
        connection = await opened.broker(settings.amqp_urls(), "dlq-replay")
        publisher = await Publisher(connection, names, settings.publish_timeout_s).open()
        channel = await connection.channel()
        queue = await channel.declare_queue(names.dlq, passive=True)
        skipped = []
        for _ in range(limit):
            message = await queue.get(fail=False)
            if message is None:
                break
            letter = describe(message)
            if not letter.origin or (reason_contains and reason_contains not in letter.reason):
                skipped.append(message)
                continue
            await publisher.send(names.exchange, letter.origin, _fresh(message))
            await message.ack()
            replayed += 1
        for message in skipped:
            await message.nack(requeue=True)
    return replayed


def _fresh(message: AbstractIncomingMessage) -> Message:
    headers = {
        k: v
        for k, v in (message.headers or {}).items()
        if k
        not in (
            REASON_HEADER,
            ORIGIN_HEADER,
            "x-death",
            "x-first-death-exchange",
            "x-first-death-queue",
            "x-first-death-reason",
            "x-last-death-exchange",
            "x-last-death-queue",
            "x-last-death-reason",
        )
    }
    headers[ATTEMPT_HEADER] = 1
    return persistent_message(
        message.body,
        message.content_type or JSON,
        priority=message.priority,
        message_id=message.message_id,
        correlation_id=message.correlation_id,
        headers=headers,
    )
