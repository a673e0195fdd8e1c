"""Retention of the session record: day partitions, made ahead, dropped by `verdict db prune`,
and migration 008 converting a populated database."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from datetime import date, timedelta

import asyncpg
import pytest

from aggregator.fanin import record_result
from shared import partitions, reviews, sessions
from shared.db import create_pool, migrate, migration_files
from shared.messages import Result
from shared.review_policy import ReviewPolicy
from shared.sessions import NewSession
from tests import services as svc
from tests.cli import verdict

pytestmark = pytest.mark.integration

WEIGHTS = {"techniques": 0.3, "ai_tampered": 0.2, "claims": 0.3, "domain": 0.2}
DAY_MS = 86_400_000


def explain(verdict, results):
    return {"en": verdict.label, "ro": verdict.label}


@pytest.fixture
async def private_url(services) -> AsyncIterator[str]:
    """A database of this test's own, migrated: prune drops partitions others would use."""
    name = svc.unique("verdict_ret_")
    url = await svc.create_database(services.database_admin_url, name)
    await migrate(url)
    yield url
    await svc.drop_database(services.database_admin_url, name)


async def finished_session(pool, sid: str, key: str | None = None) -> None:
    """A session with its four results, a verdict and a review item."""
    await sessions.create(
        pool, NewSession(sid, "tenant-a", 3, "text", {"content": "x"}, 600, idempotency_key=key)
    )
    review = ReviewPolicy(confidence_below=1.1)
    for component in WEIGHTS:
        result = Result(session_id=sid, component=component, success=True, score=90, timestamp=1)
        await record_result(pool, result, WEIGHTS, explain, review)


def relations(node: dict) -> list[str]:
    """The tables a plan (EXPLAIN FORMAT JSON node) reads."""
    found = [node["Relation Name"]] if "Relation Name" in node else []
    return found + [r for child in node.get("Plans", []) for r in relations(child)]


async def partition_tables(conn, day: date) -> list[str]:
    names = [partitions.partition_name(t, day) for t in partitions.TABLES]
    rows = await conn.fetch("SELECT relname FROM pg_class WHERE relname = ANY($1)", names)
    return sorted(r["relname"] for r in rows)


async def test_session_ids_name_their_day_partition(pool):
    """A new session lands in today's partition, and a lookup by id probes that one only."""
    sid = sessions.new_session_id()
    await finished_session(pool, sid)
    where = await pool.fetchval(
        "SELECT tableoid::regclass::text FROM sessions WHERE id = $1", uuid.UUID(sid)
    )
    assert where == partitions.partition_name("sessions", sessions.session_day(sid))
    plan = await pool.fetchval(
        "EXPLAIN (FORMAT JSON) SELECT * FROM sessions WHERE id = $1 AND day = session_day($1)",
        uuid.UUID(sid),
    )
    assert relations(plan[0]["Plan"]) == [partitions.partition_name("sessions", date.today())]


async def test_sql_and_python_agree_on_the_day_of_an_id(pool):
    """session_day() in SQL and in Python: the same day, up to the last millisecond of one."""
    midnight_ms = 1_796_083_200_000  # 2026-12-01T00:00:00Z
    ids = [sessions.new_session_id(ms) for ms in (midnight_ms - 1, midnight_ms, 0)]
    ids.append(str(uuid.uuid4()))
    in_sql = await pool.fetchval(
        "SELECT array_agg(session_day(u) ORDER BY n)"
        " FROM unnest($1::uuid[]) WITH ORDINALITY AS t(u, n)",
        ids,
    )
    assert in_sql == [sessions.session_day(i) for i in ids]
    assert sessions.session_day(ids[0]) == date(2026, 11, 30)


async def test_one_idempotency_key_makes_one_session_under_concurrent_requests(pool):
    """Eight concurrent creates under one key: one session, and every create names it."""
    key = f"key-{uuid.uuid4()}"
    news = [
        NewSession(sessions.new_session_id(), "tenant-a", 3, "text", {}, 60, idempotency_key=key)
        for _ in range(8)
    ]
    ids = await asyncio.gather(*(sessions.create(pool, new) for new in news))
    assert len(set(ids)) == 1 and ids[0] in {new.id for new in news}
    stored = await pool.fetchval(
        "SELECT count(*) FROM sessions WHERE tenant = 'tenant-a' AND idempotency_key = $1", key
    )
    assert stored == 1


async def test_prune_drops_days_past_retention_and_keeps_the_rest(settings, private_url):
    """`verdict db prune` with 30 days of retention: the session of 40 days ago goes with its
    results, verdict, review item, idempotency key and partitions; today's stays; the days
    ahead are ready; a second prune drops nothing."""
    pool = await create_pool(private_url)
    try:
        old_ms = int(time.time() * 1000) - 40 * DAY_MS
        old_day = sessions.session_day(sessions.new_session_id(old_ms))
        await pool.fetchval("SELECT create_day_partitions($1, $1)", old_day)
        old = sessions.new_session_id(old_ms)
        await finished_session(pool, old, key="old-key")
        recent = sessions.new_session_id()
        await finished_session(pool, recent, key="recent-key")
        assert (await sessions.load(pool, old)).verdict is not None

        env = {"DATABASE_URL": private_url, "RETENTION_DAYS": "30", "PARTITION_DAYS_AHEAD": "9"}
        first = await asyncio.to_thread(verdict, settings, "db", "prune", **env)
        assert first.returncode == 0, first.stderr
        assert f"dropped 1 day(s): {old_day.isoformat()}" in first.stdout
        assert "1 idempotency key(s) deleted" in first.stdout

        assert await sessions.load(pool, old) is None
        assert await reviews.review_of(pool, old) is None
        assert not await sessions.key_used(pool, "tenant-a", "old-key")
        async with pool.acquire() as conn:
            assert await partition_tables(conn, old_day) == []
            today = sessions.session_day(recent)
            assert len(await partition_tables(conn, today + timedelta(days=9))) == 4
        kept = await sessions.load(pool, recent)
        assert kept.verdict is not None and kept.review is not None
        assert await sessions.key_used(pool, "tenant-a", "recent-key")
        counts = await pool.fetchrow(
            "SELECT (SELECT count(*) FROM sessions) AS s, (SELECT count(*) FROM verdicts) AS v,"
            " (SELECT count(*) FROM component_results) AS r"
        )
        assert tuple(counts) == (1, 1, 4)

        again = await asyncio.to_thread(verdict, settings, "db", "prune", **env)
        assert again.returncode == 0, again.stderr
        assert "dropped 0 day(s): none" in again.stdout
    finally:
        await pool.close()


async def test_prune_waits_for_a_long_reader_without_stopping_other_traffic(private_url):
    """A prune meeting a transaction that has read the sessions table waits for it (DETACH
    ... CONCURRENTLY) while new sessions are written and read as usual: it takes no lock
    that queues the traffic behind the reader; once the reader ends, the old day goes."""
    pool = await create_pool(private_url)
    reader = await asyncpg.connect(private_url)
    try:
        old_ms = int(time.time() * 1000) - 40 * DAY_MS
        old_day = sessions.session_day(sessions.new_session_id(old_ms))
        await pool.fetchval("SELECT create_day_partitions($1, $1)", old_day)
        await finished_session(pool, sessions.new_session_id(old_ms))
        reading = reader.transaction()
        await reading.start()
        assert await reader.fetchval("SELECT count(*) FROM sessions") == 1

        pruning = asyncio.create_task(partitions.prune_database(private_url, 30, 2))

        async def detach_waiting() -> bool:
            return bool(
                await pool.fetchval(
                    "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%DETACH PARTITION%'"
                    " AND wait_event_type = 'Lock' AND datname = current_database()"
                )
            )

        deadline = time.monotonic() + 10
        while not await detach_waiting():
            assert time.monotonic() < deadline, "prune never reached its detach"
            assert not pruning.done(), "prune finished under an open reader"
            await asyncio.sleep(0.05)
        started = time.monotonic()
        for _ in range(3):
            sid = sessions.new_session_id()
            await asyncio.wait_for(finished_session(pool, sid), timeout=5)
            assert (await asyncio.wait_for(sessions.load(pool, sid), timeout=5)).verdict
        assert time.monotonic() - started < 5
        assert not pruning.done()  # still waiting for the reader, and nobody waited on it

        await reading.commit()
        pruned = await asyncio.wait_for(pruning, timeout=30)
        assert pruned.dropped == [old_day.isoformat()]
        assert await pool.fetchval("SELECT count(*) FROM sessions") == 3
    finally:
        await reader.close()
        await pool.close()


async def test_prune_refuses_an_unreachable_database_in_one_line(settings):
    """Postgres away: exit 1 and a message naming the failure, no traceback."""
    away = await asyncio.to_thread(
        verdict, settings, "db", "prune", DATABASE_URL="postgresql://nobody@127.0.0.1:1/none"
    )
    assert away.returncode == 1
    assert "prune failed" in away.stderr and "Traceback" not in away.stderr


async def test_the_aggregators_keep_partitions_ahead_with_the_application_role(private_url):
    """create_day_partitions() runs as its owner: a role without DDL rights makes days."""
    role = svc.unique("verdict_app_")
    conn = await asyncpg.connect(private_url)
    try:
        await conn.execute(f"CREATE ROLE {role} LOGIN")
        await conn.execute(f"GRANT EXECUTE ON FUNCTION create_day_partitions(date, date) TO {role}")
        await conn.execute(f"GRANT USAGE ON SCHEMA public TO {role}")
        app = await asyncpg.connect(_with_user(private_url, role))
        try:
            before = await app.fetchval(
                "SELECT count(*) FROM pg_inherits WHERE inhparent = 'sessions'::regclass"
            )
            made = await partitions.make_ahead(app, 20)
            after = await app.fetchval(
                "SELECT count(*) FROM pg_inherits WHERE inhparent = 'sessions'::regclass"
            )
        finally:
            await app.close()
        assert made == 4 * (after - before) and after > before
    finally:
        await conn.execute(f"REVOKE ALL ON SCHEMA public FROM {role}")
        await conn.execute(
            f"REVOKE EXECUTE ON FUNCTION create_day_partitions(date, date) FROM {role}"
        )
        await conn.execute(f"DROP ROLE {role}")
        await conn.close()


def _with_user(url: str, user: str) -> str:
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    host = parts.hostname or "127.0.0.1"
    port = f":{parts.port}" if parts.port else ""
    return urlunsplit(parts._replace(netloc=f"{user}@{host}{port}"))


async def test_migration_008_converts_a_populated_database(services):
    """Sessions recorded before 008 (UUIDv4 ids, an idempotency key, results, a verdict and a
    review item) are all there after it, found by id, and their key still replays."""
    name = svc.unique("verdict_mig8_")
    url = await svc.create_database(services.database_admin_url, name)
    try:
        conn = await asyncpg.connect(url)
        try:
            await conn.execute(
                "CREATE TABLE schema_migrations (version integer PRIMARY KEY,"
                " name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
            )
            for version, file, sql in migration_files():
                if version < 8:
                    await conn.execute(sql)
                    await conn.execute(
                        "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
                        version,
                        file,
                    )
            sid = uuid.uuid4()
            await conn.execute(
                "INSERT INTO sessions (id, tenant, plan, input_type, input, components,"
                " idempotency_key, request_hash, deadline_at, status)"
                " VALUES ($1, 'tenant-a', 3, 'text', '{}', $2, 'k1', 'h1', now(), 'completed')",
                sid,
                list(WEIGHTS),
            )
            await conn.execute(
                "INSERT INTO component_results (session_id, component, status, score)"
                " SELECT $1, c, 'ok', 50 FROM unnest($2::text[]) AS c",
                sid,
                list(WEIGHTS),
            )
            await conn.execute(
                "INSERT INTO verdicts (session_id, score, label, confidence, explanation)"
                " VALUES ($1, 50, 'mixed', 0.4, '{}')",
                sid,
            )
            await conn.execute(
                "INSERT INTO review_queue (session_id, tenant, plan, label, confidence, reasons)"
                " VALUES ($1, 'tenant-a', 3, 'mixed', 0.4, '{low_confidence}')",
                sid,
            )
        finally:
            await conn.close()

        # 008 and every migration after it, on the rows 008 converted.
        assert await migrate(url) == [f for v, f, _ in migration_files() if v >= 8]

        pool = await create_pool(url)
        try:
            view = await sessions.load(pool, str(sid))
            assert view is not None and view.verdict["label"] == "mixed"
            assert sorted(view.results) == sorted(WEIGHTS)
            assert view.review["status"] == "pending"
            assert (
                await pool.fetchval(
                    "SELECT tableoid::regclass::text FROM sessions WHERE id = $1", sid
                )
                == "sessions_legacy"
            )
            replay = await sessions.record(
                pool,
                NewSession(
                    sessions.new_session_id(),
                    "tenant-a",
                    3,
                    "text",
                    {},
                    60,
                    idempotency_key="k1",
                ),
            )
            assert (replay.id, replay.request_hash) == (str(sid), "h1")
            assert await pool.fetchval("SELECT count(*) FROM sessions") == 1
        finally:
            await pool.close()
    finally:
        await svc.drop_database(services.database_admin_url, name)
