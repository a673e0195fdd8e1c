"""Sessions end to end over TLS only: `amqps://` to a RabbitMQ node with a TLS listener,
`rediss://` to a Redis with a TLS port, PostgreSQL with `ssl=on` reached with
`sslmode=verify-full` — each trusting a CA the test makes and throws away."""

from __future__ import annotations

import asyncio
import contextlib
import random
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import pytest
from postgres_node import owned_postgres
from rabbit_node import RabbitNode, free_node_port
from redis.asyncio import Redis

from aggregator.explanation import explain
from aggregator.service import Aggregator
from shared import live
from shared.broker import connect
from shared.db import create_pool, migrate
from tests import services as svc
from tests.conftest import make_settings
from tests.integration.conftest import publisher_for, running
from tests.integration.test_worker_flow import final_view, submit, workers_for
from tests.tls import TlsFiles, make_tls
from topology.broker import declare
from topology.spec import from_settings

pytestmark = pytest.mark.e2e


@contextlib.contextmanager
def redis_over_tls(tls: TlsFiles) -> Iterator[str]:
    """A Redis that listens on a TLS port only; its `rediss://` URL."""
    port = svc.free_port()
    server = subprocess.Popen(
        [
            "redis-server",
            "--port",
            "0",
            "--tls-port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--tls-cert-file",
            str(tls.cert),
            "--tls-key-file",
            str(tls.key),
            "--tls-ca-cert-file",
            str(tls.ca),
            "--tls-auth-clients",
            "no",
            "--save",
            "",
            "--appendonly",
            "no",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield f"rediss://localhost:{port}/0?ssl_ca_certs={tls.ca}&ssl_cert_reqs=required"
    finally:
        server.terminate()
        server.wait(10)


async def answers(check, timeout: float = 30.0) -> None:
    """Until `check()` succeeds (a server still starting refuses at first)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        try:
            await check()
            return
        except Exception:
            if asyncio.get_running_loop().time() > deadline:
                raise
            await asyncio.sleep(0.2)


@pytest.fixture
def tls_material() -> Iterator[tuple[TlsFiles, TlsFiles]]:
    """A throwaway CA and loopback certificate, and PostgreSQL's own copy of them."""
    folder = Path(tempfile.mkdtemp(prefix="verdict-tls-"))
    folder.chmod(0o755)  # the servers run as their own users and read their files here
    tls = make_tls(folder / "ca")
    try:
        yield tls, tls.owned_by("postgres", folder / "postgres")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.timeout(300)
async def test_sessions_complete_with_every_connection_over_tls(services, tls_material):
    """Tasks, results, live state and records all cross TLS; PostgreSQL reports each of the
    pipeline's connections as encrypted; the verdicts are written."""
    tls, pg_tls = tls_material
    pg_options = f"-c ssl=on -c ssl_cert_file={pg_tls.cert} -c ssl_key_file={pg_tls.key}"
    node = RabbitNode(
        f"vtls{random.randint(0, 9999)}",
        free_node_port(tls=True),
        (str(tls.ca), str(tls.cert), str(tls.key)),
    )
    node.start()
    try:
        with owned_postgres(pg_options) as pg, redis_over_tls(tls) as redis_url:
            admin = await asyncpg.connect(pg.socket_url())
            await admin.execute('CREATE DATABASE "verdict"')
            await admin.close()
            db_url = (
                f"postgresql://postgres@localhost:{pg.port}/verdict"
                f"?sslmode=verify-full&sslrootcert={tls.ca}"
            )
            await migrate(db_url)
            settings = make_settings(
                services,
                db_url,
                svc.unique("tls"),
                amqp_url=node.amqps_url,
                redis_url=redis_url,
                rabbitmq_management_url=node.management_url,
            )
            redis = Redis.from_url(redis_url)
            await answers(redis.ping)
            connection = await connect(settings.amqp_url, "test-tls")
            await declare(await connection.channel(), from_settings(settings))
            await connection.close()
            pool = await create_pool(db_url, max_size=4)
            try:
                async with (
                    publisher_for(settings) as publisher,
                    running(*workers_for(settings), Aggregator(settings, explain=explain).run),
                ):
                    sids = [await submit(pool, publisher, plan=p) for p in (2, 6)]
                    views = [await final_view(pool, sid, timeout=60) for sid in sids]
                    encrypted = await pool.fetchval(
                        "SELECT bool_and(s.ssl) FROM pg_stat_ssl s JOIN pg_stat_activity a"
                        " USING (pid) WHERE a.datname = 'verdict'"
                    )
                cached = await live.read_state(redis, settings.key_prefix, sids[0])
            finally:
                await pool.close()
                await redis.aclose()
        assert [v.status for v in views] == ["completed", "completed"]
        assert all(v.verdict is not None for v in views)
        assert encrypted is True
        assert cached is not None and cached["status"] == "completed"
    finally:
        node.stop()
