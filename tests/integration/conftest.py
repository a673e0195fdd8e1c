"""Integration fixtures: real RabbitMQ, Redis and Postgres; an isolated topology per world."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from redis.asyncio import Redis

from shared import db as database
from shared.broker import Publisher, connect
from shared.messages import Result
from shared.names import Names
from shared.settings import Settings
from shared.signing import result_key, sign_result, task_signer
from tests import services as svc
from tests.conftest import make_settings
from topology.broker import declare
from topology.spec import from_settings

pytestmark = pytest.mark.integration

World = Callable[..., Awaitable[Settings]]


@pytest.fixture
async def world(services: svc.Services, database_url: str) -> AsyncIterator[World]:
    """Factory of isolated worlds: a fresh prefix with its topology declared, removed after."""
    prefixes: list[str] = []

    async def make(**overrides: Any) -> Settings:
        prefix = svc.unique("t")
        prefixes.append(prefix)
        # A world may have a database of its own (`database_url=`), else the run's.
        own_database = str(overrides.pop("database_url", database_url))
        settings = make_settings(services, own_database, prefix, **overrides)
        connection = await connect(settings.amqp_url, "test-declare")
        try:
            await declare(await connection.channel(), from_settings(settings))
        finally:
            await connection.close()
        return settings

    yield make
    for prefix in prefixes:
        await svc.delete_broker_objects(services.amqp_url, (prefix,), services.management_url)
        await svc.delete_redis_keys(services.redis_url, prefix)


@pytest.fixture
async def settings(world: World) -> Settings:
    return await world()


@pytest.fixture
async def pool(database_url: str) -> AsyncIterator[Any]:
    p = await database.create_pool(database_url, max_size=5)
    yield p
    await p.close()


@pytest.fixture
async def redis(services: svc.Services) -> AsyncIterator[Redis]:
    client = Redis.from_url(services.redis_url)
    yield client
    await client.aclose()


@pytest.fixture
async def publisher(settings: Settings) -> AsyncIterator[Publisher]:
    connection = await connect(settings.amqp_url, "test-publisher")
    yield await Publisher(
        connection, Names(settings.topology_prefix), 5, task_signer=task_signer(settings)
    ).open()
    await connection.close()


@contextlib.asynccontextmanager
async def running(
    *services: Callable[[asyncio.Event], Awaitable[None]],
) -> AsyncIterator[asyncio.Event]:
    """Run service coroutines (workers, aggregators) until the block ends, then stop them."""
    stop = asyncio.Event()
    tasks = [asyncio.create_task(run(stop)) for run in services]
    await asyncio.sleep(0.3)  # consumers registered
    for task in tasks:
        if task.done():
            task.result()  # surface a start-up failure
    try:
        yield stop
    finally:
        stop.set()
        await asyncio.wait_for(asyncio.gather(*tasks), 30)


async def eventually(
    check: Callable[[], Awaitable[Any]], timeout: float = 20.0, every: float = 0.1
) -> Any:
    """Poll `check` until it returns something truthy; fail with the last value on timeout."""
    deadline = asyncio.get_running_loop().time() + timeout
    value = None
    while asyncio.get_running_loop().time() < deadline:
        value = await check()
        if value:
            return value
        await asyncio.sleep(every)
    raise AssertionError(f"condition not met within {timeout}s (last value: {value!r})")


async def queue_depths(settings: Settings) -> dict[str, int]:
    """Ready messages per queue of this world (passive declares: exact, unlike the UI's stats)."""
    connection = await connect(settings.amqp_urls(), "test-depths")
    try:
        channel = await connection.channel()
        depths = {}
        for queue in from_settings(settings).queues:
            declared = await channel.declare_queue(queue.name, passive=True)
            depths[queue.name] = declared.declaration_result.message_count or 0
        return depths
    finally:
        await connection.close()


@contextlib.asynccontextmanager
async def publisher_for(settings: Settings) -> AsyncIterator[Publisher]:
    """A confirming publisher on a world of its own settings (not the `settings` fixture)."""
    connection = await connect(settings.amqp_urls(), "test-publisher")
    try:
        yield await Publisher(
            connection, Names(settings.topology_prefix), 5, task_signer=task_signer(settings)
        ).open()
    finally:
        await connection.close()


def signed(settings: Settings, result: Result) -> Result:
    """`result` as the workers of its component sign it (results published by a test)."""
    return sign_result(result_key(settings, result.component), result.component, result)
