"""What Redis holds, in PostgreSQL, for a deployment without Redis (TRANSPORT=postgres with
REDIS_URL unset): short-lived values with an expiry (migration 012, under the key names of
shared/keys.py), and channels over LISTEN/NOTIFY.

Each feature that keeps something short-lived (heartbeats, attempts, sign-outs, rate-limit
windows, live news, urgent signals) has its Redis form and a form over these two, chosen
once per process (shared/house.py). Like Redis here, all of it is best effort beside the
record: losing it loses no session.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

import asyncpg
import structlog

from shared.listener import Listener

log = structlog.get_logger(__name__)

# The one NOTIFY channel every published message travels on; the payload names the
# deployment's channel (a Redis channel name, shared/keys.py) before the message itself.
NOTIFY_CHANNEL = "verdict_channels"
# NOTIFY payloads are at most 8000 bytes; messages here are ids and small states.
MAX_PAYLOAD_BYTES = 7900
# How long a new subscription waits for the process's listener to be in place, so what is
# published after `subscribe` returns reaches it (past this, its reader's poll serves).
SUBSCRIBE_WAIT_S = 1.0

_GET = "SELECT value::text FROM ephemera WHERE key = $1 AND expires_at > now()"
_GET_MANY = (
    "SELECT key, value::text AS value FROM ephemera "
    "WHERE key = ANY($1::text[]) AND expires_at > now()"
)
_PUT = """
INSERT INTO ephemera (key, value, expires_at)
VALUES ($1, $2::text::jsonb, now() + make_interval(secs => $3))
ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at
"""
_STARTING_WITH = (
    "SELECT value::text AS value FROM ephemera "
    "WHERE key LIKE $1 || '%' AND expires_at > now() ORDER BY key"
)
# A fixed window: the first hit opens it (count 1, ending `secs` from now); later hits count
# until it ends, then the next hit opens a new one.
_HIT = """
INSERT INTO ephemera AS e (key, value, expires_at)
VALUES ($1, to_jsonb($3::bigint), now() + make_interval(secs => $2))
ON CONFLICT (key) DO UPDATE SET
    value = CASE WHEN e.expires_at <= now() THEN to_jsonb($3::bigint)
                 ELSE to_jsonb((e.value #>> '{}')::bigint + $3) END,
    expires_at = CASE WHEN e.expires_at <= now() THEN EXCLUDED.expires_at
                      ELSE e.expires_at END
RETURNING (value #>> '{}')::bigint AS hits, extract(epoch FROM expires_at) AS ends_at
"""
_WINDOW = (
    "SELECT (value #>> '{}')::bigint AS hits, extract(epoch FROM expires_at) AS ends_at "
    "FROM ephemera WHERE key = $1 AND expires_at > now()"
)
# Appends to a list, keeping its newest `$3` entries, and renews its expiry.
_APPEND = """
INSERT INTO ephemera AS e (key, value, expires_at)
VALUES ($1, jsonb_build_array($2::text::jsonb), now() + make_interval(secs => $4))
ON CONFLICT (key) DO UPDATE SET
    value = (SELECT coalesce(jsonb_agg(item ORDER BY n), '[]'::jsonb)
             FROM jsonb_array_elements(
                 CASE WHEN e.expires_at <= now() THEN '[]'::jsonb ELSE e.value END
                 || jsonb_build_array($2::text::jsonb)) WITH ORDINALITY AS t(item, n)
             WHERE n > jsonb_array_length(
                 CASE WHEN e.expires_at <= now() THEN '[]'::jsonb ELSE e.value END) + 1 - $3),
    expires_at = EXCLUDED.expires_at
"""
_PRUNE = """
DELETE FROM ephemera WHERE key IN (
    SELECT key FROM ephemera WHERE expires_at <= now() LIMIT $1 FOR UPDATE SKIP LOCKED)
"""


class Ephemera:
    """Values that expire, in the `ephemera` table: anything JSON can hold, sent and read as
    JSON text (whatever codecs the connection has)."""

    def __init__(self, pool: asyncpg.Pool | asyncpg.Connection) -> None:
        self.pool = pool

    async def ping(self) -> bool:
        return await self.pool.fetchval("SELECT true") is True

    async def get(self, key: str) -> Any:
        """The value under `key`, or None when there is none or it expired."""
        raw = await self.pool.fetchval(_GET, key)
        return None if raw is None else json.loads(raw)

    async def get_many(self, keys: Sequence[str]) -> dict[str, Any]:
        """The values of those `keys` that hold one."""
        rows = await self.pool.fetch(_GET_MANY, list(keys))
        return {r["key"]: json.loads(r["value"]) for r in rows}

    async def put(self, key: str, value: Any, ttl_s: float) -> None:
        """Hold `value` under `key` for `ttl_s` seconds (replacing what was there)."""
        await self.pool.execute(_PUT, key, json.dumps(value), float(ttl_s))

    async def starting_with(self, prefix: str) -> list[Any]:
        """The values of every live key that starts with `prefix`, by key."""
        escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        return [json.loads(r["value"]) for r in await self.pool.fetch(_STARTING_WITH, escaped)]

    async def hit(self, key: str, window_s: float, amount: int = 1) -> tuple[int, float]:
        """Count `amount` hits in the fixed window `key` of `window_s` seconds: the hits so
        far in the current window, and when it ends (Unix seconds)."""
        row = await self.pool.fetchrow(_HIT, key, float(window_s), amount)
        return int(row["hits"]), float(row["ends_at"])

    async def window(self, key: str) -> tuple[int, float]:
        """The hits of window `key` and its end; (0, now) when no window is open."""
        row = await self.pool.fetchrow(_WINDOW, key)
        if row is None:
            return 0, time.time()
        return int(row["hits"]), float(row["ends_at"])

    async def append(self, key: str, item: Any, keep: int, ttl_s: float) -> None:
        """Append `item` to the list under `key`, keep its newest `keep` entries, and hold it
        `ttl_s` seconds from now."""
        await self.pool.execute(_APPEND, key, json.dumps(item), keep, float(ttl_s))

    async def lists(self, keys: Sequence[str]) -> dict[str, list[Any]]:
        """The lists under those `keys` that hold one."""
        return {k: list(v) for k, v in (await self.get_many(keys)).items()}

    async def forget(self, key: str) -> None:
        await self.pool.execute("DELETE FROM ephemera WHERE key = $1", key)

    async def prune(self, batch: int = 5000) -> int:
        """Delete up to `batch` expired values; how many went."""
        status = await self.pool.execute(_PRUNE, batch)
        return int(status.split()[-1])


def encode_message(channel: str, data: str) -> str:
    """A NOTIFY payload: the channel's name, a newline, the message."""
    payload = f"{channel}\n{data}"
    if len(payload.encode()) > MAX_PAYLOAD_BYTES:
        raise ValueError(f"a message on {channel} is too long for NOTIFY")
    return payload


def decode_message(payload: str) -> tuple[str, str] | None:
    """(channel, message) of a NOTIFY payload; None for one that is not ours."""
    channel, newline, data = payload.partition("\n")
    return (channel, data) if newline and channel else None


async def publish(pool: asyncpg.Pool, messages: Iterable[tuple[str, str]]) -> None:
    """Send each (channel, message) to every process listening (one statement)."""
    payloads = [encode_message(c, d) for c, d in messages]
    if payloads:
        await pool.execute(
            "SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p", NOTIFY_CHANNEL, payloads
        )


class Subscription:
    """Messages of some channels, queued for one reader (in the shape of redis-py's PubSub
    where the pipeline reads one: `subscribe`, `get_message`, `aclose`)."""

    def __init__(self, hub: Channels) -> None:
        self._hub = hub
        self._channels: set[str] = set()
        self._queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(maxsize=1000)

    async def subscribe(self, *channels: str) -> None:
        for channel in channels:
            self._channels.add(channel)
            self._hub.add(channel, self)
        try:
            await self._hub.start()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(SUBSCRIBE_WAIT_S):
                    await self._hub.connected.wait()
        except BaseException:  # cancelled while waiting: nothing stays subscribed
            await self.aclose()
            raise

    async def get_message(
        self,
        ignore_subscribe_messages: bool = True,
        timeout: float | None = 0.0,  # noqa: ASYNC109 (redis-py's PubSub signature)
    ) -> dict[str, Any] | None:
        """The next message, waiting at most `timeout` seconds (None: until one comes; 0:
        not at all); None when none came."""
        try:
            if timeout is None:
                return await self._queue.get()
            if not timeout:
                return self._queue.get_nowait()
            async with asyncio.timeout(timeout):
                return await self._queue.get()
        except (asyncio.QueueEmpty, TimeoutError):
            return None

    def deliver(self, channel: str, data: str) -> None:
        with contextlib.suppress(asyncio.QueueFull):  # a reader that fell behind re-reads
            self._queue.put_nowait({"type": "message", "channel": channel, "data": data})

    async def aclose(self) -> None:
        for channel in self._channels:
            self._hub.remove(channel, self)
        self._channels.clear()


class Channels:
    """Publish and subscribe over PostgreSQL's LISTEN/NOTIFY: on the process's one listening
    connection (shared/listener.py), its messages handed to every subscription of their
    channel. While the listener is away nothing arrives (as with a Redis outage), and readers
    fall back on their polls."""

    def __init__(self, pool: asyncpg.Pool, listener: Listener) -> None:
        self.pool = pool
        self._listener = listener
        self._subscribers: defaultdict[str, set[Subscription]] = defaultdict(set)
        self._following = False
        self._closed = False

    @property
    def connected(self) -> asyncio.Event:
        return self._listener.connected

    async def publish(self, channel: str, data: str) -> None:
        await publish(self.pool, [(channel, data)])

    async def publish_many(self, messages: Iterable[tuple[str, str]]) -> None:
        await publish(self.pool, messages)

    def pubsub(self, ignore_subscribe_messages: bool = True) -> Subscription:
        return Subscription(self)

    async def start(self) -> None:
        """Begin listening (at the first subscription); idempotent, and nothing once closed."""
        if not self._following and not self._closed:
            self._following = True
            await self._listener.follow(NOTIFY_CHANNEL, self._notified)

    async def close(self) -> None:
        self._closed = True
        if self._following:
            self._following = False
            await self._listener.unfollow(NOTIFY_CHANNEL, self._notified)

    def add(self, channel: str, subscription: Subscription) -> None:
        self._subscribers[channel].add(subscription)

    def remove(self, channel: str, subscription: Subscription) -> None:
        held = self._subscribers.get(channel)
        if held is not None:
            held.discard(subscription)
            if not held:
                del self._subscribers[channel]

    def _notified(self, payload: str) -> None:
        message = decode_message(payload)
        if message is None:
            return
        channel, data = message
        for subscription in list(self._subscribers.get(channel, ())):
            subscription.deliver(channel, data)
