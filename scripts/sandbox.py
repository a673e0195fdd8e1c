"""Throwaway worlds on shared services: unique names, scratch databases, and the clean-up
that removes a prefix's queues, exchanges and Redis keys afterwards.

Used by the benchmarks, the chaos run and the test suite alike, so a run never touches
another run's objects and leaves the services as it found them.
"""

from __future__ import annotations

import socket
import sys
import uuid
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

import asyncpg
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from shared.signing import new_signing_set
from topology.broker import management_url

# The services of a development machine, when the environment names none.
LOOPBACK = {
    "AMQP_URL": "amqp://guest:guest@127.0.0.1:5672/",
    "REDIS_URL": "redis://127.0.0.1:6379/0",
    "DATABASE_URL": "postgresql://postgres@127.0.0.1:5432/postgres",
}


def unique(stem: str) -> str:
    """`stem` plus a random suffix: a prefix or database name no other run uses."""
    return f"{stem}{uuid.uuid4().hex[:10]}"


def free_port() -> int:
    """A loopback port nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def create_database(admin_url: str, name: str) -> str:
    """Create database `name` beside the admin URL's; the URL of the new one."""
    conn = await asyncpg.connect(admin_url)
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    return urlunsplit(urlsplit(admin_url)._replace(path=f"/{name}"))


async def drop_database(admin_url: str, name: str) -> None:
    """Drop database `name`, closing whatever connections it still has."""
    conn = await asyncpg.connect(admin_url)
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await conn.close()


async def delete_broker_objects(
    amqp_url: str, prefixes: Sequence[str], management: str | None = None
) -> None:
    """Delete every queue and exchange named `prefix`, `prefix.…` or `prefix_…`."""
    base, vhost, auth = management_url(amqp_url, management)
    v = quote(vhost, safe="")
    async with httpx.AsyncClient(base_url=f"{base}/api", auth=auth, timeout=10) as http:
        for kind in ("queues", "exchanges"):
            for item in (await http.get(f"/{kind}/{v}?columns=name")).json():
                name = item["name"]
                if any(name == p or name.startswith((f"{p}.", f"{p}_")) for p in prefixes):
                    await http.delete(f"/{kind}/{v}/{quote(name, safe='')}")


async def delete_redis_keys(redis_url: str, prefix: str) -> int:
    """Remove every Redis key of a prefix (live state, locks, limits, heartbeats…)."""
    from redis.asyncio import Redis

    redis = Redis.from_url(redis_url)
    try:
        keys = [k async for k in redis.scan_iter(match=f"{prefix}:*", count=1000)]
        for start in range(0, len(keys), 500):
            await redis.delete(*keys[start : start + 500])
        return len(keys)
    finally:
        await redis.aclose()


def signing_env() -> dict[str, str]:
    """A fresh set of signing keys as environment variables: every process of a throwaway
    world gets all of them."""
    return new_signing_set()
