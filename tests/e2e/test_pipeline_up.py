"""The whole pipeline as processes (`verdict up`), driven over HTTP like a client would."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
import uuid

import aio_pika
import asyncpg
import httpx
import pytest
from redis.asyncio import Redis

from shared.broker import connect
from tests.e2e.conftest import API, poll_result
from topology.spec import build

pytestmark = pytest.mark.e2e


@pytest.fixture
def pipeline_shape() -> tuple[str, ...]:
    """These tests are about `verdict up` as compose.yaml describes it: every replica."""
    return ()


# What the plans do does not depend on how many processes serve them: the compact shape.
@pytest.mark.parametrize("pipeline_shape", [("--compact",)])
def test_sessions_on_three_plans_reach_a_verdict(pipeline, database_url, services):
    """Nine sessions on plans 1, 3 and 6 go from 202 to a verdict row; the queues end empty."""
    base = pipeline["base"]
    key = {"X-API-Key": "test-enterprise"}
    texts = [
        "Guvernul a anunțat astăzi bugetul pentru 2025, cu o creștere de 3% a investițiilor.",
        "SHOCKING!!! They don't want you to know the TRUTH. Share before it's deleted: https://bit.ly/abc",
        "The city council met on Tuesday to discuss the new bus routes, see https://www.reuters.com/x",
    ]
    submitted: dict[str, int] = {}
    with httpx.Client(base_url=base, timeout=10) as client:
        for plan in (1, 3, 6):
            for text in texts:
                r = client.post(
                    f"{API}/analyze-async", json={"content": text, "plan_type": plan}, headers=key
                )
                assert r.status_code == 202, r.text
                submitted[r.json()["session_id"]] = plan
        results = {sid: poll_result(client, sid, key) for sid in submitted}
    for sid, body in results.items():
        assert body["status"] == "completed", body
        assert body["plan_type"] == submitted[sid]
        assert body["verdict"]["label"] and body["verdict"]["explanation"]["en"]
        assert set(body["components"]) == {"techniques", "ai_tampered", "claims", "domain"}

    rows = asyncio.run(_verdict_rows(database_url, list(submitted)))
    assert rows == len(submitted)
    assert asyncio.run(_ready_messages(services.amqp_url, pipeline["prefix"])) == 0


@pytest.mark.parametrize("pipeline_env", [{"AMQP_URL": "", "REDIS_URL": ""}])
@pytest.mark.parametrize("pipeline_shape", [("--compact", "--transport", "postgres")])
def test_the_postgres_transport_runs_the_pipeline_with_postgresql_alone(
    pipeline, database_url, services
):
    """`verdict up --transport postgres` with neither AMQP_URL nor REDIS_URL: sessions on
    plans 1 and 6 reach their verdicts through job_queue (an event stream follows one to its
    result), every row of it ends completed, the workers' heartbeats are in PostgreSQL, and
    nothing of this deployment exists on the broker or in Redis."""
    base, prefix = pipeline["base"], pipeline["prefix"]
    key = {"X-API-Key": "test-enterprise"}
    texts = [
        "SHOCKING!!! They don't want you to know the TRUTH. Share before it's deleted: https://bit.ly/abc",
        "The city council met on Tuesday to discuss the new bus routes.",
    ]
    with httpx.Client(base_url=base, timeout=10) as client:
        health = client.get("/healthz").json()
        assert (health["transport"], health["house"], health["redis"]) == (
            "postgres",
            "postgres",
            False,
        )
        sids = []
        for plan in (1, 6):
            for text in texts:
                r = client.post(
                    f"{API}/analyze-async", json={"content": text, "plan_type": plan}, headers=key
                )
                assert r.status_code == 202, r.text
                sids.append(r.json()["session_id"])
        results = [poll_result(client, sid, key) for sid in sids]
        events = client.get(f"{API}/{sids[0]}/events", headers=key).text
    assert all(body["status"] == "completed" for body in results), results
    assert "event: result" in events
    assert asyncio.run(_verdict_rows(database_url, sids)) == len(sids)
    statuses = asyncio.run(_job_statuses(database_url, prefix))
    # Per session four tasks and four results, every one settled.
    assert statuses == {"completed": 8 * len(sids)}
    assert not asyncio.run(_broker_has_queue(services.amqp_url, f"{prefix}.claims.1"))
    assert asyncio.run(_ephemera_beats(database_url, prefix)) >= 2  # workers and aggregator
    assert not asyncio.run(_redis_keys(services.redis_url, prefix))


async def _ephemera_beats(database_url: str, prefix: str) -> int:
    conn = await asyncpg.connect(database_url)
    try:
        return await conn.fetchval(
            "SELECT count(*) FROM ephemera WHERE key LIKE $1 || ':workers:%'", prefix
        )
    finally:
        await conn.close()


async def _redis_keys(redis_url: str, prefix: str) -> list[bytes]:
    client = Redis.from_url(redis_url)
    try:
        return [k async for k in client.scan_iter(match=f"{prefix}:*")]
    finally:
        await client.aclose()


async def _job_statuses(database_url: str, prefix: str) -> dict[str, int]:
    conn = await asyncpg.connect(database_url)
    try:
        rows = await conn.fetch(
            "SELECT status, count(*) AS n FROM job_queue WHERE queue LIKE $1 || '.%'"
            " GROUP BY status",
            prefix,
        )
        return {r["status"]: r["n"] for r in rows}
    finally:
        await conn.close()


async def _broker_has_queue(amqp_url: str, name: str) -> bool:
    connection = await connect(amqp_url, "e2e-check")
    try:
        channel = await connection.channel()
        try:
            await channel.declare_queue(name, passive=True)
        except aio_pika.exceptions.ChannelNotFoundEntity:
            return False
        return True
    finally:
        await connection.close()


def test_every_replica_serves_metrics_on_its_own_port_and_sigterm_stops_each_cleanly(pipeline):
    """compose.yaml's shape, started once for both checks (14 processes take half a minute):
    every replica serves its metrics on a port of its own, then SIGTERM stops them all."""
    _every_replica_serves_metrics_on_its_own_port(pipeline)
    _sigterm_stops_every_process_cleanly(pipeline)


def _every_replica_serves_metrics_on_its_own_port(pipeline):
    """METRICS_PORT under `verdict up` starts a range: each replica's port is in metrics.json,
    and every worker and aggregator replica answers there with its own metrics; the API
    replicas serve theirs in the range too, with what the alerts watch (ops/alerts.yml)."""
    ports = json.loads((pipeline["logs"] / "logs" / "metrics.json").read_text())
    served = {label: port for label, port in ports.items() if not label.startswith("api")}
    assert len(served) == 13 and len(set(served.values())) == 13
    for label, port in served.items():
        body = _metrics(port)
        family = "verdict_results_total" if label.startswith("aggregator") else "verdict_jobs"
        assert family in body, label
        extra = "verdict_session_seconds" if label.startswith("aggregator") else "redeliveries"
        assert extra in body, label
    apis = [port for label, port in ports.items() if label.startswith("api")]
    assert apis
    for port in apis:  # the API reads the registry every 5 s: the first read may be before
        body = _metrics_showing(port, 'verdict_workers_online{component="claims"} 3.0')
        assert 'verdict_workers_online{component="aggregator"} 2.0' in body
        assert "verdict_queue_depth{" in body


def _metrics_showing(port: int, line: str, timeout: float = 30) -> str:
    """The metrics of `port` once they include `line`."""
    deadline = time.monotonic() + timeout
    while line not in (body := _metrics(port)):
        assert time.monotonic() < deadline, body
        time.sleep(0.5)
    return body


def _metrics(port: int, timeout: float = 30) -> str:
    deadline = time.monotonic() + timeout
    while True:
        try:
            return httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5).text
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def _sigterm_stops_every_process_cleanly(pipeline):
    """`verdict up` stops its children on SIGTERM; each exits 0 by itself, and so does it."""
    process = pipeline["process"]
    children = json.loads((pipeline["logs"] / "logs" / "pids.json").read_text())
    assert (
        len(children) == 14
    )  # api 1, media 2, techniques 2, ai_tampered 2, claims 3, domain 2, aggregator 2
    process.send_signal(signal.SIGTERM)
    assert process.wait(60) == 0
    still_running = [label for label, pid in children.items() if _alive(pid)]
    assert still_running == []
    exits = json.loads((pipeline["logs"] / "logs" / "exits.json").read_text())
    assert exits == {label: 0 for label in children}  # each child stopped by itself, cleanly
    logs = (pipeline["logs"] / "up.log").read_text()
    assert "stopped" in logs


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def _verdict_rows(database_url: str, sids: list[str]) -> int:
    conn = await asyncpg.connect(database_url)
    try:
        return await conn.fetchval(
            "SELECT count(*) FROM verdicts WHERE session_id = ANY($1::uuid[])",
            [uuid.UUID(s) for s in sids],
        )
    finally:
        await conn.close()


async def _ready_messages(amqp_url: str, prefix: str) -> int:
    connection = await connect(amqp_url, "e2e-check")
    try:
        channel = await connection.channel()
        total = 0
        for queue in build(prefix).queues:
            declared = await channel.declare_queue(queue.name, passive=True)
            total += declared.declaration_result.message_count or 0
        return total
    finally:
        await connection.close()
