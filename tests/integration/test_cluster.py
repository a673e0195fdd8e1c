"""Quorum queues on a three-node RabbitMQ cluster started for this module (scripts/
rabbit_cluster.py) and removed after: topology, a session end to end, poison through the
delivery limit, and a node killed (`kill -9`) with sessions in flight.

Booting and joining three nodes costs about 1.5 minutes on a loaded two-core machine, once
for the module."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from urllib.parse import urlsplit

import aio_pika
import httpx
import pytest
from rabbit_cluster import RabbitCluster, free_cluster_port

from aggregator.service import Aggregator
from shared.broker import Publisher, connect
from shared.errors import BrokerUnavailable, QueueFull
from shared.names import Names
from shared.settings import Settings, broker_urls
from tests import services as svc
from tests.conftest import make_settings
from tests.integration.conftest import eventually, publisher_for, queue_depths, running
from tests.integration.test_worker_flow import explain, final_view, submit, workers_for
from topology.broker import declare
from topology.spec import from_settings

pytestmark = [pytest.mark.integration, pytest.mark.timeout(420)]

ROOT = Path(__file__).resolve().parents[2]
DELIVERY_LIMIT = 3


@pytest.fixture(scope="module")
def cluster() -> Iterator[RabbitCluster]:
    started = RabbitCluster(f"vq{os.getpid() % 10000}", free_cluster_port()).start()
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture
async def quorum(
    cluster: RabbitCluster, services: svc.Services, database_url: str
) -> AsyncIterator[Settings]:
    """A world in quorum mode on the cluster: AMQP_URL names the first node, AMQP_HOSTS all."""
    prefix = svc.unique("q")
    settings = make_settings(
        services,
        database_url,
        prefix,
        amqp_url=cluster.amqp_url,
        amqp_hosts=cluster.amqp_hosts,
        rabbitmq_management_url=cluster.management_url,
        queue_type="quorum",
        queue_delivery_limit=DELIVERY_LIMIT,
    )
    connection = await connect(settings.amqp_urls(), "test-declare")
    try:
        await declare(await connection.channel(), from_settings(settings))
    finally:
        await connection.close()
    yield settings
    await svc.delete_redis_keys(services.redis_url, prefix)


def verdict(settings: Settings, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The CLI as a user runs it, configured through the environment."""
    environ = {
        **os.environ,
        "AMQP_URL": settings.amqp_url,
        "AMQP_HOSTS": settings.amqp_hosts or "",
        "RABBITMQ_MANAGEMENT_URL": settings.rabbitmq_management_url or "",
        "REDIS_URL": settings.redis_url,
        "DATABASE_URL": settings.database_url,
        "TOPOLOGY_PREFIX": settings.topology_prefix,
        "QUEUE_TYPE": settings.queue_type,
        "QUEUE_DELIVERY_LIMIT": str(settings.queue_delivery_limit),
        "RETRY_BASE_MS": str(settings.retry_base_ms),  # the same retry tiers
        "MAX_ATTEMPTS": str(settings.max_attempts),
        "LOCK_RETRY_MS": str(settings.lock_retry_ms),
        "PYTHONPATH": str(ROOT),
        **env,
    }
    return subprocess.run(
        [sys.executable, "-m", "ops.cli", *args],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
    )


async def test_a_client_connects_to_whichever_node_answers(services):
    """With the first address dead, a connection lands on the next one (no cluster needed:
    a closed loopback port stands for the lost node)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]  # bound, never listening: refused
        urls = broker_urls(f"amqp://guest:guest@127.0.0.1:{dead}/", None)
        live = services.amqp_url
        connection = await connect([*urls, live], "test-failover")
        try:
            assert connection.url.port == urlsplit(live).port
        finally:
            await connection.close()


async def test_the_cluster_script_joins_three_nodes(cluster):
    """All three nodes run as one cluster."""
    assert cluster.running() == sorted(n.node for n in cluster.nodes)


async def test_quorum_topology_is_declared_replicated_verified_and_exported(quorum, tmp_path):
    """`verdict topology declare/verify/export` in quorum mode: every queue is a quorum queue
    on all three nodes without a priority; verify in classic mode sees the difference."""
    assert verdict(quorum, "topology", "declare").returncode == 0
    verified = verdict(quorum, "topology", "verify")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    base = quorum.rabbitmq_management_url
    async with httpx.AsyncClient(base_url=f"{base}/api") as http:
        live = (await http.get("/queues/%2F", params={"columns": "name,type,members"})).json()
    ours = {q["name"]: q for q in live if q["name"].startswith(quorum.topology_prefix)}
    assert len(ours) == len(from_settings(quorum).queues)
    assert {q["type"] for q in ours.values()} == {"quorum"}
    assert {len(q["members"]) for q in ours.values()} == {3}
    as_classic = verdict(quorum, "topology", "verify", QUEUE_TYPE="classic")
    assert as_classic.returncode == 1 and "x-max-priority" in as_classic.stdout
    out = tmp_path / "definitions.json"
    assert verdict(quorum, "topology", "export", "-o", str(out)).returncode == 0
    exported = json.loads(out.read_text())["queues"]
    assert {q["arguments"]["x-queue-type"] for q in exported} == {"quorum"}
    assert not any("x-max-priority" in q["arguments"] for q in exported)


async def test_a_message_returned_past_the_delivery_limit_is_dead_lettered(quorum):
    """A task that never gets acked (its worker dies with it each time) is dead-lettered by the
    broker after QUEUE_DELIVERY_LIMIT returns, reason `delivery_limit`; it circulates no more."""
    names = Names(quorum.topology_prefix)
    queue_name = names.task_queue("claims", 2)
    connection = await connect(quorum.amqp_urls(), "test-poison")
    try:
        channel = await connection.channel(publisher_confirms=True)
        await channel.default_exchange.publish(
            aio_pika.Message(b'{"crashes": "its worker"}', delivery_mode=2), queue_name
        )
        returns = 0
        for _ in range(DELIVERY_LIMIT + 3):
            consumer = await connection.channel()
            got = await (await consumer.get_queue(queue_name)).get(fail=False)
            if got is None:
                break
            returns += 1
            await consumer.close()  # unacked: the broker takes it back, counting a delivery
        dlq = await channel.get_queue(names.dlq)
        letter = await eventually(lambda: dlq.get(fail=False, no_ack=True))
    finally:
        await connection.close()
    assert returns == DELIVERY_LIMIT + 1
    assert letter.body == b'{"crashes": "its worker"}'
    assert letter.headers["x-death"][0]["reason"] == "delivery_limit"


async def test_sessions_on_every_plan_complete_on_quorum_queues(quorum, pool):
    """A session on each plan goes through workers and the aggregator on the cluster."""
    async with publisher_for(quorum) as pub:
        async with running(*workers_for(quorum), Aggregator(quorum, explain=explain).run):
            sids = [await submit(pool, pub, plan=p, content="x" * (10 * p)) for p in range(1, 7)]
            views = [await final_view(pool, sid, timeout=60) for sid in sids]
    assert [v.status for v in views] == ["completed"] * 6
    assert all(len(v.results) == 4 for v in views)
    assert set((await queue_depths(quorum)).values()) == {0}


async def test_killing_the_node_everyone_uses_loses_no_session(quorum, pool, cluster):
    """`kill -9` of the first node (every connection's and every queue leader's) while
    sessions flow: clients fail over to the others, every accepted session completes with one
    verdict and one row per component, nothing is left in a queue; then the node returns."""
    first = cluster.nodes[0]
    sids: list[str] = []
    async with publisher_for(quorum) as pub:
        async with running(*workers_for(quorum), Aggregator(quorum, explain=explain).run):

            async def keep_submitting(count: int) -> None:
                for i in range(count):
                    sids.append(await accepted(pool, pub, plan=1 + i % 6))
                    await asyncio.sleep(0.05)

            flow = asyncio.create_task(keep_submitting(60))
            await eventually(lambda: _at_least(sids, 15), timeout=60)
            await asyncio.to_thread(first.kill)
            await flow
            views = [await final_view(pool, sid, timeout=120) for sid in sids]
    await asyncio.to_thread(first.start)
    assert len(sids) == 60
    assert [v.status for v in views] == ["completed"] * 60
    assert all(len(v.results) == 4 and v.verdict for v in views)
    async with pool.acquire() as conn:
        rows = await conn.fetchval(
            "SELECT count(*) FROM component_results WHERE session_id = ANY($1::uuid[])", sids
        )
        verdicts = await conn.fetchval(
            "SELECT count(*) FROM verdicts WHERE session_id = ANY($1::uuid[])", sids
        )
    assert (rows, verdicts) == (60 * 4, 60)
    assert set((await queue_depths(quorum)).values()) == {0}


async def _at_least(items: list[str], n: int) -> bool:
    return len(items) >= n


async def accepted(pool, pub: Publisher, plan: int) -> str:
    """Submit until the broker confirms, like a client retrying its 503: a session counts as
    accepted only once a quorum of nodes holds its tasks."""
    for _ in range(60):
        try:
            return await submit(pool, pub, plan=plan)
        except (BrokerUnavailable, QueueFull):  # the API's 503: lost connection, or a nack
            await asyncio.sleep(1)
    raise AssertionError("the cluster never accepted the session")
