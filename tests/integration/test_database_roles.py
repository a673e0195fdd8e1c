"""PostgreSQL roles on a server the test owns, with scram-sha-256 for every TCP login: the
application role does the pipeline's work and nothing more; migrations run as the owner."""

from __future__ import annotations

import asyncio
import time
import uuid

import aio_pika
import asyncpg
import pytest
from postgres_node import owned_postgres

from aggregator.explanation import explain
from aggregator.fanin import record_results
from shared import reviews, sessions
from shared.constants import ANALYSIS_COMPONENTS
from shared.db import connect_when_up, create_pool, migrate
from shared.db_roles import DatabaseRoles, provision, scram_verifier
from shared.ephemera import Ephemera
from shared.errors import QueueFull
from shared.job_queue import ClaimedRow, TableConsumer, TablePublisher, deferring_writes
from shared.listener import Listener
from shared.messages import Result, now_ms
from shared.names import Names
from shared.partitions import make_ahead
from shared.review_policy import ReviewPolicy
from shared.sessions import NewSession, result_still_needed
from tests.cli import verdict
from tests.conftest import make_settings

pytestmark = pytest.mark.integration

ROLES = DatabaseRoles("verdict", "verdict_owner", "verdict_app", "verdict_worker")
PASSWORDS = ("owner-pw", "app-pw", "worker-pw")
WEIGHTS = {"techniques": 1.0}
# What `verdict db provision` reads the passwords from.
PASSWORD_ENV = dict(
    zip(
        ("POSTGRES_OWNER_PASSWORD", "POSTGRES_APP_PASSWORD", "POSTGRES_WORKER_PASSWORD"),
        PASSWORDS,
        strict=True,
    )
)


def on_server(services, database_url, server):
    """Settings whose DATABASE_URL is the administrator on the owned server's `verdict`."""
    settings = make_settings(services, database_url, "unused")
    return settings.model_copy(update={"database_url": server.socket_url("verdict")})


def test_a_scram_verifier_has_postgres_layout():
    """SCRAM-SHA-256$iterations:salt$StoredKey:ServerKey, and a fresh salt each time."""
    verifier = scram_verifier("pw", salt=b"0123456789abcdef")
    assert verifier.startswith("SCRAM-SHA-256$4096:MDEyMzQ1Njc4OWFiY2RlZg==$")
    assert scram_verifier("pw") != scram_verifier("pw")


async def test_the_app_role_works_rows_and_nothing_else(services, database_url):
    """Provisioned twice (`verdict db provision`, then again), migrated as the owner: the app
    role records sessions, results and reviews but is no superuser, creates and drops nothing and
    cannot touch the migrations table; a wrong password is refused and only verifiers are
    stored."""
    with owned_postgres(auth_host="scram-sha-256") as server:
        settings = on_server(services, database_url, server)
        passwords = dict(PASSWORD_ENV)
        run = verdict(settings, "db", "provision", **passwords)
        assert run.returncode == 0, run.stderr
        assert "owner verdict_owner, application role verdict_app" in run.stdout
        assert await migrate(server.tcp_url("verdict_owner", "owner-pw", "verdict"))
        # Again after the migrations: the worker's column grants need the tables.
        await provision(server.socket_url(), server.socket_url("verdict"), ROLES, *PASSWORDS)
        app_url = server.tcp_url("verdict_app", "app-pw", "verdict")
        pool = await create_pool(app_url, max_size=2)
        try:
            sid = sessions.new_session_id()
            await sessions.create(pool, NewSession(sid, "t", 3, "text", {"content": "x"}, 60))
            result = Result(
                session_id=sid, component="techniques", success=True, score=40, timestamp=now_ms()
            )
            await record_results(pool, [result], WEIGHTS, explain)
            assert (await sessions.load(pool, sid)).results["techniques"]["score"] == 40
            await the_app_role_queues_and_reviews_verdicts(pool)
            # The aggregators keep day partitions ahead without any DDL right of their own.
            assert await make_ahead(pool, 30) > 0
            async with pool.acquire() as conn:
                assert (
                    await conn.fetchval(
                        "SELECT rolsuper FROM pg_roles WHERE rolname = current_user"
                    )
                    is False
                )
                for forbidden in (
                    "CREATE TABLE spy (x int)",
                    "DROP TABLE sessions",
                    "ALTER TABLE sessions ADD COLUMN x int",
                    "DELETE FROM schema_migrations",
                    "CREATE EXTENSION IF NOT EXISTS pg_stat_statements",
                ):
                    with pytest.raises(asyncpg.InsufficientPrivilegeError):
                        await conn.execute(forbidden)
        finally:
            await pool.close()
        await worker_reads_only_what_it_needs(
            server.tcp_url("verdict_worker", "worker-pw", "verdict"), sid
        )
        await worker_claims_only_task_rows(
            server.tcp_url("verdict_worker", "worker-pw", "verdict"), app_url
        )
        await worker_keeps_only_its_own_ephemera(
            server.tcp_url("verdict_worker", "worker-pw", "verdict"), app_url
        )
        with pytest.raises(asyncpg.InvalidPasswordError):
            await asyncpg.connect(server.tcp_url("verdict_app", "wrong", "verdict"))
        admin = await asyncpg.connect(server.socket_url())
        try:
            stored = await admin.fetch(
                "SELECT rolpassword FROM pg_authid WHERE rolname = ANY($1)",
                [ROLES.owner, ROLES.app],
            )
        finally:
            await admin.close()
        assert all(row["rolpassword"].startswith("SCRAM-SHA-256$") for row in stored)


async def the_app_role_queues_and_reviews_verdicts(pool: asyncpg.Pool) -> None:
    """As the app role the aggregator queues a verdict for review with the verdict, and the
    API lists, claims and decides it."""
    sid = sessions.new_session_id()
    await sessions.create(pool, NewSession(sid, "t", 3, "text", {"content": "x"}, 60))
    results = [
        Result(session_id=sid, component=c, success=True, score=40, timestamp=now_ms())
        for c in ANALYSIS_COMPONENTS
    ]
    await record_results(pool, results, WEIGHTS, explain, ReviewPolicy(confidence_below=1.0))
    assert [item.session_id for item in await reviews.pending(pool, tenant="t")] == [sid]
    assert await reviews.claim(pool, sid, "reviewer") is not None
    decided = await reviews.decide(pool, sid, "reviewer", "low_risk", "fine")
    assert decided is not None and decided.status in ("confirmed", "overridden")
    assert (await reviews.backlog(pool)).waiting == 0


async def worker_reads_only_what_it_needs(url: str, sid: str) -> None:
    """The worker role answers "is this result still needed" and looks fact checks up; it
    cannot read a session's content, anyone's results or verdicts, nor write anything."""
    conn = await asyncpg.connect(url)
    try:
        assert await result_still_needed(conn, sid, "claims") is True  # type: ignore[arg-type]
        assert await result_still_needed(conn, sid, "techniques") is False  # type: ignore[arg-type]
        await conn.fetch("SELECT claim, rating FROM fact_checks LIMIT 1")
        for forbidden in (
            "SELECT input FROM sessions",
            "SELECT tenant FROM sessions",
            "SELECT data, score FROM component_results",
            "SELECT * FROM verdicts",
            "SELECT * FROM review_queue",
            f"UPDATE sessions SET status = 'failed' WHERE id = '{sid}'",
            "DELETE FROM component_results",
            "INSERT INTO fact_checks (claim) VALUES ('x')",
            "SELECT create_day_partitions(current_date, current_date + 400)",
        ):
            with pytest.raises(asyncpg.InsufficientPrivilegeError):
                await conn.execute(forbidden)
    finally:
        await conn.close()


async def worker_claims_only_task_rows(worker_url: str, app_url: str) -> None:
    """The table transport as the worker role: it claims and completes a task row and
    publishes a result row, but sees no result or dead-letter row and can change none."""
    names = Names("rls")
    app = await create_pool(app_url, max_size=2)
    worker = await create_pool(worker_url, max_size=3)
    try:
        as_app = TablePublisher(app, names)
        for body in (b"t", b"too big"):
            await as_app.send(names.exchange, names.task_queue("claims", 3), aio_pika.Message(body))
        await as_app.send(names.exchange, names.result_key("domain"), aio_pika.Message(b"r"))
        await as_app.dead_letter(b"d", {}, "poison", names.task_queue("claims", 3))
        taken: list[ClaimedRow] = []

        async def take(row: ClaimedRow) -> None:
            taken.append(row)

        listener = Listener(worker_url)
        claims = TableConsumer(
            worker,
            listener,
            [([names.task_queue("claims", 3), names.results, names.dlq], 5)],
            take,
            consumer_id="w",
            lease_s=30,
            poll_s=0.2,
            aging_per_s=0,
        )
        await claims.start()
        try:
            await asyncio.sleep(0.5)
            assert [row.body for row in taken] == [b"t", b"too big"]
            await taken[1].reject(requeue=False)  # as an oversize task is
            with deferring_writes(taken[0]):
                await TablePublisher(worker, names).result(
                    Result(
                        session_id=str(uuid.uuid4()),
                        component="claims",
                        success=True,
                        score=1,
                        timestamp=now_ms(),
                    )
                )
            await taken[0].ack()
        finally:
            await claims.stop()
            await listener.close()
        async with worker.acquire() as conn:
            # Its two tasks only: neither results nor dead letters.
            assert await conn.fetchval("SELECT count(*) FROM job_queue") == 2
            for no_effect in (
                "UPDATE job_queue SET status = 'pending' WHERE queue = 'rls.results'",
                "UPDATE job_queue SET body = 'x' WHERE status = 'error'",
            ):
                assert await conn.execute(no_effect) == "UPDATE 0"
        states = await app.fetch(
            "SELECT queue, status FROM job_queue WHERE queue LIKE 'rls%' ORDER BY id"
        )
        assert [tuple(r) for r in states] == [
            ("rls.claims.3", "completed"),
            ("rls.claims.3", "error"),
            ("rls.results", "pending"),
            ("rls_dlq", "error"),
            ("rls.results", "pending"),
        ]
        # The DLQ's caps count the dead letters the worker cannot see: two, of 8 bytes.
        letter = (b"x", {}, "poison", names.task_queue("claims", 3))
        with pytest.raises(QueueFull):
            await TablePublisher(worker, names, dlq_caps=(2, 1 << 20)).dead_letter(*letter)
        with pytest.raises(QueueFull):
            await TablePublisher(worker, names, dlq_caps=(3, 8)).dead_letter(*letter)
        await TablePublisher(worker, names, dlq_caps=(3, 1 << 20)).dead_letter(*letter)
    finally:
        await app.close()
        await worker.close()


async def worker_keeps_only_its_own_ephemera(worker_url: str, app_url: str) -> None:
    """Without Redis (shared/ephemera.py) the worker role writes and reads its heartbeat and a
    task's attempts; it neither sees nor changes a console sign-out, a rate-limit window or a
    media text (which could steer another session's analysis), which the app role keeps."""
    app = await create_pool(app_url, max_size=2)
    worker = await create_pool(worker_url, max_size=2)
    try:
        as_app, as_worker = Ephemera(app), Ephemera(worker)
        await as_app.put("rls:console:signed-out:n1", "1", 60)
        await as_app.hit("rls:ratelimit:k", 60)
        await as_worker.put("rls:workers:w1", "beat", 60)
        await as_worker.append("rls:attempts:s1:claims", {"attempt": 1}, 50, 60)
        # By key: attempts, workers; neither the sign-out nor the window.
        assert await as_worker.starting_with("rls:") == [[{"attempt": 1}], "beat"]
        assert await as_worker.get("rls:console:signed-out:n1") is None
        for forbidden in (
            as_worker.put("rls:console:signed-out:n1", "0", 0.001),  # un-sign-out someone
            as_worker.hit("rls:ratelimit:k", 60),
            as_worker.put("rls:console:signed-out:n2", "1", 60),
            as_worker.put("rls:media:s1:transcript", "planted", 60),
        ):
            with pytest.raises(asyncpg.InsufficientPrivilegeError):
                await forbidden
        assert await as_app.get("rls:console:signed-out:n1") == "1"
        assert await as_app.window("rls:ratelimit:k") == (1, pytest.approx(time.time() + 60, abs=5))
        assert await as_app.get("rls:workers:w1") == "beat"
    finally:
        await app.close()
        await worker.close()


async def test_a_component_role_claims_and_settles_only_its_own_task_rows(services, database_url):
    """`verdict db provision` with POSTGRES_COMPONENT_PASSWORDS: the claims role, asked for
    the claims and techniques queues, claims only the claims row; it neither sees nor changes
    a techniques row (which the worker role of every component still may); in ephemera it
    keeps heartbeats and its own component's attempts, not another's; a component not known
    is refused."""
    with owned_postgres(auth_host="scram-sha-256") as server:
        settings = on_server(services, database_url, server)
        env = dict(PASSWORD_ENV)
        refused = verdict(
            settings, "db", "provision", **env, POSTGRES_COMPONENT_PASSWORDS='{"claim": "pw"}'
        )
        assert refused.returncode != 0 and "unknown ['claim']" in refused.stderr
        env["POSTGRES_COMPONENT_PASSWORDS"] = '{"claims": "claims-pw", "domain": "domain-pw"}'
        assert succeeded(verdict(settings, "db", "provision", **env))
        assert await migrate(server.tcp_url("verdict_owner", "owner-pw", "verdict"))
        run = verdict(settings, "db", "provision", **env)  # the grants need the tables
        assert succeeded(run) and "verdict_worker_claims, verdict_worker_domain" in run.stdout
        names = Names("own")
        claims_q, techniques_q = names.task_queue("claims", 3), names.task_queue("techniques", 3)
        app = await create_pool(server.tcp_url("verdict_app", "app-pw", "verdict"), max_size=2)
        claims_url = server.tcp_url("verdict_worker_claims", "claims-pw", "verdict")
        role = await create_pool(claims_url, max_size=3)
        anyone = await create_pool(server.tcp_url("verdict_worker", "worker-pw", "verdict"))
        listener = Listener(claims_url)
        taken: list[ClaimedRow] = []

        async def take(row: ClaimedRow) -> None:
            taken.append(row)

        consumer = TableConsumer(
            role,
            listener,
            [([claims_q, techniques_q], 5)],
            take,
            consumer_id="claims-only",
            lease_s=30,
            poll_s=0.2,
            aging_per_s=0,
        )
        try:
            for queue, body in ((claims_q, b"c"), (techniques_q, b"t")):
                await TablePublisher(app, names).send(names.exchange, queue, aio_pika.Message(body))
            await consumer.start()
            await asyncio.sleep(0.6)
            assert [row.body for row in taken] == [b"c"]
            await taken[0].ack()
            async with role.acquire() as conn:
                assert await conn.fetchval("SELECT count(*) FROM job_queue") == 1  # its own
                assert (
                    await conn.execute(
                        "UPDATE job_queue SET status = 'completed' WHERE queue = $1", techniques_q
                    )
                    == "UPDATE 0"
                )
            assert await anyone.fetchval("SELECT count(*) FROM job_queue") == 2
            assert (
                await app.fetchval("SELECT status FROM job_queue WHERE queue = $1", techniques_q)
                == "pending"
            )
            as_role = Ephemera(role)
            await as_role.put("own:workers:claims-1", "beat", 60)
            await as_role.append("own:attempts:s1:claims", {"attempt": 1}, 50, 60)
            assert await Ephemera(app).get("own:workers:claims-1") == "beat"
            await Ephemera(app).append("own:attempts:s1:domain", {"attempt": 1}, 50, 60)
            # Another component's attempts: neither seen nor written, as with its Redis user.
            assert await as_role.get("own:attempts:s1:domain") is None
            with pytest.raises(asyncpg.InsufficientPrivilegeError):
                await as_role.append("own:attempts:s2:domain", {"attempt": 1}, 50, 60)
        finally:
            await consumer.stop()
            await listener.close()
            for pool in (app, role, anyone):
                await pool.close()


def succeeded(run) -> bool:
    """A `verdict` run that exited 0 (else the assertion shows its stderr)."""
    assert run.returncode == 0, run.stderr
    return True


async def test_provisioning_and_migrating_at_once_both_succeed():
    """A deployment's jobs may provision and migrate at the same moment (compose restarts
    both): provisioning waits for the migrations' lock instead of racing them on the catalog
    ("tuple concurrently updated") or granting on a table half migrated."""
    with owned_postgres() as server:
        admin, in_database = server.socket_url(), server.socket_url("verdict")
        await provision(admin, in_database, ROLES, *PASSWORDS)
        owner = f"postgresql://verdict_owner@/verdict?host={server.root}&port={server.port}"
        provisioned, migrated = await asyncio.gather(
            provision(admin, in_database, ROLES, *PASSWORDS),
            migrate(owner),
            return_exceptions=True,
        )
        assert provisioned is None and isinstance(migrated, list) and migrated, (
            provisioned,
            migrated,
        )


async def test_the_jobs_wait_for_a_database_that_is_not_up_yet():
    """`verdict db migrate` and `provision` connect through `connect_when_up`: a server that
    starts a moment later is waited for (on a container network its name may not resolve yet,
    CI saw `provision` die of that); a name that never resolves fails once the wait is over."""
    with owned_postgres() as server:
        server.stop()
        admin = server.socket_url()
        starting = asyncio.create_task(connect_when_up(admin, within_s=30))
        await asyncio.sleep(1.5)
        assert not starting.done()
        await asyncio.to_thread(server.start)
        conn = await asyncio.wait_for(starting, 30)
        assert await conn.fetchval("SELECT 1") == 1
        await conn.close()
    began = time.monotonic()
    with pytest.raises(OSError):
        await connect_when_up("postgresql://x@no-such-host.invalid/db", within_s=1.5)
    assert 1.0 <= time.monotonic() - began < 10
