"""Day partitions of the session record (migration 008): made ahead, dropped past retention.

Every table hanging off a session is partitioned by the session's day, so a day leaves the
record as whole tables: each partition is detached CONCURRENTLY (no lock that stops reads or
writes of the parent) and the detached table dropped (it has no foreign keys, so dropping it
locks nothing else). Sessions go last, so no result or verdict ever outlives its session.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

import asyncpg

from shared.db import UNAVAILABLE
from shared.errors import PruneError

# Children first: a session is never gone while what hangs off it is still there.
TABLES = ("review_queue", "verdicts", "component_results", "sessions")
# The partition that holds the sessions with ids other than UUIDv7 (created before 008).
LEGACY_DAY = date(1970, 1, 1)
_DAY_NAME = re.compile(r"^sessions_(\d{8})$")


@dataclass(frozen=True)
class Pruned:
    """What one prune did."""

    dropped: list[str] = field(default_factory=list)  # the days (or "legacy") dropped
    created: int = 0  # partitions made ahead
    keys_deleted: int = 0  # idempotency keys of the dropped days


def partition_name(table: str, day: date) -> str:
    """The partition of `table` holding `day` (the legacy one for LEGACY_DAY)."""
    return f"{table}_legacy" if day == LEGACY_DAY else f"{table}_{day:%Y%m%d}"


def day_of(partition: str) -> date | None:
    """The day a `sessions_YYYYMMDD` partition holds; None for any other name."""
    found = _DAY_NAME.match(partition)
    return datetime.strptime(found.group(1), "%Y%m%d").date() if found else None


def expired(days: list[date], today: date, retention_days: int) -> list[date]:
    """The days past retention, oldest first: today and the `retention_days` before it stay."""
    cutoff = today - timedelta(days=retention_days)
    return sorted(d for d in days if d < cutoff)


async def make_ahead(conn: asyncpg.Connection | asyncpg.Pool, days_ahead: int) -> int:
    """Create the missing partitions from yesterday to `days_ahead` days ahead; how many."""
    made: int = await conn.fetchval(
        "SELECT create_day_partitions(d - 1, d + $1::int)"
        " FROM (SELECT (now() AT TIME ZONE 'UTC')::date AS d) AS today",
        days_ahead,
    )
    return made


async def attached(conn: asyncpg.Connection, parent: str) -> list[str]:
    """The names of the partitions attached to `parent` (a detach pending among them)."""
    rows = await conn.fetch(
        "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
        " WHERE i.inhparent = $1::regclass ORDER BY c.relname",
        parent,
    )
    return [r["relname"] for r in rows]


async def finish_pending_detaches(conn: asyncpg.Connection) -> None:
    """Complete any DETACH CONCURRENTLY an earlier prune started but did not finish."""
    rows = await conn.fetch(
        "SELECT p.relname AS parent, c.relname AS child FROM pg_inherits i"
        " JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent"
        " WHERE i.inhdetachpending"
    )
    for row in rows:
        await conn.execute(
            f"ALTER TABLE {_ident(row['parent'])} DETACH PARTITION {_ident(row['child'])} FINALIZE"
        )


async def legacy_expired(conn: asyncpg.Connection, retention_days: int) -> bool:
    """Whether the legacy partition holds sessions and none of them is within retention."""
    if "sessions_legacy" not in await attached(conn, "sessions"):
        return False
    row = await conn.fetchrow(
        "SELECT EXISTS (SELECT 1 FROM sessions_legacy) AS any,"
        " EXISTS (SELECT 1 FROM sessions_legacy"
        "         WHERE created_at >= now() - make_interval(days => $1)) AS recent",
        retention_days,
    )
    return bool(row["any"]) and not row["recent"]


async def drop_day(conn: asyncpg.Connection, day: date) -> int:
    """Drop one day from every table (its idempotency keys first); the keys deleted.

    Each DETACH ... CONCURRENTLY runs outside a transaction (asyncpg's `execute` without
    arguments sends it as a simple query)."""
    keys = await conn.execute("DELETE FROM idempotency_keys WHERE day = $1", day)
    for table in TABLES:
        name = partition_name(table, day)
        if name in await attached(conn, table):
            await conn.execute(
                f"ALTER TABLE {_ident(table)} DETACH PARTITION {_ident(name)} CONCURRENTLY"
            )
        await conn.execute(f"DROP TABLE IF EXISTS {_ident(name)}")
    return int(keys.split()[-1])


async def prune(conn: asyncpg.Connection, retention_days: int, days_ahead: int) -> Pruned:
    """Make partitions ahead, then drop every day older than `retention_days` (UTC days)."""
    await finish_pending_detaches(conn)
    today: date = await conn.fetchval("SELECT (now() AT TIME ZONE 'UTC')::date")
    days = [d for name in await attached(conn, "sessions") if (d := day_of(name))]
    old = expired(days, today, retention_days)
    if await legacy_expired(conn, retention_days):
        old.insert(0, LEGACY_DAY)
    keys = 0
    for day in old:
        keys += await drop_day(conn, day)
    created = await make_ahead(conn, days_ahead)  # the legacy partitions again, when dropped
    return Pruned([_label(d) for d in old], created, keys)


async def prune_database(database_url: str, retention_days: int, days_ahead: int) -> Pruned:
    """`prune` on a connection of its own; PruneError when Postgres refuses or is away."""
    try:
        conn = await asyncpg.connect(database_url)
        try:
            return await prune(conn, retention_days, days_ahead)
        finally:
            await conn.close()
    except (*UNAVAILABLE, asyncpg.PostgresError) as exc:
        raise PruneError(f"prune failed: {exc}") from exc


def _label(day: date) -> str:
    return "legacy" if day == LEGACY_DAY else day.isoformat()


def _ident(name: str) -> str:
    """A quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'
