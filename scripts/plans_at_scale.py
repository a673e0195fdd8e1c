"""The query plans of the API, the fan-in, the workers and the janitor at scale (issue 13).

    python scripts/plans_at_scale.py [--sessions 10000000] [--days 30] [--results-every 10]
        [--verdicts-every 10] [--keep]

Fills a scratch database (made from DATABASE_URL's server, migrated, dropped at the end
unless --keep) with `--sessions` sessions spread evenly over the last `--days` UTC days, all
with generate_series in the server: UUIDv7 ids, a verdict for every `--verdicts-every`-th
session and the four component results for every `--results-every`-th (the satellite tables
are read by primary key only, so their size changes no plan and the fill stays bounded),
one session in 10,000 still processing (the janitor's and the quotas' work) and an
idempotency key on every 100th. Then it runs ANALYZE and prints EXPLAIN (ANALYZE, BUFFERS)
of each statement the pipeline runs per request, with the time each fill step took.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
import uuid
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit, urlunsplit

import asyncpg

from aggregator.fanin import OVERDUE_SQL
from shared.db import SERVER_SETTINGS, migrate
from shared.sessions import LOAD_SQL, RESULT_NEEDED_SQL
from shared.tenants import IN_FLIGHT_SQL

DAY_MS = 86_400_000
TENANTS = 50

# One session in 10,000 is still processing, all of them tenant-0's (g % 10000 = 0 implies
# g % TENANTS = 0): the quota query is shown for a tenant at its cap and for one with none.
# A UUIDv7 in SQL: the row's millisecond, version 7, then md5 bits of its number (variant 8).
UUID7 = (
    "(lpad(to_hex({ms}), 12, '0') || '7' || substr(md5(g::text), 1, 3) || '8'"
    " || substr(md5(g::text), 4, 15))::uuid"
)

FILL_SESSIONS = f"""
INSERT INTO sessions (id, day, tenant, plan, input_type, input, components, status,
                      idempotency_key, created_at, deadline_at, finished_at)
SELECT id, session_day(id), 'tenant-' || (g % {TENANTS}), 1 + g % 6, 'text',
       '{{"content": "x"}}', '{{techniques,ai_tampered,claims,domain}}',
       CASE WHEN g % 10000 = 0 THEN 'processing' ELSE 'completed' END,
       CASE WHEN g % 100 = 0 THEN 'key-' || g END,
       to_timestamp(ms / 1000.0), to_timestamp(ms / 1000.0) + interval '15 minutes',
       CASE WHEN g % 10000 = 0 THEN NULL ELSE to_timestamp(ms / 1000.0 + 2) END
FROM (SELECT g, $1::bigint + g * $3::bigint AS ms
      FROM generate_series($2::bigint, $4::bigint) AS g) AS t,
     LATERAL (SELECT {UUID7.format(ms="t.ms")} AS id) AS u
"""

FILL_VERDICTS = """
INSERT INTO verdicts (session_id, day, score, label, confidence, explanation)
SELECT id, day, 42, 'low_risk', 0.9, '{"en": "x"}' FROM sessions
WHERE day = $1 AND status <> 'processing'
  AND ('x' || substr(md5(id::text), 1, 8))::bit(32)::int % $2::int = 0
"""

FILL_RESULTS = """
INSERT INTO component_results (session_id, day, component, status, score)
SELECT s.id, s.day, c, 'ok', 40 FROM sessions s, unnest(s.components) AS c
WHERE s.day = $1 AND s.status <> 'processing'
  AND ('x' || substr(md5(s.id::text), 1, 8))::bit(32)::int % $2::int = 0
"""

FILL_KEYS = """
INSERT INTO idempotency_keys (tenant, key, session_id, day)
SELECT tenant, idempotency_key, id, day FROM sessions
WHERE day = $1 AND idempotency_key IS NOT NULL
"""

# The fan-in's lock (record_results(), migration 008) for a batch of ten sessions.
LOCK_SQL = (
    "SELECT s.id FROM sessions s WHERE s.id = ANY($1) AND s.day = ANY(session_days($1))"
    " ORDER BY s.id FOR UPDATE"
)
KEY_SQL = "SELECT EXISTS (SELECT 1 FROM idempotency_keys WHERE tenant = $1 AND key = $2)"


def scratch_url(url: str, name: str) -> str:
    return urlunsplit(urlsplit(url)._replace(path=f"/{name}"))


async def fill(
    conn: asyncpg.Connection, total: int, days: int, every: int, verdicts_every: int
) -> list[str]:
    """Fill day by day; the time each table took."""
    await conn.execute("SET synchronous_commit = off")
    now_ms = int(time.time() * 1000)
    start_ms = (now_ms // DAY_MS - days + 1) * DAY_MS
    step = max(1, days * DAY_MS // total)
    await conn.execute(
        "SELECT create_day_partitions(to_timestamp($1 / 1000.0)::date, current_date + 7)",
        start_ms,
    )
    timings: dict[str, float] = {"sessions": 0, "verdicts": 0, "results": 0, "keys": 0}
    per_day = -(-total // days)
    for d in range(days):
        first, last = d * per_day, min(total, (d + 1) * per_day) - 1
        if first > last:
            break
        began = time.perf_counter()
        await conn.execute(FILL_SESSIONS, start_ms, first, step, last)
        timings["sessions"] += time.perf_counter() - began
        print(f"  sessions {first:,}..{last:,}", flush=True)
    first_day = datetime.fromtimestamp(start_ms / 1000, UTC).date()
    for d in range(days + 1):
        day = first_day + timedelta(days=d)
        for name, sql, args in (
            ("verdicts", FILL_VERDICTS, (day, verdicts_every)),
            ("results", FILL_RESULTS, (day, every)),
            ("keys", FILL_KEYS, (day,)),
        ):
            began = time.perf_counter()
            await conn.execute(sql, *args)
            timings[name] += time.perf_counter() - began
        print(f"  day {day}: verdicts, results, keys", flush=True)
    began = time.perf_counter()
    await conn.execute("ANALYZE")
    timings["analyze"] = time.perf_counter() - began
    return [f"{name}: {seconds:.1f} s" for name, seconds in timings.items()]


async def explain(conn: asyncpg.Connection, title: str, sql: str, *args: object) -> None:
    rows = await conn.fetch(f"EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) {sql}", *args)
    print(f"\n### {title}\n")
    print("\n".join(r[0] for r in rows))


async def plans(conn: asyncpg.Connection) -> None:
    """EXPLAIN ANALYZE of every per-request statement, on rows that exist."""
    counts = await conn.fetchrow(
        "SELECT (SELECT count(*) FROM sessions) AS sessions,"
        " (SELECT count(*) FROM verdicts) AS verdicts,"
        " (SELECT count(*) FROM component_results) AS results,"
        " (SELECT count(*) FROM pg_inherits WHERE inhparent = 'sessions'::regclass) AS days"
    )
    print(f"\nrows: {dict(counts)}")
    today = datetime.now(UTC).date()
    sid = await conn.fetchval(
        "SELECT id FROM sessions WHERE day = $1 LIMIT 1", today - timedelta(days=10)
    )
    key = await conn.fetchrow("SELECT tenant, key FROM idempotency_keys LIMIT 1")
    batch = [
        r["id"]
        for r in await conn.fetch(
            "SELECT id FROM sessions WHERE day = $1 LIMIT 10", today - timedelta(days=1)
        )
    ]
    await explain(conn, "API: GET /result, /queue-status (sessions.load)", LOAD_SQL, sid)
    await explain(conn, "worker: is this result still needed", RESULT_NEEDED_SQL, sid, "claims")
    async with conn.transaction():
        await explain(conn, "fan-in: lock a batch of 10 sessions", LOCK_SQL, batch)
        await explain(conn, "janitor: overdue sessions (aggregator/fanin.py)", OVERDUE_SQL, 100)
    for tenant, what in (("tenant-0", "every open session"), ("tenant-1", "none open")):
        await explain(
            conn, f"API: in-flight count and replay, {what}", IN_FLIGHT_SQL, tenant, 100, "key-x"
        )
    await explain(conn, "API: idempotency key used", KEY_SQL, key["tenant"], key["key"])


async def main(args: argparse.Namespace) -> None:
    base = os.environ.get("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
    name = f"verdict_scale_{uuid.uuid4().hex[:8]}"
    admin = await asyncpg.connect(base)
    await admin.execute(f'CREATE DATABASE "{name}"')
    url = scratch_url(base, name)
    try:
        await migrate(url)
        conn = await asyncpg.connect(url, server_settings=SERVER_SETTINGS)
        try:
            began = time.perf_counter()
            timings = await fill(
                conn, args.sessions, args.days, args.results_every, args.verdicts_every
            )
            print(f"filled in {time.perf_counter() - began:.0f} s ({', '.join(timings)})")
            await plans(conn)
        finally:
            await conn.close()
    finally:
        if args.keep:
            print(f"\nkept database {name}")
        else:
            await admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        await admin.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=10_000_000)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--results-every", type=int, default=10)
    parser.add_argument("--verdicts-every", type=int, default=10)
    parser.add_argument("--keep", action="store_true")
    asyncio.run(main(parser.parse_args()))
