"""The DLQ as operators see it: list, view, replay and purge dead letters (`verdict dlq`, the
API's console).

Every operation takes an open aio-pika connection (the caller's, on the operator role's
credentials) and the deployment's names. A browse takes each letter with basic.get and holds
it unacked; at the end one nack(multiple, requeue) gives back those not replayed or purged,
and RabbitMQ requeues them at their former places, so order is kept. Nothing else consumes
the DLQ; two operations at once each see only the letters the other is not holding.

Bounded: an operation looks at no more than `scan` letters from the head, and none that
arrived after it began (one round trip each, held until it ends), so on a DLQ of 100,000 it
costs `scan` gets, not 100,000, and the outcome says how many letters it looked at and how
deep the DLQ was. Letters past the scan are
reached by replaying or purging the ones before them.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Final

import aiormq
from aio_pika import Message
from aio_pika.abc import AbstractChannel, AbstractIncomingMessage, AbstractRobustConnection

from shared.broker import JSON, Publisher, persistent_message
from shared.constants import (
    ATTEMPT_HEADER,
    DEAD_AT_HEADER,
    ORIGIN_HEADER,
    PARKED_HEADER,
    PARKED_KIND_HEADER,
    PARKED_MAC_HEADER,
    REASON_HEADER,
    REPLAYS_HEADER,
    TENANT_HEADER,
)
from shared.errors import BrokerUnavailable, DeadLetterQueueError, PublishError
from shared.names import Names

# Characters of a body shown in a listing; the whole body only when one letter is viewed.
PREVIEW_CHARS: Final = 200
# A header value shown longer than this is cut (x-death tables of the broker are small, but
# a letter rejected for its size may carry anything).
HEADER_VALUE_CHARS: Final = 1000
# Seconds to wait for the broker's confirm of one replayed letter.
REPLAY_CONFIRM_S: Final = 10.0
# Letters an operation looks at unless told otherwise (the DLQ_SCAN_LIMIT default).
DEFAULT_SCAN: Final = 1_000
# Seconds one basic.get may take: a DLQ busy putting back thousands of letters answers late.
GET_TIMEOUT_S: Final = 30.0
# Seconds an operation waits at its end for the letters it gave back to be ready again
# (10,000 took over 30 s on a heavily loaded two-core machine; 3,000 well under 1 s idle).
REQUEUE_WAIT_S: Final = 30.0
# What a letter carries about its death: dropped from a replayed copy, which starts afresh.
_DEATH_HEADERS: Final = frozenset(
    {
        REASON_HEADER,
        ORIGIN_HEADER,
        DEAD_AT_HEADER,
        PARKED_HEADER,
        PARKED_KIND_HEADER,
        PARKED_MAC_HEADER,
        "x-death",
        "x-first-death-exchange",
        "x-first-death-queue",
        "x-first-death-reason",
        "x-last-death-exchange",
        "x-last-death-queue",
        "x-last-death-reason",
    }
)


@dataclass(frozen=True)
class DeadLetter:
    """One message in the DLQ: where it came from, why it is there, what it is.

    `id` is derived from the letter's content and the time it died, so it is the same in
    every listing; byte-identical letters that died in the same millisecond (or, for the
    broker's own dead letters, second) share it. `body` is loaded only when one letter is
    viewed (`letter`), None in listings."""

    id: str
    origin: str
    reason: str
    attempt: int | None
    replays: int
    component: str | None
    tenant: str | None
    session_id: str | None
    plan: int | None
    priority: int | None
    age_s: float | None
    size: int
    preview: str
    headers: Mapping[str, Any]
    body: bytes | None = None


@dataclass(frozen=True)
class LetterFilter:
    """Which letters an operation applies to; every given condition must hold. Empty: all."""

    reason: str | None = None  # contained in the reason, case-insensitively
    component: str | None = None
    tenant: str | None = None
    min_age_s: float | None = None  # dead at least this long
    max_age_s: float | None = None  # dead at most this long
    ids: frozenset[str] = frozenset()


def matches(letter: DeadLetter, wanted: LetterFilter) -> bool:
    """Whether `letter` meets every condition of `wanted` (a letter of unknown age meets no
    age condition)."""
    age = letter.age_s
    return all(
        (
            not wanted.ids or letter.id in wanted.ids,
            wanted.reason is None or wanted.reason.lower() in letter.reason.lower(),
            wanted.component is None or letter.component == wanted.component,
            wanted.tenant is None or letter.tenant == wanted.tenant,
            wanted.min_age_s is None or (age is not None and age >= wanted.min_age_s),
            wanted.max_age_s is None or (age is not None and age <= wanted.max_age_s),
        )
    )


@dataclass(frozen=True)
class Listing:
    """Letters found, how many were looked at, and the DLQ's depth when the scan began."""

    letters: list[DeadLetter]
    scanned: int
    depth: int


@dataclass(frozen=True)
class ReplayOutcome:
    """Ids of the letters sent home, of those refused as loops (replayed `max_replays` times
    already; left in the DLQ), and of those that could not go home (no origin, no queue
    bound for it, or it is full; left in the DLQ)."""

    replayed: list[str] = field(default_factory=list)
    refused_loops: list[str] = field(default_factory=list)
    unroutable: list[str] = field(default_factory=list)
    scanned: int = 0
    depth: int = 0


# --- pure: reading a letter -------------------------------------------------------------


def origin_of(headers: Mapping[str, Any]) -> str:
    """The routing key to replay to: ours when we dead-lettered it, else RabbitMQ's x-death."""
    if headers.get(ORIGIN_HEADER):
        return str(headers[ORIGIN_HEADER])
    death = _first_death(headers)
    keys = death.get("routing-keys") or []
    return str(keys[0]) if keys else ""


def reason_of(headers: Mapping[str, Any]) -> str:
    """Why it is here: ours, or the broker's (`expired in analysis.claims.1`)."""
    if headers.get(REASON_HEADER):
        return str(headers[REASON_HEADER])
    death = _first_death(headers)
    return f"{death.get('reason')} in {death.get('queue')}" if death else "unknown"


def _first_death(headers: Mapping[str, Any]) -> Mapping[str, Any]:
    deaths = headers.get("x-death")
    if isinstance(deaths, list | tuple) and deaths and isinstance(deaths[0], Mapping):
        return deaths[0]
    return {}


def dead_at_s(headers: Mapping[str, Any], timestamp: datetime | None) -> float | None:
    """When the letter died (epoch seconds): our header, the broker's x-death time, else the
    message's own timestamp; None when nothing says."""
    ours = headers.get(DEAD_AT_HEADER)
    if isinstance(ours, int) and not isinstance(ours, bool):
        return ours / 1000
    when = _first_death(headers).get("time")
    if isinstance(when, datetime):
        return when.timestamp()
    return timestamp.timestamp() if timestamp is not None else None


def route_parts(names: Names, origin: str) -> tuple[str | None, int | None]:
    """(component, plan) from a task queue's routing key, (component, None) from a result's."""
    parts = origin.removeprefix(names.prefix + ".").split(".")
    if not origin.startswith(names.prefix + "."):
        return None, None
    if parts[0] == "results":
        return parts[-1], None
    if len(parts) == 2 and parts[1].isdigit():
        return parts[0], int(parts[1])
    return None, None


def letter_id(body: bytes, headers: Mapping[str, Any], message_id: str | None) -> str:
    """A short id that stays the same as long as the letter does (pure: content and death)."""
    death = _first_death(headers)
    facts = [
        hashlib.sha256(body).hexdigest(),
        message_id,
        origin_of(headers),
        reason_of(headers),
        headers.get(DEAD_AT_HEADER),
        str(death.get("time")),
        death.get("count"),
        headers.get(REPLAYS_HEADER),
    ]
    return hashlib.sha256(json.dumps(facts, default=str).encode()).hexdigest()[:16]


def describe(
    names: Names,
    body: bytes,
    headers: Mapping[str, Any],
    *,
    priority: int | None,
    message_id: str | None,
    timestamp: datetime | None,
    now: float,
) -> DeadLetter:
    """What a dead letter says about itself (pure)."""
    origin = origin_of(headers)
    component, plan = route_parts(names, origin)
    dead_at = dead_at_s(headers, timestamp)
    return DeadLetter(
        id=letter_id(body, headers, message_id),
        origin=origin,
        reason=reason_of(headers),
        attempt=_int(headers.get(ATTEMPT_HEADER)),
        replays=_int(headers.get(REPLAYS_HEADER)) or 0,
        component=_str(headers.get("component")) or component,
        tenant=_str(headers.get(TENANT_HEADER)),
        session_id=_str(headers.get("sessionId")),
        plan=_int(headers.get("planType")) or plan,
        priority=priority,
        age_s=None if dead_at is None else max(0.0, now - dead_at),
        size=len(body),
        preview=body[: PREVIEW_CHARS * 4].decode("utf-8", "replace")[:PREVIEW_CHARS],
        headers=_plain(headers),
    )


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: object) -> str | None:
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    return value if isinstance(value, str) and value else None


def _plain(value: Any) -> Any:
    """Headers as JSON-ready values, long strings cut (for display, never sent back)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, bytes | bytearray):
        value = bytes(value).decode("utf-8", "replace")
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, str):
        return value[:HEADER_VALUE_CHARS]
    if value is None or isinstance(value, bool | int | float):
        return value
    return str(value)[:HEADER_VALUE_CHARS]


def replayed_headers(headers: Mapping[str, Any], replays: int) -> dict[str, Any]:
    """A replayed copy's headers: its own without those of its death, a first attempt again,
    and one more replay counted."""
    kept = {k: v for k, v in headers.items() if k not in _DEATH_HEADERS}
    return {**kept, ATTEMPT_HEADER: 1, REPLAYS_HEADER: replays + 1}


def replay_copy(delivery: AbstractIncomingMessage, replays: int) -> Message:
    """The message a replay publishes: the letter's body and properties, its priority too."""
    return persistent_message(
        delivery.body,
        delivery.content_type or JSON,
        priority=delivery.priority,
        message_id=delivery.message_id,
        correlation_id=delivery.correlation_id,
        headers=replayed_headers(dict(delivery.headers or {}), replays),
    )


# --- I/O: browsing the queue ------------------------------------------------------------


class _Scan:
    """The letters of one operation, taken from the head and held; `close` returns those
    not settled, in their places."""

    def __init__(self, channel: AbstractChannel, names: Names, limit: int) -> None:
        self._channel = channel
        self._names = names
        self._limit = limit
        self.scanned = 0
        self.settled = 0
        self.depth = 0

    async def letters(self) -> AsyncIterator[tuple[DeadLetter, AbstractIncomingMessage]]:
        """Each (letter, delivery) up to the scan limit, oldest first."""
        with _in_words(self._names):
            queue = await self._channel.declare_queue(self._names.dlq, passive=True)
        self.depth = queue.declaration_result.message_count or 0
        now = time.time()
        # No further than the depth at the start: a replayed letter that dies again comes
        # back behind it and must not be replayed again by the same call.
        while self.scanned < min(self._limit, self.depth):
            with _in_words(self._names):
                delivery = await queue.get(fail=False, no_ack=False, timeout=GET_TIMEOUT_S)
            if delivery is None:
                return
            self.scanned += 1
            yield self._describe(delivery, now), delivery

    def _describe(self, delivery: AbstractIncomingMessage, now: float) -> DeadLetter:
        return describe(
            self._names,
            delivery.body,
            dict(delivery.headers or {}),
            priority=delivery.priority,
            message_id=delivery.message_id,
            timestamp=delivery.timestamp,
            now=now,
        )

    async def settle(self, delivery: AbstractIncomingMessage) -> None:
        """Remove this letter from the DLQ (replayed or purged)."""
        await delivery.ack()
        self.settled += 1

    async def close(self, connection: AbstractRobustConnection) -> None:
        if self._channel.is_closed:
            return
        underlay = await self._channel.get_underlay_channel()
        await underlay.basic_nack(delivery_tag=0, multiple=True, requeue=True)
        await self._channel.close()
        await self._returned(connection)

    async def _returned(self, connection: AbstractRobustConnection) -> None:
        """Wait (at most REQUEUE_WAIT_S) until the letters given back are ready again. The
        broker puts them back asynchronously, thousands take it seconds, and until then the
        next operation would see a DLQ short of them."""
        expected = self.depth - self.settled
        deadline = time.monotonic() + REQUEUE_WAIT_S
        channel = await connection.channel()
        try:
            while time.monotonic() < deadline:
                queue = await channel.declare_queue(self._names.dlq, passive=True)
                if (queue.declaration_result.message_count or 0) >= expected:
                    return
                await asyncio.sleep(0.1)
        finally:
            await channel.close()


@contextlib.contextmanager
def _in_words(names: Names) -> Iterator[None]:
    """The broker's refusals as the project's error, in an operator's words."""
    try:
        yield
    except aiormq.exceptions.ChannelNotFoundEntity as exc:
        raise DeadLetterQueueError(
            f"there is no DLQ {names.dlq!r}: is TOPOLOGY_PREFIX right, the topology declared?"
        ) from exc
    except aiormq.exceptions.ChannelAccessRefused as exc:
        raise DeadLetterQueueError(
            f"this user may not read {names.dlq!r}: use the operator role (OPERATOR_AMQP_URL)"
        ) from exc


async def _scan(connection: AbstractRobustConnection, names: Names, limit: int) -> _Scan:
    return _Scan(await connection.channel(), names, limit)


async def list_letters(
    connection: AbstractRobustConnection,
    names: Names,
    wanted: LetterFilter = LetterFilter(),
    limit: int = 50,
    scan: int = DEFAULT_SCAN,
) -> Listing:
    """Up to `limit` letters matching `wanted` among the first `scan`, oldest first; all
    are left in place and in order."""
    found: list[DeadLetter] = []
    held = await _scan(connection, names, scan)
    try:
        async for letter, _ in held.letters():
            if matches(letter, wanted):
                found.append(letter)
                if len(found) >= limit:
                    break
    finally:
        await held.close(connection)
    return Listing(found, held.scanned, held.depth)


async def letter(
    connection: AbstractRobustConnection, names: Names, letter_id: str, scan: int = DEFAULT_SCAN
) -> DeadLetter | None:
    """The letter with this id, body included, among the first `scan`; left in place."""
    held = await _scan(connection, names, scan)
    try:
        async for found, delivery in held.letters():
            if found.id == letter_id:
                return replace(found, body=delivery.body)
    finally:
        await held.close(connection)
    return None


async def replay(
    connection: AbstractRobustConnection,
    names: Names,
    wanted: LetterFilter,
    limit: int,
    max_replays: int,
    *,
    force: bool = False,
    scan: int = DEFAULT_SCAN,
) -> ReplayOutcome:
    """Send up to `limit` matching letters back to their origin queue at their priority, as
    a first attempt with one more replay counted; each leaves the DLQ once its copy is
    confirmed. A letter replayed `max_replays` times already is a loop: refused (left in
    place) unless `force`."""
    outcome = ReplayOutcome()
    publisher = await Publisher(connection, names, REPLAY_CONFIRM_S).open()
    held = await _scan(connection, names, scan)
    try:
        async for found, delivery in held.letters():
            if len(outcome.replayed) >= limit:
                break
            if not matches(found, wanted):
                continue
            if found.replays >= max_replays and not force:
                outcome.refused_loops.append(found.id)
                continue
            if await _sent_home(publisher, names, found, delivery):
                await held.settle(delivery)
                outcome.replayed.append(found.id)
            else:
                outcome.unroutable.append(found.id)
    finally:
        await held.close(connection)
        await publisher.close()
    return replace(outcome, scanned=held.scanned, depth=held.depth)


async def _sent_home(
    publisher: Publisher, names: Names, found: DeadLetter, delivery: AbstractIncomingMessage
) -> bool:
    """Publish the letter's copy to its origin; False when it has none or the broker has no
    room or no queue for it."""
    if not found.origin:
        return False
    try:
        await publisher.send(names.exchange, found.origin, replay_copy(delivery, found.replays))
    except BrokerUnavailable:
        raise
    except PublishError:  # no queue bound for it, or QueueFull
        return False
    return True


async def purge(
    connection: AbstractRobustConnection,
    names: Names,
    wanted: LetterFilter,
    scan: int = DEFAULT_SCAN,
) -> int:
    """Remove the letters matching `wanted` among the first `scan`; how many went."""
    purged = 0
    held = await _scan(connection, names, scan)
    try:
        async for found, delivery in held.letters():
            if matches(found, wanted):
                await held.settle(delivery)
                purged += 1
    finally:
        await held.close(connection)
    return purged
