"""compose.postgres.yaml run for real: PostgreSQL alone (TRANSPORT=postgres, no broker, no
Redis), containers of every service with their replica counts, each worker on its
component's own database role. Prepared as tests/e2e/test_containers.py says (podman's
Docker-compatible API, local Debian images); a machine that cannot run containers fails here
with the reason, the test never skips."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Iterator
from urllib.parse import urlsplit

import asyncpg
import httpx
import pytest

from tests.e2e.conftest import API
from tests.e2e.test_containers import (
    HEADERS,
    ROOT,
    Stack,
    _all_verdicts,
    _submit,
    _unhealthy,
    _wait,
    stack_of,
)

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(1800)]

COMPOSE = ROOT / "compose.postgres.yaml"
OVERRIDE = ROOT / "tests" / "containers" / "compose.postgres.override.yaml"
COMPONENTS = ("media_preprocess", "techniques", "ai_tampered", "claims", "domain")


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config) -> Iterator[Stack]:
    with stack_of(COMPOSE, OVERRIDE, ("API", "POSTGRES"), tmp_path_factory, pytestconfig) as up:
        yield up


def _query(stack: Stack, sql: str, *args: object) -> list[asyncpg.Record]:
    async def fetch() -> list[asyncpg.Record]:
        conn = await asyncpg.connect(stack.database_url)
        try:
            return await conn.fetch(sql, *args)
        finally:
            await conn.close()

    return asyncio.run(fetch())


def _service(container: dict) -> str:
    return container["Config"]["Labels"]["com.docker.compose.service"]


def test_every_service_is_healthy_with_postgres_alone_and_loopback_ports(stack):
    """Each long-running container reports healthy from its own check (a heartbeat in the
    database, no Redis), each one-shot job exited 0, no broker or cache runs, and the only
    published ports (the API's, the test's PostgreSQL) are bound to 127.0.0.1."""
    assert _unhealthy(stack) == []
    services = {_service(c) for c in stack.containers()}
    assert set(stack.replicas) | {"postgres", "migrate", "db-access"} <= services
    assert not services & {"rabbitmq", "redis", "topology"}
    bindings = [
        b["HostIp"]
        for c in stack.containers()
        for ports in (c["HostConfig"].get("PortBindings") or {}).values()
        for b in ports or []
    ]
    assert bindings and set(bindings) == {"127.0.0.1"}


def test_each_worker_service_connects_with_its_components_own_role(stack):
    """Every worker container's DATABASE_URL names its component's role; the database sees
    each of those roles connected and never the shared worker role or the administrator
    from an application container."""
    db = stack.env["POSTGRES_DB"]
    for container in stack.containers():
        service = _service(container)
        if not service.startswith("worker-"):
            continue
        component = service.removeprefix("worker-").replace("-", "_")
        env = dict(item.split("=", 1) for item in container["Config"]["Env"])
        assert urlsplit(env["DATABASE_URL"]).username == f"{db}_worker_{component}"
        assert "REDIS_URL" not in env and "AMQP_URL" not in env

    def connected() -> set[str]:
        rows = _query(
            stack,
            "SELECT DISTINCT usename FROM pg_stat_activity WHERE datname = $1"
            " AND usename IS NOT NULL AND pid <> pg_backend_pid()",
            db,
        )
        return {r["usename"] for r in rows}

    roles = {f"{db}_worker_{c}" for c in COMPONENTS} | {f"{db}_app"}
    seen = _wait(lambda: roles <= connected() and connected(), 60, "every role connected")
    assert seen <= roles, f"unexpected roles connected: {seen - roles}"


def test_sessions_on_several_plans_reach_verdicts_through_the_table(stack):
    """Sessions on plans 1, 3 and 6 POSTed to the API container end with a verdict row each,
    the API reports them completed, and the queue table holds no dead letter."""
    submitted = _submit(stack, 9)
    _all_verdicts(stack, list(submitted))
    with httpx.Client(base_url=stack.api, timeout=30) as client:
        for sid, plan in submitted.items():
            body = client.get(f"{API}/{sid}/result", headers=HEADERS).json()
            assert body["status"] == "completed" and body["plan_type"] == plan, body
    errors = _query(stack, "SELECT queue, reason FROM job_queue WHERE status = 'error'")
    assert [dict(r) for r in errors] == []


def test_a_killed_worker_container_restarts_and_every_session_completes(stack):
    """A worker container killed under load (SIGKILL to its process) is started again by its
    restart policy; the rows it held return to the queue once their lease lapses, and every
    session reaches its verdict."""
    victim = stack.containers("worker-techniques")[0]
    restarts = victim["RestartCount"]
    submitted = _submit(stack, 30)
    os.kill(victim["State"]["Pid"], signal.SIGKILL)
    _wait(
        lambda: [
            c
            for c in stack.containers("worker-techniques")
            if c["Id"] == victim["Id"] and c["State"]["Running"] and c["RestartCount"] > restarts
        ],
        120,
        "the killed worker restarted",
    )
    _all_verdicts(stack, list(submitted))
