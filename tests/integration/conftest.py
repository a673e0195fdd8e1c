"""Integration fixtures: real RabbitMQ, Redis and Postgres; an isolated topology per world."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import asyncpg
import pytest
from redis.asyncio import Redis

from shared import db as database
from shared.broker import Publisher, connect
from shared.job_queue import TablePublisher
from shared.messages import Result
from shared.names import Names
from shared.settings import Settings
from shared.signing import result_key, sign_result, task_signer
from shared.transport import Outbox
from tests import services as svc
from tests.conftest import make_settings
from topology.broker import declare
from topology.spec import from_settings

pytestmark = pytest.mark.integration

World = Callable[..., Awaitable[Settings]]


@pytest.fixture
def transport() -> str:
    """What carries a world's tasks and results (a module marked `on_both_transports` runs
    each of its tests on each)."""
    return "rabbitmq"


# The postgres transport with REDIS_URL unset: PostgreSQL alone, no broker and no Redis.
POSTGRES_ALONE = "postgres-alone"
# A module's `pytestmark`: every test runs on RabbitMQ, on the postgres transport, and on it
# without Redis (the `transport` fixture, which every world reads, parametrized directly).
on_both_transports = pytest.mark.parametrize("transport", ["rabbitmq", "postgres", POSTGRES_ALONE])


def only_on_rabbitmq(settings: Settings, why: str) -> None:
    """Skip, saying why, a test of a module on both transports that is RabbitMQ's alone."""
    if settings.transport != "rabbitmq":
        pytest.skip(why)


def only_with_redis(settings: Settings, why: str) -> None:
    """Skip, saying why, a test that looks at what Redis holds, in a world without Redis."""
    if not settings.redis_url:
        pytest.skip(why)


@pytest.fixture
async def world(services: svc.Services, database_url: str, transport: str) -> AsyncIterator[World]:
    """Factory of isolated worlds: a fresh prefix with its topology declared, removed after;
    on the `transport` of the module unless a test names one."""
    prefixes: list[str] = []

    async def make(**overrides: Any) -> Settings:
        if transport == POSTGRES_ALONE and "transport" not in overrides:
            overrides.setdefault("redis_url", "")
        overrides.setdefault("transport", "postgres" if transport == POSTGRES_ALONE else transport)
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
async def own_database(services: svc.Services) -> AsyncIterator[str]:
    """A fresh, migrated database for one test, dropped after: the run's shared one holds
    other tests' sessions, processing or past their deadline, which admission would count
    and an aggregator would finalize (and observe) as soon as it starts."""
    name = svc.unique("verdict_own_")
    url = await svc.create_database(services.database_admin_url, name)
    try:
        await database.migrate(url)
        yield url
    finally:
        await svc.drop_database(services.database_admin_url, name)


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
async def publisher(settings: Settings) -> AsyncIterator[Outbox]:
    async with publisher_for(settings) as opened:
        yield opened


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
    """Ready messages per queue of this world (passive declares: exact, unlike the UI's stats);
    on the postgres transport the rows not yet completed (the DLQ's: its error rows)."""
    if settings.transport == "postgres":
        return await _row_depths(settings)
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


async def _row_depths(settings: Settings) -> dict[str, int]:
    names = Names(settings.topology_prefix)
    conn = await asyncpg.connect(settings.database_url)
    try:
        rows = await conn.fetch(
            "SELECT queue, count(*) AS n FROM job_queue WHERE queue LIKE $1 || '%'"
            " AND (status IN ('pending', 'retry', 'running') OR (queue = $2 AND status = 'error'))"
            " GROUP BY queue",
            settings.topology_prefix,
            names.dlq,
        )
    finally:
        await conn.close()
    depths = dict.fromkeys((q.name for q in from_settings(settings).queues), 0)
    depths.update({r["queue"]: r["n"] for r in rows})
    return depths


@contextlib.asynccontextmanager
async def publisher_for(settings: Settings) -> AsyncIterator[Outbox]:
    """A confirming publisher on a world of its own settings (not the `settings` fixture):
    on the postgres transport, one that writes rows."""
    if settings.transport == "postgres":
        pool = await database.create_pool(settings.database_url, max_size=2)
        try:
            yield TablePublisher(
                pool, Names(settings.topology_prefix), task_signer=task_signer(settings)
            )
        finally:
            await pool.close()
        return
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
