"""Sessions in PostgreSQL: create, read, and the progress view clients poll."""

from __future__ import annotations

import os
import time
import uuid
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

import asyncpg

from shared.constants import ANALYSIS_COMPONENTS
from shared.messages import TenantTuning


@dataclass(frozen=True)
class NewSession:
    id: str
    tenant: str
    plan: int
    input_type: str
    input: dict[str, Any]
    deadline_s: float
    user_id: str | None = None
    idempotency_key: str | None = None
    # SHA-256 of the normalised request: tells a retry of it from a reuse of its key.
    request_hash: str | None = None
    mode: str = "async"
    # The components it runs: the tenant's choice (shared/tenant_settings.py), else all four.
    components: tuple[str, ...] = ANALYSIS_COMPONENTS
    # The tenant settings it runs with (their version, what the tasks carry) and what the
    # aggregator needs of them (verdict weights, review rules); None: the deployment's.
    tuning: TenantTuning | None = None
    policy: dict[str, Any] | None = None

    @property
    def settings_version(self) -> int | None:
        return self.tuning.settings_version if self.tuning else None


@dataclass(frozen=True)
class SessionView:
    """What a client may see of one session."""

    id: str
    tenant: str
    status: str
    plan: int
    mode: str
    components: tuple[str, ...]
    results: dict[str, dict[str, Any]] = field(default_factory=dict)
    verdict: dict[str, Any] | None = None
    # The human review of the verdict, when it was queued for one (shared/reviews.py).
    review: dict[str, Any] | None = None
    created_at: datetime | None = None
    finished_at: datetime | None = None

    @property
    def final(self) -> bool:
        return self.status != "processing"

    def progress(self) -> dict[str, Any]:
        """The queue-status document (docs/architecture.md §4.5)."""
        return progress_of(self.status, self.components, self.results)


def progress_of(
    status: str, components: tuple[str, ...], results: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """Progress from the recorded results: exact however often a result was delivered."""
    done = [c for c in components if results.get(c, {}).get("status") == "ok"]
    failed = [c for c in components if c in results and results[c]["status"] != "ok"]
    pending = [c for c in components if c not in results]
    progress = (
        100
        if status != "processing"
        else round(100 * (len(components) - len(pending)) / len(components))
    )
    return {
        "status": status,
        "progress": progress,
        "completed_components": done,
        "failed_components": failed,
        "pending_components": pending,
    }


def new_session_id(now_ms: int | None = None) -> str:
    """A UUIDv7 (RFC 9562): its first 48 bits are the creation time in milliseconds, so the
    database finds the session's day partition from the id alone (`session_day`, migration
    008)."""
    ms = time.time_ns() // 1_000_000 if now_ms is None else now_ms
    rand = int.from_bytes(os.urandom(10), "big")
    value = _time_prefix(ms) | 0x7 << 76 | (rand >> 68) << 64 | 0b10 << 62
    return str(uuid.UUID(int=value | rand & (1 << 62) - 1))


def _time_prefix(ms: int) -> int:
    """A UUIDv7's first 48 bits: its creation time in Unix milliseconds."""
    return (ms & (1 << 48) - 1) << 80


def session_day(session_id: str) -> date:
    """The day partition of a session (UTC); 1970-01-01 for ids other than UUIDv7, the
    `_legacy` partition. The same function as `session_day()` in SQL (migration 008)."""
    sid = uuid.UUID(session_id)
    days = (sid.int >> 80) // 86_400_000 if sid.version == 7 else 0
    return date(1970, 1, 1) + timedelta(days=days)


@dataclass(frozen=True)
class Recorded:
    """The session a create left in place: the new one, or the one its idempotency key names."""

    id: str
    request_hash: str | None


async def create(conn: asyncpg.Connection | asyncpg.Pool, s: NewSession) -> str:
    """Insert the session; with an idempotency key already used by the tenant, return that id."""
    return (await record(conn, s)).id


# The key is claimed first: when the tenant used it already, its row names that session
# (ON CONFLICT DO UPDATE returns the existing row, even one committed after this statement
# began) and no session is inserted.
RECORD_SQL = """
WITH key AS (
    INSERT INTO idempotency_keys (tenant, key, session_id, day, request_hash)
    SELECT $2, $9, $1, session_day($1), $10 WHERE $9::text IS NOT NULL
    ON CONFLICT (tenant, key) DO UPDATE SET tenant = EXCLUDED.tenant
    RETURNING session_id, request_hash
), made AS (
    INSERT INTO sessions (id, day, tenant, user_id, plan, input_type, input, components,
                          mode, idempotency_key, request_hash, deadline_at, settings_version,
                          policy)
    SELECT $1, session_day($1), $2, $3, $4, $5, $6, $7, $8, $9, $10,
           now() + make_interval(secs => $11), $12, $13
    WHERE NOT EXISTS (SELECT 1 FROM key WHERE key.session_id <> $1)
    RETURNING id, request_hash
)
SELECT session_id AS id, request_hash FROM key WHERE session_id <> $1
UNION ALL
SELECT id, request_hash FROM made
"""


async def record(conn: asyncpg.Connection | asyncpg.Pool, s: NewSession) -> Recorded:
    """`create`, also saying which request the existing session of a reused key came from."""
    row = await conn.fetchrow(
        RECORD_SQL,
        uuid.UUID(s.id),
        s.tenant,
        s.user_id,
        s.plan,
        s.input_type,
        s.input,
        list(s.components),
        s.mode,
        s.idempotency_key,
        s.request_hash,
        s.deadline_s,
        s.settings_version,
        s.policy,
    )
    return Recorded(str(row["id"]), row["request_hash"])


async def key_used(conn: asyncpg.Connection | asyncpg.Pool, tenant: str, key: str) -> bool:
    """Whether the tenant has a session under this idempotency key already."""
    return bool(
        await conn.fetchval(
            "SELECT EXISTS (SELECT 1 FROM idempotency_keys WHERE tenant = $1 AND key = $2)",
            tenant,
            key,
        )
    )


# Counted up to a bound only: a pipeline far over it costs no longer a scan than one at it.
PROCESSING_SQL = """
SELECT count(*) FROM (SELECT 1 FROM sessions WHERE status = 'processing' LIMIT $1) AS open
"""


async def processing(conn: asyncpg.Connection | asyncpg.Pool, up_to: int) -> int:
    """Sessions processing across the pipeline, every tenant's, counted up to `up_to`."""
    return int(await conn.fetchval(PROCESSING_SQL, up_to))


# Both in one snapshot; the sessions created since a moment are a range of the primary key
# (a UUIDv7 begins with its creation time), in the day partitions from that moment's on.
PACE_SQL = """
SELECT (SELECT count(*) FROM (SELECT 1 FROM sessions WHERE status = 'processing' LIMIT $1) AS o),
       (SELECT count(*) FROM sessions WHERE id >= $2 AND day >= session_day($2))
"""


def first_id_at(ms: int) -> uuid.UUID:
    """The smallest session id created at `ms` (Unix milliseconds) or later."""
    return uuid.UUID(int=_time_prefix(ms))


async def processing_and_created(
    conn: asyncpg.Connection | asyncpg.Pool, up_to: int, since_ms: int
) -> tuple[int, int]:
    """Sessions processing (counted up to `up_to`) and sessions created from `since_ms` on,
    every tenant's, as of one moment: how many finished in between follows from two of these."""
    row = await conn.fetchrow(PACE_SQL, up_to, first_id_at(since_ms))
    assert row is not None
    return int(row[0]), int(row[1])


# What hangs off a session goes with it (migration 008 has no foreign keys to cascade).
DELETE_SQL = """
WITH gone AS (
    DELETE FROM sessions WHERE id = $1 AND day = session_day($1)
    RETURNING tenant, idempotency_key
), results AS (
    DELETE FROM component_results WHERE session_id = $1 AND day = session_day($1)
), verdict AS (
    DELETE FROM verdicts WHERE session_id = $1 AND day = session_day($1)
), review AS (
    DELETE FROM review_queue WHERE session_id = $1 AND day = session_day($1)
)
DELETE FROM idempotency_keys k USING gone
WHERE k.tenant = gone.tenant AND k.key = gone.idempotency_key AND k.session_id = $1
"""


async def delete(conn: asyncpg.Connection | asyncpg.Pool, session_id: str) -> None:
    """Remove a session whose tasks the broker refused, so no row claims unqueued work."""
    await conn.execute(DELETE_SQL, uuid.UUID(session_id))


# A session by id with its results, verdict and review: one day partition of each table.
LOAD_SQL = """
SELECT s.*, round(v.score::numeric, 2)::float8 AS v_score, v.label AS v_label,
       round(v.confidence::numeric, 3)::float8 AS v_confidence,
       v.explanation AS v_explanation,
       coalesce((SELECT jsonb_object_agg(r.component, jsonb_build_object(
            'status', r.status, 'score', r.score, 'data', r.data, 'error', r.error,
            'attempt', r.attempt, 'processing_ms', r.processing_ms))
        FROM component_results r WHERE r.session_id = s.id AND r.day = session_day($1)),
        '{}') AS results,
       q.status AS q_status, q.reviewed_label AS q_label, q.note AS q_note,
       q.reviewed_at AS q_reviewed_at
FROM sessions s
LEFT JOIN verdicts v ON v.session_id = s.id AND v.day = session_day($1)
LEFT JOIN review_queue q ON q.session_id = s.id AND q.day = session_day($1)
WHERE s.id = $1 AND s.day = session_day($1)
"""


async def load(
    conn: asyncpg.Connection | asyncpg.Pool, session_id: str, tenant: str | None = None
) -> SessionView | None:
    """The session with its results and verdict; None when unknown or another tenant's."""
    try:
        sid = uuid.UUID(session_id)
    except ValueError:
        return None
    row = await conn.fetchrow(LOAD_SQL, sid)
    if row is None or (tenant is not None and row["tenant"] != tenant):
        return None
    verdict = None
    if row["v_label"] is not None:
        verdict = {
            "score": row["v_score"],
            "label": row["v_label"],
            "confidence": row["v_confidence"],
            "explanation": row["v_explanation"],
        }
    return SessionView(
        id=str(row["id"]),
        tenant=row["tenant"],
        status=row["status"],
        plan=row["plan"],
        mode=row["mode"],
        components=tuple(row["components"]),
        results=row["results"],
        verdict=verdict,
        review=_review(row),
        created_at=row["created_at"],
        finished_at=row["finished_at"],
    )


def _review(row: asyncpg.Record) -> dict[str, Any] | None:
    """The `review` of the result document (as shared.reviews.ReviewItem.public)."""
    if row["q_status"] is None:
        return None
    reviewed_at = row["q_reviewed_at"]
    return {
        "status": row["q_status"],
        "label": row["q_label"],
        "note": row["q_note"],
        "reviewed_at": reviewed_at.isoformat() if reviewed_at else None,
    }


# --- used by the API ---


async def mark_sync(conn: asyncpg.Connection | asyncpg.Pool, session_id: str) -> None:
    """Record that the session is analysed in the API's process (the broker was away)."""
    await conn.execute(
        "UPDATE sessions SET mode = 'sync' WHERE id = $1::uuid AND day = session_day($1::uuid)",
        session_id,
    )


async def tenant_of(conn: asyncpg.Connection | asyncpg.Pool, session_id: uuid.UUID) -> str | None:
    """The tenant the session belongs to; None while no such session is recorded."""
    tenant: str | None = await conn.fetchval(
        "SELECT tenant FROM sessions WHERE id = $1 AND day = session_day($1)", session_id
    )
    return tenant


async def store_answers(conn: asyncpg.Connection | asyncpg.Pool) -> bool:
    """Whether PostgreSQL answers a statement at all (the API's health check)."""
    return bool(await conn.fetchval("SELECT true"))


# --- used by workers and aggregators ---


# The workers' check before a task runs: columns their role may read only (shared/db_roles.py).
RESULT_NEEDED_SQL = """
SELECT s.status, r.component IS NOT NULL AS recorded
FROM sessions s
LEFT JOIN component_results r
    ON r.session_id = s.id AND r.day = session_day($1) AND r.component = $2
WHERE s.id = $1 AND s.day = session_day($1)
"""


async def result_still_needed(db: asyncpg.Pool, session_id: str, component: str) -> bool:
    """False when the session is gone or final, or `component`'s result is recorded."""
    row = await db.fetchrow(
        RESULT_NEEDED_SQL,
        uuid.UUID(session_id),
        component,
    )
    return row is not None and row["status"] == "processing" and not row["recorded"]


async def store_explanation(db: asyncpg.Pool, session_id: str, text: object) -> None:
    """Replace a verdict's explanation (the template, by the LLM's rewrite)."""
    await db.execute(
        "UPDATE verdicts SET explanation = $2 WHERE session_id = $1::uuid"
        " AND day = session_day($1::uuid)",
        session_id,
        text,
    )


async def input_type_of(db: asyncpg.Pool, session_id: str) -> str | None:
    """The input type a session was submitted with; None when there is no such session."""
    found: str | None = await db.fetchval(
        "SELECT input_type FROM sessions WHERE id = $1 AND day = session_day($1)",
        uuid.UUID(session_id),
    )
    return found
