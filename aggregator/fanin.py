"""The fan-in transaction: record component results and finalize sessions when complete.

Results are applied in batches (whatever the aggregator has prefetched): one transaction and
a handful of statements per batch, not per result, and the four results of a session that
arrive together are settled at once instead of queueing on the session's row lock.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
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
    """A session after results were applied, for live state and events."""

    session_id: str
    tenant: str
    progress: dict[str, Any]
    verdict: Verdict | None  # set only by the call that finalized the session
    duplicate: bool  # every result applied for it this time was already recorded
    results: dict[str, dict[str, Any]]
    explanation: dict[str, str] | None = None  # with the verdict


@dataclass(frozen=True)
class Applied:
    """What one batch did: the sessions it touched and the results naming unknown sessions."""

    sessions: list[Recorded] = field(default_factory=list)
    unknown: list[Result] = field(default_factory=list)


async def record_results(
    pool: asyncpg.Pool, results: Sequence[Result], weights: Mapping[str, float], explain: Explain
) -> Applied:
    """Apply results exactly once; redeliveries and duplicates change nothing."""
    ids = sorted({uuid.UUID(r.session_id) for r in results})
    async with pool.acquire() as conn, conn.transaction():
        # Row locks serialise each session's results; taking them in id order keeps two
        # aggregators from deadlocking on the same pair of sessions.
        sessions = await conn.fetch(
            "SELECT id, tenant, status, components FROM sessions"
            " WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE",
            ids,
        )
        known = {s["id"] for s in sessions}
        mine = [r for r in results if uuid.UUID(r.session_id) in known]
        rows = await _insert_and_read(conn, mine, sorted(known))
        fresh = {row["session_id"] for row in rows if row["fresh"]}
        settled = _settle(sessions, rows, weights, explain, fresh)
        await _finalize(conn, settled)
    unknown = [r for r in results if uuid.UUID(r.session_id) not in known]
    return Applied(settled, unknown)


async def record_result(
    pool: asyncpg.Pool, result: Result, weights: Mapping[str, float], explain: Explain
) -> Recorded:
    """Apply one result; UnknownSession when its session does not exist."""
    applied = await record_results(pool, [result], weights, explain)
    if applied.unknown:
        raise UnknownSession(result.session_id)
    return applied.sessions[0]


async def _insert_and_read(
    conn: asyncpg.Connection, results: Sequence[Result], sessions: list[uuid.UUID]
) -> list[asyncpg.Record]:
    """Insert the results not recorded yet and read every result of the sessions, in one
    statement. It runs after the sessions are locked, so its snapshot already holds what
    other aggregators committed; the inserted rows come from RETURNING (marked fresh)."""
    return await conn.fetch(
        """
        WITH inserted AS (
            INSERT INTO component_results (session_id, component, status, score, data, error,
                                           attempt, worker_id, processing_ms)
            SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::real[], $5::jsonb[],
                                 $6::text[], $7::int[], $8::text[], $9::int[])
            ON CONFLICT (session_id, component) DO NOTHING
            RETURNING session_id, component, status, score, data, error
        )
        SELECT *, true AS fresh FROM inserted
        UNION ALL
        SELECT session_id, component, status, score, data, error, false FROM component_results
        WHERE session_id = ANY($10::uuid[])
        """,
        [uuid.UUID(r.session_id) for r in results],
        [r.component for r in results],
        ["ok" if r.success else "failed" for r in results],
        [r.score if r.success else None for r in results],
        [r.data for r in results],
        [r.error for r in results],
        [r.attempt for r in results],
        [r.worker_id for r in results],
        [r.processing_time for r in results],
        sessions,
    )


async def finalize_overdue(
    pool: asyncpg.Pool, weights: Mapping[str, float], explain: Explain, limit: int = 100
) -> list[Recorded]:
    """Finalize sessions past their deadline: missing components become `timeout`."""
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
        if not overdue:
            return []
        await conn.execute(
            """
            INSERT INTO component_results (session_id, component, status, error)
            SELECT s.id, c, 'timeout', 'no result before the session deadline'
            FROM sessions s, unnest(s.components) AS c
            WHERE s.id = ANY($1::uuid[])
            ON CONFLICT (session_id, component) DO NOTHING
            """,
            [s["id"] for s in overdue],
        )
        ids = [s["id"] for s in overdue]
        rows = await _insert_and_read(conn, [], ids)
        settled = _settle(overdue, rows, weights, explain, set(ids))
        await _finalize(conn, settled)
        return settled


def _settle(
    sessions: Sequence[asyncpg.Record],
    rows: Sequence[asyncpg.Record],
    weights: Mapping[str, float],
    explain: Explain,
    changed: set[uuid.UUID],
) -> list[Recorded]:
    """Each locked session's state; a verdict for those that now have every component."""
    by_session: dict[uuid.UUID, dict[str, dict[str, Any]]] = defaultdict(dict)
    for row in rows:
        by_session[row["session_id"]][row["component"]] = dict(row)
    recorded = []
    for session in sessions:
        results = by_session[session["id"]]
        components = tuple(session["components"])
        verdict = None
        if session["status"] == "processing" and all(c in results for c in components):
            outcomes = {
                c: ComponentOutcome(results[c]["status"], results[c]["score"]) for c in components
            }
            verdict = compute(outcomes, weights)
        state = verdict.session_status if verdict else session["status"]
        recorded.append(
            Recorded(
                session_id=str(session["id"]),
                tenant=session["tenant"],
                progress=progress_of(state, components, results),
                verdict=verdict,
                duplicate=session["id"] not in changed,
                results=results,
                explanation=explain(verdict, results) if verdict else None,
            )
        )
    return recorded


async def _finalize(conn: asyncpg.Connection, settled: Sequence[Recorded]) -> None:
    """Write the verdicts and move their sessions to the final state, guarded by status."""
    finals = [(r, r.verdict) for r in settled if r.verdict is not None]
    if not finals:
        return
    await conn.execute(
        """
        WITH verdict AS (
            INSERT INTO verdicts (session_id, score, label, confidence, explanation)
            SELECT * FROM unnest($1::uuid[], $2::real[], $3::text[], $4::real[], $5::jsonb[])
            ON CONFLICT (session_id) DO NOTHING
        )
        UPDATE sessions SET status = f.status, finished_at = now()
        FROM unnest($1::uuid[], $6::text[]) AS f(id, status)
        WHERE sessions.id = f.id AND sessions.status = 'processing'
        """,
        [uuid.UUID(r.session_id) for r, _ in finals],
        [v.score for _, v in finals],
        [v.label for _, v in finals],
        [v.confidence for _, v in finals],
        [r.explanation for r, _ in finals],
        [v.session_status for _, v in finals],
    )
