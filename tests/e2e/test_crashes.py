"""kill -9 and SIGTERM of real worker processes: nothing is lost, nothing runs twice at once."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from redis.asyncio import Redis

from aggregator.service import Aggregator
from dispatcher.submit import first_tasks
from shared import sessions
from shared.broker import Publisher, connect
from shared.locks import lock_key
from shared.names import Names
from shared.sessions import NewSession
from shared.signing import task_signer
from tests import services as svc
from tests.cli import settings_env
from tests.conftest import make_settings
from tests.integration.conftest import eventually, queue_depths, running
from topology.broker import declare
from topology.spec import from_settings

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
COMPONENTS = ("techniques", "ai_tampered", "claims", "domain")


def worker_process(settings, component: str, work_ms: int) -> subprocess.Popen:
    """A real worker process whose executor takes `work_ms` (scripts/bench_worker.py)."""
    env = {
        **os.environ,
        **settings_env(settings),  # the world's URLs, prefix, lock timings and signing keys
        "SHUTDOWN_GRACE_S": "10",
        "LOG_JSON": "true",
    }
    return subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "scripts" / "bench_worker.py"),
            component,
            "--concurrency",
            "1",
            "--prefetch",
            "1",
            "--work-ms",
            str(work_ms),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


@pytest.fixture
async def crash_world(services, database_url):
    settings = make_settings(
        services, database_url, svc.unique("k"), lock_ttl_ms=1500, lock_retry_ms=200
    )
    connection = await connect(settings.amqp_url, "test")
    await declare(await connection.channel(), from_settings(settings))
    publisher = await Publisher(
        connection, Names(settings.topology_prefix), 5, task_signer=task_signer(settings)
    ).open()
    yield settings, publisher
    await connection.close()
    await svc.delete_broker_objects(
        services.amqp_url, (settings.topology_prefix,), services.management_url
    )


async def test_a_worker_killed_mid_task_loses_nothing(crash_world, database_url):
    """kill -9 while claims runs: the task is redelivered to a new worker and the session ends."""
    settings, publisher = crash_world
    from shared.db import create_pool

    pool = await create_pool(database_url)
    redis = Redis.from_url(settings.redis_url)
    others = [worker_process(settings, c, 0) for c in COMPONENTS if c != "claims"]
    victim = worker_process(settings, "claims", 5000)
    successor = None
    try:
        async with running(Aggregator(settings).run):
            new = NewSession(
                sessions.new_session_id(), "tenant-a", 4, "text", {"content": "x"}, 120
            )
            await sessions.create(pool, new)
            for task in first_tasks(new, None):
                await publisher.task(task)
            key = lock_key(settings.key_prefix, new.id, "claims")
            await eventually(lambda: redis.exists(key), timeout=30)  # the victim is running it
            victim.send_signal(signal.SIGKILL)
            victim.wait(10)
            successor = worker_process(settings, "claims", 100)

            async def final():
                view = await sessions.load(pool, new.id)
                return view if view.final else None

            view = await eventually(final, timeout=60)
    finally:
        for process in [*others, victim, *([successor] if successor else [])]:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                process.wait(30)
        await redis.aclose()
        await pool.close()
    assert view.status == "completed"
    assert view.results["claims"]["status"] == "ok"
    assert (await queue_depths(settings))[f"{settings.topology_prefix}.claims.4"] == 0


async def test_sigterm_exits_zero_after_finishing_the_running_task(crash_world, database_url):
    """SIGTERM mid-task: the worker finishes it, reports, and exits with status 0."""
    settings, publisher = crash_world
    from shared.db import create_pool

    pool = await create_pool(database_url)
    redis = Redis.from_url(settings.redis_url)
    worker = worker_process(settings, "domain", 1500)
    try:
        new = NewSession(sessions.new_session_id(), "tenant-a", 2, "text", {"content": "x"}, 120)
        await sessions.create(pool, new)
        await publisher.task(next(t for t in first_tasks(new, None) if t.component == "domain"))
        key = lock_key(settings.key_prefix, new.id, "domain")
        await eventually(lambda: redis.exists(key), timeout=30)
        worker.send_signal(signal.SIGTERM)
        code = await asyncio.to_thread(worker.wait, 30)
    finally:
        if worker.poll() is None:
            worker.kill()
        await redis.aclose()
        await pool.close()
    depths = await queue_depths(settings)
    assert code == 0
    assert depths[f"{settings.topology_prefix}.results"] == 1
    assert depths[f"{settings.topology_prefix}.domain.2"] == 0


async def test_on_the_postgres_transport_a_worker_killed_mid_task_loses_nothing(
    services, database_url
):
    """kill -9 while claims runs a row of job_queue: its lease lapses (JOB_LEASE_S, 2 s here),
    a new worker claims it as a redelivery and the session completes; no Redis lock is
    involved, and the row that was running ends completed."""
    from shared.db import create_pool
    from shared.job_queue import TablePublisher

    settings = make_settings(
        services, database_url, svc.unique("k"), transport="postgres", job_lease_s=2, job_poll_s=0.5
    )
    pool = await create_pool(database_url)
    publisher = TablePublisher(
        pool, Names(settings.topology_prefix), task_signer=task_signer(settings)
    )
    claims = f"{settings.topology_prefix}.claims.4"
    others = [worker_process(settings, c, 0) for c in COMPONENTS if c != "claims"]
    victim = worker_process(settings, "claims", 5000)
    successor = None
    try:
        async with running(Aggregator(settings).run):
            new = NewSession(
                sessions.new_session_id(), "tenant-a", 4, "text", {"content": "x"}, 120
            )
            await sessions.create(pool, new)
            for task in first_tasks(new, None):
                await publisher.task(task)

            async def running_row():
                return await pool.fetchval(
                    "SELECT claimed_by FROM job_queue WHERE queue = $1 AND status = 'running'",
                    claims,
                )

            taken_by = await eventually(running_row, timeout=30)  # the victim is running it
            victim.send_signal(signal.SIGKILL)
            victim.wait(10)
            successor = worker_process(settings, "claims", 100)

            async def final():
                view = await sessions.load(pool, new.id)
                return view if view.final else None

            view = await eventually(final, timeout=60)
            row = await pool.fetchrow(
                "SELECT status, deliveries FROM job_queue WHERE queue = $1", claims
            )
    finally:
        for process in [*others, victim, *([successor] if successor else [])]:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                process.wait(30)
        await pool.close()
    assert view.status == "completed"
    assert view.results["claims"]["status"] == "ok"
    assert taken_by.startswith("claims:")
    assert (row["status"], row["deliveries"]) == ("completed", 2)
