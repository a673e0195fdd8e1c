"""Where a process keeps what is short-lived and shared between processes: Redis, or — on the
table transport with REDIS_URL unset — PostgreSQL (shared/ephemera.py). Chosen once per
process (`open_house`); every feature that keeps such things (heartbeats, attempts, live
news, urgent signals, rate-limit windows, sign-outs, a media task's extracted text) goes
through the `House` and never asks which one it has.
"""

from __future__ import annotations

import asyncio
import collections
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import asyncpg
import structlog
from redis.asyncio import Redis

from shared.db import UNAVAILABLE
from shared.ephemera import Channels, Ephemera
from shared.keys import Directory
from shared.listener import Listener
from shared.redis_batches import RedisBatches, send
from shared.resources import Resources
from shared.settings import Settings

log = structlog.get_logger(__name__)

# Writes nobody waits for that may queue up while PostgreSQL is slow; past this many the
# newest are given up (each is best effort: an attempt missing from a timeline).
MAX_UNAWAITED = 10_000
# A stopping process waits at most this long for them.
UNAWAITED_FLUSH_S = 5.0


class Shelf(Protocol):
    """Short-lived text values by key, each with its own expiry."""

    async def get(self, key: str) -> str | None: ...

    async def put(
        self, key: str, value: str, ttl_s: float, listed_in: Directory | None = None
    ) -> None:
        """Keep `value` under `key` for `ttl_s`; with `listed_in` (whose prefix `key` starts
        with), listed there for as long."""
        ...

    async def forget(self, key: str) -> None: ...

    async def listed(self, directory: Directory) -> list[str]:
        """The values of every key put in `directory` that has not expired, in key order."""
        ...

    def append_soon(self, key: str, item: str, keep: int, ttl_s: float) -> None:
        """Append to the list under `key`, keep its newest `keep`, renew its expiry: soon,
        off the caller's path, best effort (given up when the store cannot take it)."""
        ...

    async def lists(self, keys: Sequence[str]) -> dict[str, list[str]]:
        """The lists under those of `keys` that hold one."""
        ...


class PubSub(Protocol):
    """Where a process publishes to channels and subscribes to them (redis-py's shape)."""

    async def publish_many(self, messages: Iterable[tuple[str, str]]) -> None: ...

    def pubsub(self, ignore_subscribe_messages: bool = True) -> Any: ...


def _text(raw: bytes | str | None) -> str | None:
    return raw.decode() if isinstance(raw, bytes) else raw


@dataclass(frozen=True)
class RedisShelf:
    redis: Redis
    # Writes nobody waits for go with the process's other commands.
    batches: RedisBatches

    async def get(self, key: str) -> str | None:
        return _text(await self.redis.get(key))

    async def put(
        self, key: str, value: str, ttl_s: float, listed_in: Directory | None = None
    ) -> None:
        ttl_ms = max(1, int(ttl_s * 1000))
        if listed_in is None:
            await self.redis.set(key, value, px=ttl_ms)
            return
        # The index holds each key with its expiry; whoever writes drops the expired ones
        # (readers may only read), and the index lapses with the last entry written.
        now_ms = int(time.time() * 1000)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.set(key, value, px=ttl_ms)
            pipe.zremrangebyscore(listed_in.index, "-inf", now_ms)
            pipe.zadd(listed_in.index, {key: now_ms + ttl_ms})
            pipe.pexpire(listed_in.index, ttl_ms)
            await pipe.execute()

    async def forget(self, key: str) -> None:
        await self.redis.delete(key)

    async def listed(self, directory: Directory) -> list[str]:
        now_ms = int(time.time() * 1000)
        listed = await self.redis.zrangebyscore(directory.index, now_ms, "+inf")
        names = (_text(k) if isinstance(k, bytes | str) else None for k in listed)
        keys = sorted(k for k in names if k and k.startswith(directory.prefix))
        values = await self.redis.mget(keys) if keys else []
        return [t for t in map(_text, values) if t is not None]

    def append_soon(self, key: str, item: str, keep: int, ttl_s: float) -> None:
        self.batches.add(
            ("RPUSH", key, item),
            ("LTRIM", key, -keep, -1),
            ("PEXPIRE", key, max(1, int(ttl_s * 1000))),
        )

    async def lists(self, keys: Sequence[str]) -> dict[str, list[str]]:
        async with self.redis.pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.lrange(key, 0, -1)
            found = await pipe.execute()
        return {
            k: [t for t in map(_text, v) if t is not None]
            for k, v in zip(keys, found, strict=True)
            if v
        }


class Unawaited:
    """Writes nobody waits for, run one after another off the caller's path (as
    RedisBatches.add does for Redis); one that fails is given up and logged at debug."""

    def __init__(self, limit: int = MAX_UNAWAITED) -> None:
        self._pending: collections.deque[Callable[[], Awaitable[Any]]] = collections.deque()
        self._limit = limit
        self._running: asyncio.Future[None] | None = None

    def add(self, write: Callable[[], Awaitable[Any]]) -> None:
        if len(self._pending) >= self._limit:
            log.debug("write given up: too many waiting")
            return
        self._pending.append(write)
        if self._running is None or self._running.done():
            self._running = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        while self._pending:
            write = self._pending.popleft()
            try:
                await write()
            except UNAVAILABLE:  # away: the rest would only wait their turn to fail
                log.debug("writes given up: database away", writes=len(self._pending) + 1)
                self._pending.clear()
            except Exception as exc:
                log.debug("write given up", error=repr(exc))

    async def flush(self, within_s: float = UNAWAITED_FLUSH_S) -> None:
        """Return once everything given so far was written (or given up), or after
        `within_s` (what is left then is given up)."""
        if self._running is None:
            return
        try:
            async with asyncio.timeout(within_s):
                await asyncio.shield(self._running)
        except TimeoutError:
            log.warning("writes given up at the stop", writes=len(self._pending))
            self._pending.clear()
            self._running.cancel()


@dataclass(frozen=True)
class TableShelf:
    ephemera: Ephemera
    unawaited: Unawaited

    async def get(self, key: str) -> str | None:
        value = await self.ephemera.get(key)
        return None if value is None else str(value)

    async def put(
        self, key: str, value: str, ttl_s: float, listed_in: Directory | None = None
    ) -> None:
        await self.ephemera.put(key, value, ttl_s)  # a prefix query reads a table's keys

    async def forget(self, key: str) -> None:
        await self.ephemera.forget(key)

    async def listed(self, directory: Directory) -> list[str]:
        return [str(v) for v in await self.ephemera.starting_with(directory.prefix)]

    def append_soon(self, key: str, item: str, keep: int, ttl_s: float) -> None:
        self.unawaited.add(lambda: self.ephemera.append(key, item, keep, ttl_s))

    async def lists(self, keys: Sequence[str]) -> dict[str, list[str]]:
        return {k: [str(i) for i in v] for k, v in (await self.ephemera.lists(keys)).items()}


@dataclass(frozen=True)
class RedisPubSub:
    """Publishes with the process's other commands (`sender`); subscribes on `redis`."""

    redis: Redis
    sender: Redis | RedisBatches

    async def publish_many(self, messages: Iterable[tuple[str, str]]) -> None:
        await send(self.sender, [("PUBLISH", c, d) for c, d in messages])

    def pubsub(self, ignore_subscribe_messages: bool = True) -> Any:
        return self.redis.pubsub(ignore_subscribe_messages=ignore_subscribe_messages)


@dataclass(frozen=True)
class House:
    """One process's short-lived shared state: `shelf` for values, `channels` for messages;
    `redis` and `batches` when Redis holds them (the features that keep Redis-only forms,
    the worker's Redis lock and the live-state cache, use them), else None."""

    shelf: Shelf
    channels: PubSub
    redis: Redis | None = None
    batches: RedisBatches | None = None
    ephemera: Ephemera | None = None

    @property
    def kind(self) -> str:
        return "redis" if self.redis is not None else "postgres"

    @property
    def media_cache(self) -> Shelf | None:
        """Where a media task keeps the text it extracted, for its retries: Redis only, where
        only the media worker's user may write it. Without Redis every worker shares one
        database role, which could plant the text another session is analysed with, so
        nothing is cached (a retry extracts again)."""
        return self.shelf if self.redis is not None else None

    async def ping(self) -> bool:
        """Whether what holds it answers now."""
        if self.redis is not None:
            return bool(await self.redis.ping())
        assert self.ephemera is not None
        return await self.ephemera.ping()


async def open_house(
    opened: Resources,
    settings: Settings,
    pool: asyncpg.Pool,
    *,
    redis_url: str | None = None,
    max_connections: int | None = None,
    subscriber: Redis | None = None,
    listener: Listener | None = None,
) -> House:
    """The house of a process, closed with `opened`: Redis at `redis_url` (default
    REDIS_URL) when there is one, else the process's PostgreSQL `pool`. `subscriber`: a
    separate Redis client for subscriptions (the API's event streams). `listener`: the
    process's LISTEN connection when its owner opened it (default: `opened`'s)."""
    url = settings.redis_url if redis_url is None else redis_url
    if url:
        redis = opened.redis(url, max_connections=max_connections)
        return redis_house(
            redis, opened.closes(RedisBatches(redis), RedisBatches.flush), subscriber
        )
    unawaited = opened.closes(Unawaited(), Unawaited.flush)
    listener = listener or opened.listener(settings.database_url)
    channels = opened.closes(Channels(pool, listener), Channels.close)
    return table_house(pool, channels, unawaited)


def redis_house(
    redis: Redis, batches: RedisBatches | None = None, subscriber: Redis | None = None
) -> House:
    """A house in Redis: writes nobody waits for go in `batches` (flush them before closing)."""
    batches = batches or RedisBatches(redis)
    return House(
        RedisShelf(redis, batches),
        RedisPubSub(subscriber or redis, batches),
        redis=redis,
        batches=batches,
    )


def table_house(pool: asyncpg.Pool, channels: Channels, unawaited: Unawaited) -> House:
    """A house in PostgreSQL (close `channels`, flush `unawaited` before the pool closes)."""
    ephemera = Ephemera(pool)
    return House(TableShelf(ephemera, unawaited), channels, ephemera=ephemera)
