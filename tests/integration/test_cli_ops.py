"""`verdict health` and `verdict topology export`, as operators and health checks run them."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.cli import verdict
from tests.integration.conftest import eventually, running
from tests.integration.test_worker_flow import scored
from topology.spec import from_settings
from workers.runtime import Worker, WorkerOptions

pytestmark = pytest.mark.integration


async def test_health_is_zero_with_every_service_and_names_the_one_that_is_away(settings):
    """Exit 0 when RabbitMQ, Redis and Postgres answer; exit 1 naming Redis when it does not."""
    healthy = await asyncio.to_thread(verdict, settings, "health")
    assert healthy.returncode == 0, healthy.stderr
    away = await asyncio.to_thread(verdict, settings, "health", REDIS_URL="redis://127.0.0.1:1/0")
    assert away.returncode == 1
    assert away.stderr.startswith("redis:"), away.stderr


async def test_health_heartbeat_needs_a_live_process_on_this_host(settings):
    """`--heartbeat` (the workers' compose health check) fails until a process of this host
    beats, passes while one runs, and fails again once it stopped (its record stays, offline)."""
    alone = await asyncio.to_thread(verdict, settings, "health", "--heartbeat")
    assert alone.returncode == 1
    assert "no heartbeat" in alone.stderr
    async with running(Worker(settings, WorkerOptions("domain", 1, 1), scored).run):

        async def healthy() -> bool:
            run = await asyncio.to_thread(verdict, settings, "health", "--heartbeat")
            return run.returncode == 0

        await eventually(healthy, timeout=30, every=0.5)
    stopped = await asyncio.to_thread(verdict, settings, "health", "--heartbeat")
    assert stopped.returncode == 1 and "no heartbeat" in stopped.stderr


async def test_topology_export_writes_a_definitions_file(settings, tmp_path):
    """`verdict topology export -o FILE` writes the broker definitions of this deployment."""
    target = tmp_path / "definitions.json"
    run = await asyncio.to_thread(verdict, settings, "topology", "export", "-o", str(target))
    assert run.returncode == 0, run.stderr
    exported = json.loads(target.read_text())
    spec = from_settings(settings)
    assert {q["name"] for q in exported["queues"]} == {q.name for q in spec.queues}
    assert {e["name"] for e in exported["exchanges"]} == {e.name for e in spec.exchanges}
