"""Health of a process's dependencies, for container health checks."""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import AsyncIterator

import asyncpg
from redis.asyncio import Redis

from shared.broker import connect
from shared.ephemera import Ephemera
from shared.house import RedisShelf, Shelf, TableShelf, Unawaited
from shared.redis_batches import RedisBatches
from shared.registry import registry
from shared.settings import Settings


async def check(settings: Settings, heartbeat: bool) -> list[str]:
    """What is wrong; an empty list means healthy."""
    problems = []
    if settings.transport == "rabbitmq":  # the postgres transport needs no broker
        try:
            connection = await connect(settings.amqp_urls(), "health")
            await connection.close()
        except Exception as exc:
            problems.append(f"rabbitmq: {exc}")
    try:
        async with _shelf(settings) as shelf:
            if heartbeat:
                host = socket.gethostname()
                records = await registry(shelf, settings.key_prefix, time.time())
                if not any(r.host == host and r.status != "offline" for r in records):
                    problems.append(f"no heartbeat from a process on {host} in the last 90 s")
    except Exception as exc:
        problems.append(f"{'redis' if settings.redis_url else 'postgres'}: {exc}")
    try:
        conn = await asyncpg.connect(settings.database_url, timeout=5)
        await conn.close()
    except Exception as exc:
        problems.append(f"postgres: {exc}")
    return problems


@contextlib.asynccontextmanager
async def _shelf(settings: Settings) -> AsyncIterator[Shelf]:
    """Where the heartbeats are (shared/house.py), reached and checked: Redis answers a
    ping, or PostgreSQL a connection, when there is no Redis."""
    if settings.redis_url:
        redis = Redis.from_url(settings.redis_url)
        try:
            await redis.ping()
            yield RedisShelf(redis, RedisBatches(redis))
        finally:
            await redis.aclose()
        return
    conn = await asyncpg.connect(settings.database_url, timeout=5)
    try:
        yield TableShelf(Ephemera(conn), Unawaited())
    finally:
        await conn.close()
