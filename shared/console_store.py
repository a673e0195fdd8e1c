"""What the admin console reads from the record: session search, one session in full, and the
per-minute figures of the overview. Read-only; the API's database role runs it."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

# A search answers at most this many sessions, newest first.
SEARCH_LIMIT = 100
# Statuses a session can have (the CHECK of the sessions table).
STATUSES = ("processing", "completed", "partial", "failed")


@dataclass(frozen=True)
class SessionQuery:
    """A console search; every field narrows it, None leaves it open."""

    session_id: uuid.UUID | None = None
    tenant: str | None = None
    status: str | None = None
    label: str | None = None
    since: datetime | None = None
    until: datetime | None = None


async def search_sessions(
    db: asyncpg.Pool, query: SessionQuery, limit: int = SEARCH_LIMIT
) -> list[dict[str, Any]]:
    """Sessions matching the query, newest first, with their verdict's label and score."""
    rows = await db.fetch(
        """
        SELECT s.id, s.tenant, s.plan, s.status, s.input_type, s.mode, s.created_at,
               s.finished_at, v.label, round(v.score::numeric, 2)::float8 AS score
        FROM sessions s LEFT JOIN verdicts v ON v.session_id = s.id
        WHERE ($1::uuid IS NULL OR s.id = $1)
          AND ($2::text IS NULL OR s.tenant = $2)
          AND ($3::text IS NULL OR s.status = $3)
          AND ($4::text IS NULL OR v.label = $4)
          AND ($5::timestamptz IS NULL OR s.created_at >= $5)
          AND ($6::timestamptz IS NULL OR s.created_at < $6)
        ORDER BY s.created_at DESC
        LIMIT $7
        """,
        query.session_id,
        query.tenant,
        query.status,
        query.label,
        query.since,
        query.until,
        limit,
    )
    return [dict(r) for r in rows]


async def session_record(db: asyncpg.Pool, session_id: uuid.UUID) -> dict[str, Any] | None:
    """One session as recorded: its row, each component's result with when it was recorded,
    and its verdict with when it was reached; None when unknown."""
    row = await db.fetchrow("SELECT * FROM sessions WHERE id = $1", session_id)
    if row is None:
        return None
    results = await db.fetch(
        """
        SELECT component, status, score, data, error, attempt, worker_id, processing_ms,
               recorded_at
        FROM component_results WHERE session_id = $1 ORDER BY recorded_at
        """,
        session_id,
    )
    verdict = await db.fetchrow(
        "SELECT score, label, confidence, explanation, created_at FROM verdicts "
        "WHERE session_id = $1",
        session_id,
    )
    return {
        **dict(row),
        "results": [dict(r) for r in results],
        "verdict": dict(verdict) if verdict else None,
    }


async def sessions_by_minute(db: asyncpg.Pool, minutes: int) -> list[dict[str, Any]]:
    """For each of the last `minutes` minutes: sessions accepted, and sessions finished by
    their final status (rows of minute, status, count; `accepted` counts acceptances)."""
    rows = await db.fetch(
        """
        SELECT date_trunc('minute', created_at) AS minute, 'accepted' AS status, count(*) AS n
        FROM sessions WHERE created_at >= now() - make_interval(mins => $1)
        GROUP BY 1
        UNION ALL
        SELECT date_trunc('minute', finished_at), status, count(*)
        FROM sessions
        WHERE finished_at >= now() - make_interval(mins => $1) AND status <> 'processing'
        GROUP BY 1, 2
        """,
        minutes,
    )
    return [dict(r) for r in rows]


async def latency_by_minute(db: asyncpg.Pool, minutes: int) -> list[dict[str, Any]]:
    """p50 and p95 seconds from acceptance to final of the sessions finished in each of the
    last `minutes` minutes (rows of minute, p50, p95, n)."""
    rows = await db.fetch(
        """
        SELECT date_trunc('minute', finished_at) AS minute,
               percentile_cont(0.5) WITHIN GROUP (ORDER BY seconds) AS p50,
               percentile_cont(0.95) WITHIN GROUP (ORDER BY seconds) AS p95,
               count(*) AS n
        FROM (SELECT finished_at, extract(epoch FROM finished_at - created_at) AS seconds
              FROM sessions
              WHERE finished_at >= now() - make_interval(mins => $1)) finished
        GROUP BY 1
        """,
        minutes,
    )
    return [dict(r) for r in rows]


async def latency_over(db: asyncpg.Pool, minutes: int) -> dict[str, Any]:
    """p50 and p95 seconds from acceptance to final over the sessions finished in the last
    `minutes` minutes, and how many there were (p50, p95 None when none)."""
    row = await db.fetchrow(
        """
        SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY seconds) AS p50,
               percentile_cont(0.95) WITHIN GROUP (ORDER BY seconds) AS p95,
               count(*) AS n
        FROM (SELECT extract(epoch FROM finished_at - created_at) AS seconds
              FROM sessions
              WHERE finished_at >= now() - make_interval(mins => $1)) finished
        """,
        minutes,
    )
    return dict(row)


async def oldest_open_ages(db: asyncpg.Pool) -> dict[tuple[str, int], float]:
    """How long ago (s) the oldest task without a recorded result was accepted, by
    (component, plan): waiting in its queue or running (the record cannot tell the two
    apart). A component and plan with no such task is left out."""
    rows = await db.fetch(
        """
        SELECT c.component, s.plan, extract(epoch FROM now() - min(s.created_at)) AS age
        FROM sessions s CROSS JOIN LATERAL unnest(s.components) AS c(component)
        WHERE s.status = 'processing'
          AND NOT EXISTS (SELECT 1 FROM component_results r
                          WHERE r.session_id = s.id AND r.component = c.component)
        GROUP BY 1, 2
        """
    )
    return {(r["component"], r["plan"]): float(r["age"]) for r in rows}


async def now(db: asyncpg.Pool) -> datetime:
    """The database's clock, which every timestamp of the record comes from."""
    found: datetime = await db.fetchval("SELECT now()")
    return found
