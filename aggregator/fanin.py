"""The fan-in transaction: record a component result and finalize the session when complete."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import asyncpg

from aggregator.verdict import ComponentOutcome, Verdict, compute
from shared.messages import Result
from shared.sessions import progress_of

Explain = Callable[[Verdict, dict[str, dict[str, Any]]], dict[str, str]]


class UnknownSession(LookupError):
    """Raised when a result names a session that does not exist (deleted or never created)."""


@dataclass(frozen=True)
class Recorded:
    """The session after a result was applied, for live state and events."""

    session_id: str
    tenant: str
    progress: dict[str, Any]
    verdict: Verdict | None  # set only by the call that finalized the session
    duplicate: bool
    results: dict[str, dict[str, Any]]


async def record_result(
    pool: asyncpg.Pool, result: Result, weights: Mapping[str, float], explain: Explain
) -> Recorded:
    """Apply one result exactly once; a redelivery or duplicate changes nothing."""
    sid = uuid.UUID(result.session_id)
    async with pool.acquire() as conn, conn.transaction():
        # Locking the session row first serialises every result of one session.
        session = await conn.fetchrow(
            "SELECT tenant, status, components FROM sessions WHERE id = $1 FOR UPDATE", sid
        )
        if session is None:
            raise UnknownSession(result.session_id)
        status = await conn.execute(
            """
            INSERT INTO component_results (session_id, component, status, score, data, error,
                                           attempt, worker_id, processing_ms)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
            ON CONFLICT (session_id, component) DO NOTHING
            """,
            sid,
            result.component,
            "ok" if result.success else "failed",
            result.score if result.success else None,
            result.data,
            result.error,
            result.attempt,
            result.worker_id,
            result.processing_time,
        )
        duplicate = status.endswith(" 0")
        return await _settle(conn, sid, session, weights, explain, duplicate)


async def finalize_overdue(
    pool: asyncpg.Pool, weights: Mapping[str, float], explain: Explain, limit: int = 100
) -> list[Recorded]:
    """Finalize sessions past their deadline: missing components become `timeout`."""
    finished = []
    async with pool.acquire() as conn, conn.transaction():
        # SKIP LOCKED lets several janitors (one per aggregator) share the work.
        overdue = await conn.fetch(
            """
            SELECT id, tenant, status, components FROM sessions
            WHERE status = 'processing' AND deadline_at < now()
            ORDER BY deadline_at LIMIT $1 FOR UPDATE SKIP LOCKED
            """,
            limit,
        )
        for session in overdue:
            await conn.execute(
                """
                INSERT INTO component_results (session_id, component, status, error)
                SELECT $1, c, 'timeout', 'no result before the session deadline'
                FROM unnest($2::text[]) AS c
                ON CONFLICT (session_id, component) DO NOTHING
                """,
                session["id"],
                session["components"],
            )
            finished.append(await _settle(conn, session["id"], session, weights, explain, False))
    return finished


async def _settle(
    conn: asyncpg.Connection,
    sid: uuid.UUID,
    session: asyncpg.Record,
    weights: Mapping[str, float],
    explain: Explain,
    duplicate: bool,
) -> Recorded:
    rows = await conn.fetch(
        "SELECT component, status, score, data, error FROM component_results WHERE session_id = $1",
        sid,
    )
    results = {r["component"]: dict(r) for r in rows}
    components = tuple(session["components"])
    verdict = None
    state = session["status"]
    if state == "processing" and all(c in results for c in components):
        verdict = compute(
            {c: ComponentOutcome(results[c]["status"], results[c]["score"]) for c in components},
            weights,
        )
        await conn.execute(
            """
            INSERT INTO verdicts (session_id, score, label, confidence, explanation)
            VALUES ($1, $2, $3, $4, $5) ON CONFLICT (session_id) DO NOTHING
            """,
            sid,
            verdict.score,
            verdict.label,
            verdict.confidence,
            explain(verdict, results),
        )
        await conn.execute(
            "UPDATE sessions SET status = $2, finished_at = now()"
            " WHERE id = $1 AND status = 'processing'",
            sid,
            verdict.session_status,
        )
        state = verdict.session_status
    return Recorded(
        session_id=str(sid),
        tenant=session["tenant"],
        progress=progress_of(state, components, results),
        verdict=verdict,
        duplicate=duplicate,
        results=results,
    )
