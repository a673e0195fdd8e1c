"""The connections a process holds: opened in order, closed in reverse, even when opening
stops halfway (Postgres refusing the pool still closes the broker connection and Redis)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Sequence
from types import TracebackType
from typing import Any, TypeVar

import asyncpg
import httpx
import structlog
from aio_pika.abc import AbstractRobustConnection
from redis.asyncio import Redis

from shared import db as database
from shared.broker import connect
from shared.listener import Listener

T = TypeVar("T")
log = structlog.get_logger(__name__)

# Seconds a Postgres pool may take to close gracefully before it is terminated.
POOL_CLOSE_S = 10.0

# Outgoing HTTP (media fetches, the LLM gateway): a slow answer is waited for, a dead host not.
HTTP_TIMEOUT = httpx.Timeout(30.0, connect=5.0)


class Resources:
    """Opens what a process asks for, in the order asked; `async with` closes it all, last
    opened first. Every process (worker, aggregator, API) starts through one of these."""

    def __init__(self) -> None:
        self._stack = contextlib.AsyncExitStack()
        self._listeners: dict[str, Listener] = {}

    async def __aenter__(self) -> Resources:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        # Never swallows the block's error: whatever closing does, the process sees it.
        await self._stack.__aexit__(kind, error, traceback)

    async def broker(self, url: str | Sequence[str], name: str) -> AbstractRobustConnection:
        """A robust RabbitMQ connection named `name` in the management UI."""
        return self.closes(await connect(url, name), lambda c: c.close())

    def redis(self, url: str, max_connections: int | None = None) -> Redis:
        """A Redis client; `max_connections` bounds its pool (redis-py's default is large)."""
        client = Redis.from_url(url, max_connections=max_connections)
        return self.closes(client, lambda r: r.aclose())

    async def pool(self, url: str, max_size: int) -> asyncpg.Pool:
        """A Postgres pool that opens no connection up front (see shared.db); closed within
        POOL_CLOSE_S, then terminated (asyncpg's close waits for every connection to come
        back, without limit: one held by a task that would not stop held the process)."""
        pool = await database.create_pool(url, max_size=max_size)
        return self.closes(pool, close_pool)

    def listener(self, url: str) -> Listener:
        """The block's one LISTEN connection to the database at `url` (shared.listener), for
        every follower: asking again gives the same; it connects at the first `follow`."""
        held = self._listeners.get(url)
        if held is None:
            held = self._listeners[url] = self.closes(Listener(url), Listener.close)
        return held

    def http(self) -> httpx.AsyncClient:
        return self.closes(httpx.AsyncClient(timeout=HTTP_TIMEOUT), lambda c: c.aclose())

    def closes(self, resource: T, close: Callable[[T], Awaitable[Any]]) -> T:
        """Hold any other resource: `close(resource)` runs in its turn on exit."""
        self._stack.push_async_callback(close, resource)
        return resource

    async def enter(self, context: contextlib.AbstractAsyncContextManager[T]) -> T:
        """Enter an async context (a background task, a process pool) until the exit."""
        return await self._stack.enter_async_context(context)


async def close_pool(pool: asyncpg.Pool, within_s: float = POOL_CLOSE_S) -> None:
    """Close `pool` gracefully, or terminate it (every connection cut) past `within_s`."""
    try:
        async with asyncio.timeout(within_s):
            await pool.close()
    except TimeoutError:
        log.error("postgres pool did not close in time: terminated", within_s=within_s)
        pool.terminate()
