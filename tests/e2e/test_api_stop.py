"""`verdict api` stopped with an event stream open: the stream ends cleanly as the signal
arrives (its client reconnects elsewhere), the API exits 0, and the stop neither waits out
uvicorn's graceful timeout nor logs an error for the stream."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests import services as svc
from tests.e2e.conftest import API, free_port, process_env

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
KEY = {"X-API-Key": "test-enterprise"}


@pytest.fixture
def api_process(services, database_url, tmp_path) -> Iterator[tuple[subprocess.Popen, str, Path]]:
    """`verdict api` alone on a fresh topology prefix (no workers: sessions stay open)."""
    prefix = svc.unique("stop")
    port = free_port()
    env = process_env(services, database_url, prefix, port, API_CHECK_WORKERS="false")
    cli = [sys.executable, "-m", "ops.cli"]
    subprocess.run([*cli, "topology", "declare"], cwd=ROOT, env=env, check=True, timeout=60)
    log_path = tmp_path / "api.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen([*cli, "api"], cwd=ROOT, env=env, stdout=log, stderr=log)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_until_publishing(base, process)
        yield process, base, log_path
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
        asyncio.run(
            svc.delete_broker_objects(services.amqp_url, (prefix,), services.management_url)
        )


def _wait_until_publishing(base: str, process: subprocess.Popen) -> None:
    """Until the API publishes to the broker: before that it would analyse a session
    itself, and the stream would end with the result."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert process.poll() is None, "verdict api exited at start"
        try:
            health = httpx.get(f"{base}/healthz", timeout=2)
            if health.status_code == 200 and health.json()["rabbitmq"] is True:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise AssertionError("verdict api not publishing to RabbitMQ within 60 s")


def test_sigterm_ends_an_open_event_stream_cleanly_and_the_api_exits_0(api_process):
    process, base, log_path = api_process
    with httpx.Client(base_url=base, headers=KEY, timeout=30) as client:
        submitted = client.post(f"{API}/analyze-async", json={"content": "a text to follow"})
        assert submitted.status_code == 202, submitted.text
        sid = submitted.json()["session_id"]

    first_event = threading.Event()
    seen: list[str] = []
    ended: list[BaseException | None] = []

    def follow() -> None:
        try:
            with (
                httpx.Client(base_url=base, headers=KEY, timeout=60) as client,
                client.stream("GET", f"{API}/{sid}/events") as response,
            ):
                assert response.status_code == 200
                for line in response.iter_lines():
                    seen.append(line)
                    if line.startswith("event: progress"):
                        first_event.set()
            ended.append(None)  # the body ended as a complete chunked response
        except BaseException as exc:  # a cut-off stream raises here
            ended.append(exc)
            first_event.set()

    reader = threading.Thread(target=follow, daemon=True)
    reader.start()
    assert first_event.wait(30), seen
    process.send_signal(signal.SIGTERM)
    assert process.wait(60) == 0
    reader.join(10)
    assert ended == [None], ended
    assert not any(line.startswith("event: result") for line in seen)  # no false end

    log = log_path.read_text()
    assert "timeout graceful shutdown exceeded" not in log, log
    assert "Exception in ASGI application" not in log, log
    assert "Finished server process" in log
