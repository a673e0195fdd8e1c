"""Where the test services are: the environment, else loopback, else testcontainers.

A test that needs a service fails loudly when none is reachable; it never skips.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import quote, urlsplit, urlunsplit

import asyncpg
import httpx

LOOPBACK = {
    "AMQP_URL": "amqp://guest:guest@127.0.0.1:5672/",
    "REDIS_URL": "redis://127.0.0.1:6379/0",
    "DATABASE_URL": "postgresql://postgres@127.0.0.1:5432/postgres",
}


@dataclass(frozen=True)
class Services:
    amqp_url: str
    redis_url: str
    database_admin_url: str  # a database we may connect to in order to create test databases
    management_url: str | None = None


def reachable(url: str) -> bool:
    parts = urlsplit(url)
    default_port = {"amqp": 5672, "redis": 6379, "postgresql": 5432, "postgres": 5432}.get(
        parts.scheme, 80
    )
    try:
        with socket.create_connection(
            (parts.hostname or "127.0.0.1", parts.port or default_port), timeout=2
        ):
            return True
    except OSError:
        return False


def docker_available() -> bool:
    if shutil.which("docker") is None:
        return False
    try:
        import docker

        docker.from_env().ping()
    except Exception:
        return False
    return True


@contextlib.contextmanager
def discover() -> Iterator[Services]:
    """The services to test against; raises RuntimeError when none can be had."""
    urls = {name: os.environ.get(name, default) for name, default in LOOPBACK.items()}
    if all(reachable(u) for u in urls.values()):
        yield Services(
            urls["AMQP_URL"],
            urls["REDIS_URL"],
            urls["DATABASE_URL"],
            os.environ.get("RABBITMQ_MANAGEMENT_URL"),
        )
        return
    missing = [n for n, u in urls.items() if not reachable(u)]
    if not docker_available():
        raise RuntimeError(
            f"test services unreachable: {', '.join(missing)} (set them, start the local services "
            "with scripts/services, or run where Docker exists for testcontainers)"
        )
    with _containers() as services:
        yield services


@contextlib.contextmanager
def _containers() -> Iterator[Services]:  # pragma: no cover - only where Docker runs
    from testcontainers.postgres import PostgresContainer
    from testcontainers.rabbitmq import RabbitMqContainer
    from testcontainers.redis import RedisContainer

    with (
        RabbitMqContainer("rabbitmq:3.12-management-alpine") as rabbit,
        RedisContainer() as redis,
        PostgresContainer("postgres:15-alpine", driver=None) as pg,
    ):
        amqp = (
            f"amqp://guest:guest@{rabbit.get_container_host_ip()}:{rabbit.get_exposed_port(5672)}/"
        )
        redis_url = f"redis://{redis.get_container_host_ip()}:{redis.get_exposed_port(6379)}/0"
        mgmt = f"http://{rabbit.get_container_host_ip()}:{rabbit.get_exposed_port(15672)}"
        yield Services(amqp, redis_url, pg.get_connection_url(), mgmt)


async def create_database(admin_url: str, name: str) -> str:
    """Create database `name` beside the admin URL's; the URL of the new one."""
    conn = await asyncpg.connect(admin_url)
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    return urlunsplit(urlsplit(admin_url)._replace(path=f"/{name}"))


async def drop_database(admin_url: str, name: str) -> None:
    conn = await asyncpg.connect(admin_url)
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await conn.close()


def unique(stem: str) -> str:
    return f"{stem}{uuid.uuid4().hex[:10]}"


async def delete_broker_objects(amqp_url: str, management: str | None, prefix: str) -> None:
    """Remove the queues and exchanges of a test prefix, so runs leave the broker clean."""
    from topology.broker import management_url

    base, vhost, auth = management_url(amqp_url, management)
    v = quote(vhost, safe="")
    async with httpx.AsyncClient(base_url=f"{base}/api", auth=auth, timeout=10) as http:
        for kind in ("queues", "exchanges"):
            items = (await http.get(f"/{kind}/{v}?columns=name")).json()
            for item in items:
                name = item["name"]
                if name == prefix or name.startswith((f"{prefix}.", f"{prefix}_")):
                    await http.delete(f"/{kind}/{v}/{quote(name, safe='')}")


async def delete_redis_keys(redis_url: str, prefix: str) -> int:
    """Remove every Redis key of a test prefix (live state, locks, limits, heartbeats…)."""
    from redis.asyncio import Redis

    redis = Redis.from_url(redis_url)
    try:
        keys = [key async for key in redis.scan_iter(match=f"{prefix}:*", count=1000)]
        if keys:
            await redis.delete(*keys)
        return len(keys)
    finally:
        await redis.aclose()


def free_port() -> int:
    """A loopback port nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
