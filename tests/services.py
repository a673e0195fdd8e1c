"""Where the test services are: the environment, else loopback, else testcontainers.

A test that needs a service fails loudly when none is reachable; it never skips.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import urlsplit

from sandbox import (
    LOOPBACK,
    create_database,
    delete_broker_objects,
    delete_redis_keys,
    drop_database,
    free_port,
    unique,
)


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


__all__ = [
    "LOOPBACK",
    "Services",
    "create_database",
    "delete_broker_objects",
    "delete_redis_keys",
    "discover",
    "drop_database",
    "free_port",
    "reachable",
    "unique",
]
