"""The whole pipeline as processes (`verdict up`), for every e2e test that drives it over HTTP."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import httpx
import pytest
import redis as redis_sync

from dispatcher.online import REGISTERED
from shared.api_keys import hashed
from shared.ephemera import Ephemera
from shared.keys import Keys
from shared.registry import decode
from tests import services as svc
from tests.conftest import TEST_API_KEYS

ROOT = Path(__file__).resolve().parents[2]
API = "/api/v3/pipeline"


# How long a script stopped at its timeout (SIGTERM) has to stop what it started.
SCRIPT_GRACE_S = 120


def run_script(argv: list[str], env: dict[str, str], timeout: float) -> subprocess.CompletedProcess:
    """Run a script to its end, its output captured. Past `timeout` it gets SIGTERM, and
    SCRIPT_GRACE_S to stop the pipeline, node and database it started (scripts/owned.py),
    before SIGKILL; then subprocess.TimeoutExpired, with what it printed, is raised.
    (`subprocess.run(timeout=…)` kills at once, leaving all of that running.)"""
    with subprocess.Popen(
        argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as process:
        try:
            out, err = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.terminate()
            try:
                out, err = process.communicate(timeout=SCRIPT_GRACE_S)
            except subprocess.TimeoutExpired:
                process.kill()
                out, err = process.communicate()
            raise subprocess.TimeoutExpired(argv, timeout, out, err) from None
    return subprocess.CompletedProcess(argv, process.returncode, out, err)


@pytest.fixture
def pipeline_env() -> dict[str, str]:
    """Extra environment for `verdict up` (override in a test module)."""
    return {}


@pytest.fixture
def pipeline_shape() -> tuple[str, ...]:
    """`verdict up`'s options: `--compact` (one API, one aggregator, one process for every
    worker component: a test of what the pipeline does starts in seconds); a module that
    tests compose.yaml's own shape (replicas, their ports, their stop) overrides it with ()."""
    return ("--compact",)


def process_env(
    services: svc.Services, database_url: str, prefix: str, port: int, **extra: str
) -> dict[str, str]:
    """The environment of a pipeline process started by a test: this run's services, its own
    topology prefix, the API on `port`, the test keys; `extra` adds or overrides."""
    env = {
        **os.environ,
        "AMQP_URL": services.amqp_url,
        "REDIS_URL": services.redis_url,
        "DATABASE_URL": database_url,
        "TOPOLOGY_PREFIX": prefix,
        "API_PORT": str(port),
        "API_KEYS": json.dumps(hashed(TEST_API_KEYS)),
        **svc.signing_env(),
        "LOG_LEVEL": "INFO",
        # Sessions other tests leave processing in the run's shared database would count
        # against this pipeline's admission limit: the tests of admission turn it on.
        "ADMISSION_LIMIT": "0",
        **extra,
    }
    if services.management_url:
        env["RABBITMQ_MANAGEMENT_URL"] = services.management_url
    return env


@pytest.fixture
def pipeline(services, database_url, tmp_path, pipeline_env, pipeline_shape):
    """`verdict up` (compact unless a module asks for compose.yaml's replica counts:
    `pipeline_shape`), on a fresh prefix and database; a test module adds or overrides
    variables by overriding the `pipeline_env` fixture."""
    with running_pipeline(services, database_url, tmp_path, pipeline_env, pipeline_shape) as up:
        yield up


@pytest.fixture(scope="module")
def module_pipeline_env() -> dict[str, str]:
    """Extra environment for `module_pipeline` (override in a test module)."""
    return {}


@pytest.fixture(scope="module")
def module_pipeline(services, database_url, tmp_path_factory, module_pipeline_env):
    """One compact `verdict up` shared by a module's tests, for modules whose tests each
    find their own sessions (by id, tenant or reason) and stop nothing: a start is some
    15 s of two cores. `module_pipeline_env` adds or overrides variables."""
    folder = tmp_path_factory.mktemp("pipeline")
    with running_pipeline(
        services, database_url, folder, module_pipeline_env, ("--compact",)
    ) as up:
        yield up


@contextlib.contextmanager
def running_pipeline(
    services: svc.Services,
    database_url: str,
    folder: Path,
    extra_env: dict[str, str],
    shape: tuple[str, ...],
) -> Iterator[dict]:
    """`verdict up` with `shape`'s options on a fresh prefix, ready (every component online,
    the API accepting work), logs in `folder`; stopped with SIGTERM and its broker objects
    deleted after."""
    prefix = svc.unique("e")
    # One block of free ports: the metrics range first (a port per process), the API's last,
    # so no process's metrics server can take the API's port.
    metrics_base = free_range(15)
    port = metrics_base + 14
    env = process_env(
        services,
        database_url,
        prefix,
        port,
        LOG_JSON="true",
        METRICS_PORT=str(metrics_base),
        **extra_env,
    )
    up_log = open(folder / "up.log", "wb")  # noqa: SIM115 - closed in the finally below
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ops.cli",
            "up",
            "--compose",
            str(ROOT / "compose.yaml"),
            "--log-dir",
            str(folder / "logs"),
            *shape,
        ],
        cwd=ROOT,
        env=env,
        stderr=up_log,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(base, process, folder, env, prefix)
        yield {"base": base, "prefix": prefix, "process": process, "logs": folder, "env": env}
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


def _wait_ready(
    base: str,
    process: subprocess.Popen,
    logs: Path,
    env: dict[str, str],
    prefix: str,
    timeout: float = 90,
) -> None:
    """Until the API reaches the broker and every component has an online worker (a worker
    announces itself once its consumers are registered; the API refuses work before)."""
    deadline = time.monotonic() + timeout
    last = "nothing"
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"verdict up exited early:\n{(logs / 'up.log').read_text()}")
        try:
            answer = httpx.get(f"{base}/healthz", timeout=2)
            last = f"{answer.status_code} {answer.text[:200]!r}"
            health = answer.json()
            carried = health.get("rabbitmq") or health.get("transport") == "postgres"
            reached = carried and health.get("postgres")
            if reached and set(REGISTERED) <= _online(env, prefix):
                # The API's own view last: a POST made now is not refused for want of a
                # worker its registry read missed (a read under way while it announced).
                accepting = httpx.get(f"{base}/healthz", timeout=2).json()
                if accepting.get("accepts_text"):
                    return
        except (httpx.HTTPError, ValueError) as exc:  # not up yet, or not JSON yet: said below
            last = repr(exc)
        time.sleep(0.5)
    raise AssertionError(
        f"pipeline not ready within {timeout}s; /healthz last answered {last}:\n"
        f"{(logs / 'up.log').read_text()}"
    )


def _online(env: dict[str, str], prefix: str) -> set[str]:
    """Components with an online worker in the registry of `prefix` (in Redis, or in
    PostgreSQL for a deployment without it)."""
    if env.get("REDIS_URL"):
        client = redis_sync.Redis.from_url(env["REDIS_URL"])
        try:
            keys = list(client.scan_iter(match=Keys(prefix).workers, count=500))
            values = client.mget(keys) if keys else []
        finally:
            client.close()
    else:
        values = asyncio.run(_beats_in_postgres(env["DATABASE_URL"], prefix))
    records = [decode(v, time.time()) for v in values if v]
    return {c for r in records if r is not None and r.status == "online" for c in r.components}


async def _beats_in_postgres(database_url: str, prefix: str) -> list[str]:
    conn = await asyncpg.connect(database_url)
    try:
        return [str(v) for v in await Ephemera(conn).starting_with(Keys(prefix).worker(""))]
    finally:
        await conn.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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


def poll_result(client: httpx.Client, sid: str, key: dict[str, str], timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r = client.get(f"{API}/{sid}/result", headers=key)
        if r.status_code == 200:
            return r.json()
        assert r.status_code == 202, r.text
        time.sleep(0.1)
    raise AssertionError(f"session {sid} not final within {timeout}s")
