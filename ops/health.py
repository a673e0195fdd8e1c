"""Health of a process's dependencies, for container health checks."""

from __future__ import annotations

import socket
import time

import asyncpg
from redis.asyncio import Redis

from shared.broker import connect
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
    redis = Redis.from_url(settings.redis_url)
    try:
        await redis.ping()
        if heartbeat:
            host = socket.gethostname()
            records = await registry(redis, settings.key_prefix, time.time())
            if not any(r.host == host and r.status != "offline" for r in records):
                problems.append(f"no heartbeat from a process on {host} in the last 90 s")
    except Exception as exc:
        problems.append(f"redis: {exc}")
    finally:
        await redis.aclose()
    try:
        conn = await asyncpg.connect(settings.database_url, timeout=5)
        await conn.close()
    except Exception as exc:
        problems.append(f"postgres: {exc}")
    return problems
