"""The whole pipeline as processes (`verdict up`), driven over HTTP like a client would."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import asyncpg
import httpx
import pytest

from shared.api_keys import hashed
from shared.broker import connect
from tests import services as svc
from tests.conftest import TEST_API_KEYS
from topology.spec import build

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
API = "/api/v3/pipeline"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def pipeline(services, database_url, tmp_path):
    """`verdict up` with compose.yaml's replica counts, on a fresh prefix and database."""
    prefix = svc.unique("e")
    port = free_port()
    metrics_base = free_range(14)
    env = {
        **os.environ,
        "AMQP_URL": services.amqp_url,
        "REDIS_URL": services.redis_url,
        "DATABASE_URL": database_url,
        "TOPOLOGY_PREFIX": prefix,
        "API_PORT": str(port),
        "API_KEYS": json.dumps(hashed(TEST_API_KEYS)),
        "LOG_JSON": "true",
        "LOG_LEVEL": "INFO",
        "METRICS_PORT": str(metrics_base),
    }
    if services.management_url:
        env["RABBITMQ_MANAGEMENT_URL"] = services.management_url
    up_log = open(tmp_path / "up.log", "wb")  # noqa: SIM115 - closed in the finally below
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ops.cli",
            "up",
            "--compose",
            str(ROOT / "compose.yaml"),
            "--log-dir",
            str(tmp_path / "logs"),
        ],
        cwd=ROOT,
        env=env,
        stderr=up_log,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(base, process, tmp_path)
        yield {"base": base, "prefix": prefix, "process": process, "logs": tmp_path, "env": env}
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(60)
            except subprocess.TimeoutExpired:
                process.kill()
        up_log.close()
        asyncio.run(
            svc.delete_broker_objects(services.amqp_url, (prefix,), services.management_url)
        )


def _wait_ready(base: str, process: subprocess.Popen, logs: Path, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"verdict up exited early:\n{(logs / 'up.log').read_text()}")
        try:
            health = httpx.get(f"{base}/healthz", timeout=2).json()
            if health.get("rabbitmq") and health.get("postgres"):
                time.sleep(3)  # let every worker register its consumers
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise AssertionError(f"pipeline not ready within {timeout}s:\n{(logs / 'up.log').read_text()}")


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
        results = {sid: _poll(client, sid, key) for sid in submitted}
    for sid, body in results.items():
        assert body["status"] == "completed", body
        assert body["plan_type"] == submitted[sid]
        assert body["verdict"]["label"] and body["verdict"]["explanation"]["en"]
        assert set(body["components"]) == {"techniques", "ai_tampered", "claims", "domain"}

    rows = asyncio.run(_verdict_rows(database_url, list(submitted)))
    assert rows == len(submitted)
    assert asyncio.run(_ready_messages(services.amqp_url, pipeline["prefix"])) == 0


def test_every_worker_and_aggregator_replica_serves_metrics_on_its_own_port(pipeline):
    """METRICS_PORT under `verdict up` starts a range: each replica's port is in metrics.json,
    and every worker and aggregator replica answers there with its own metrics."""
    ports = json.loads((pipeline["logs"] / "logs" / "metrics.json").read_text())
    served = {label: port for label, port in ports.items() if not label.startswith("api")}
    assert len(served) == 13 and len(set(served.values())) == 13
    for label, port in served.items():
        body = _metrics(port)
        family = "verdict_results_total" if label.startswith("aggregator") else "verdict_jobs"
        assert family in body, label


def _metrics(port: int, timeout: float = 30) -> str:
    deadline = time.monotonic() + timeout
    while True:
        try:
            return httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5).text
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def free_range(size: int) -> int:
    """The first of `size` consecutive free loopback ports."""
    for _ in range(100):
        first = free_port()
        if first + size > 65535:
            continue
        try:
            for port in range(first, first + size):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", port))
        except OSError:
            continue
        return first
    raise RuntimeError(f"no {size} consecutive free ports")


def test_sigterm_stops_every_process_cleanly(pipeline):
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


def _poll(client: httpx.Client, sid: str, key: dict[str, str], timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r = client.get(f"{API}/{sid}/result", headers=key)
        if r.status_code == 200:
            return r.json()
        assert r.status_code == 202, r.text
        time.sleep(0.1)
    raise AssertionError(f"session {sid} not final within {timeout}s")


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
