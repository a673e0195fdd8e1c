"""The fan-in: record component results exactly once and finalize sessions when complete.

Results are applied in batches (whatever the aggregator has prefetched), each in at most two
statements, on RabbitMQ each its own transaction (one round trip and one commit, no BEGIN and
COMMIT round trips around them): `record_results()` (migrations 003, 008, 009) locks the sessions,
inserts the new results, reads every result back and commits; then, only for sessions that
became complete, one statement guarded by `status = 'processing'` moves them to their final
state and writes their verdicts. The row lock orders the batches of one session, so whichever
records last reads every result, and the guard lets exactly one finalize even when a
redelivered duplicate sees the session complete too. On RabbitMQ, a crash between the two
statements leaves the results recorded and unacked: redelivered, they find the session
complete and finalize it then (the janitor finalizes it at its deadline otherwise). On the
PostgreSQL transport the results arrive as rows of `job_queue`, and the two statements and
the completion of those rows are one transaction (`within`, two round trips more per batch):
a result row is completed exactly when its result is recorded, and a session finalized
with it.
A session's verdict weights and review rules are its tenant's when it has its own (kept with
the session, returned by the first statement), else the deployment's.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import asyncpg

from aggregator.verdict import Verdict, compute, outcome_of
from shared.messages import Result
from shared.review_policy import NO_REVIEW, ReviewPolicy, review_reasons
from shared.sessions import progress_of
from shared.tenant_settings import review_for, weights_for

Explain = Callable[[Verdict, dict[str, dict[str, Any]]], dict[str, str]]
# Work joined to the fan-in's transaction, given the ids of the sessions that exist.
Within = Callable[[asyncpg.Connection, set[str]], Awaitable[None]]


class UnknownSession(LookupError):
    """Raised when a result names a session that does not exist (deleted or never created)."""


@dataclass(frozen=True)
class Recorded:
    """A session after results were applied, for live state and events."""

    session_id: str
    tenant: str
    progress: dict[str, Any]
    verdict: Verdict | None  # set only for the call that finalized the session
    duplicate: bool  # every result applied for it this time was already recorded
    results: dict[str, dict[str, Any]]
    explanation: dict[str, str] | None = None  # with the verdict
    review: tuple[str, ...] = ()  # why the verdict is queued for review (none: it is not)
    took_s: float | None = None  # from the POST to the verdict, for the call that wrote it


def live_states(sessions: Sequence[Recorded]) -> list[tuple[str, dict[str, Any]]]:
    """The live state of each session these results changed, for Redis and /events.

    A batch made only of duplicates changed nothing, unless it is the one that finalized the
    session (a retry after a crash between recording and finalizing): that one is announced.
    """
    return [
        (r.session_id, {**r.progress, "tenant": r.tenant})
        for r in sessions
        if not r.duplicate or r.verdict is not None
    ]


@dataclass(frozen=True)
class Applied:
    """What one batch did: the sessions it touched and the results naming unknown sessions."""

    sessions: list[Recorded] = field(default_factory=list)
    unknown: list[Result] = field(default_factory=list)


async def record_results(
    pool: asyncpg.Pool,
    results: Sequence[Result],
    weights: Mapping[str, float],
    explain: Explain,
    review: ReviewPolicy = NO_REVIEW,
    within: Within | None = None,
) -> Applied:
    """Apply results exactly once; redeliveries and duplicates change nothing.

    `within`, when given, runs in the same transaction after the results are recorded and
    their sessions finalized, with the ids of the sessions that exist (the table transport
    completes the rows that carried their results there)."""
    ids = sorted({uuid.UUID(r.session_id) for r in results})
    async with pool.acquire() as conn:
        if within is None:
            # No transaction around the two: most batches complete no session and take one
            # round trip, not four (BEGIN, record, COMMIT); the module's docstring says why
            # it is safe.
            settled = await _record_and_finalize(conn, ids, results, weights, explain, review)
        else:
            async with conn.transaction():
                settled = await _record_and_finalize(conn, ids, results, weights, explain, review)
                await within(conn, {r.session_id for r in settled})
    known = {r.session_id for r in settled}
    return Applied(settled, [r for r in results if r.session_id not in known])


async def _record_and_finalize(
    conn: asyncpg.Connection,
    ids: list[uuid.UUID],
    results: Sequence[Result],
    weights: Mapping[str, float],
    explain: Explain,
    review: ReviewPolicy,
) -> list[Recorded]:
    rows = await _record(conn, ids, results)
    return await _finalize(conn, _settle(rows, weights, explain, review))


async def record_result(
    pool: asyncpg.Pool,
    result: Result,
    weights: Mapping[str, float],
    explain: Explain,
    review: ReviewPolicy = NO_REVIEW,
) -> Recorded:
    """Apply one result; UnknownSession when its session does not exist."""
    applied = await record_results(pool, [result], weights, explain, review)
    if applied.unknown:
        raise UnknownSession(result.session_id)
    return applied.sessions[0]


# The janitor's pick: every day partition's partial index of open sessions, merged by deadline.
OVERDUE_SQL = (
    "SELECT id FROM sessions WHERE status = 'processing' AND deadline_at < now()"
    " ORDER BY deadline_at LIMIT $1 FOR UPDATE SKIP LOCKED"
)


async def finalize_overdue(
    pool: asyncpg.Pool,
    weights: Mapping[str, float],
    explain: Explain,
    limit: int = 100,
    review: ReviewPolicy = NO_REVIEW,
) -> list[Recorded]:
    """Finalize sessions past their deadline: missing components become `timeout`."""
    async with pool.acquire() as conn, conn.transaction():
        # SKIP LOCKED lets several janitors (one per aggregator) share the work.
        ids = [
            row["id"]
            for row in await conn.fetch(
                OVERDUE_SQL,
                limit,
            )
        ]
        if not ids:
            return []
        await conn.execute(
            """
            INSERT INTO component_results (session_id, day, component, status, error)
            SELECT s.id, s.day, c, 'timeout', 'no result before the session deadline'
            FROM sessions s, unnest(s.components) AS c
            WHERE s.id = ANY($1::uuid[]) AND s.day = ANY(session_days($1::uuid[]))
            ON CONFLICT (session_id, day, component) DO NOTHING
            """,
            ids,
        )
        rows = await _record(conn, sorted(ids), [])
        return await _finalize(conn, _settle(rows, weights, explain, review, changed=True))


async def _record(
    conn: asyncpg.Connection, ids: list[uuid.UUID], results: Sequence[Result]
) -> list[asyncpg.Record]:
    return await conn.fetch(
        "SELECT * FROM record_results($1::uuid[], $2::uuid[], $3::text[], $4::text[],"
        " $5::real[], $6::jsonb[], $7::text[], $8::int[], $9::text[], $10::int[], $11::bigint[])",
        ids,
        [uuid.UUID(r.session_id) for r in results],
        [r.component for r in results],
        ["ok" if r.success else "failed" for r in results],
        [r.score if r.success else None for r in results],
        [r.data for r in results],
        [r.error for r in results],
        [r.attempt for r in results],
        [r.worker_id for r in results],
        [r.processing_time for r in results],
        [r.settings_version for r in results],
    )


def _settle(
    rows: Sequence[asyncpg.Record],
    weights: Mapping[str, float],
    explain: Explain,
    review: ReviewPolicy,
    changed: bool | None = None,
) -> list[Recorded]:
    """Each session's state; a verdict for those still processing that have every component."""
    recorded = []
    for row in rows:
        results: dict[str, dict[str, Any]] = row["results"]
        components = tuple(row["components"])
        verdict = None
        # The tenant's verdict weights and review rules as they were when it was accepted.
        policy = row["policy"]
        if row["status"] == "processing" and all(c in results for c in components):
            outcomes = {c: outcome_of(results[c]) for c in components}
            verdict = compute(outcomes, weights_for(policy, weights))
        state = verdict.session_status if verdict else row["status"]
        recorded.append(
            Recorded(
                session_id=str(row["session_id"]),
                tenant=row["tenant"],
                progress=progress_of(state, components, results),
                verdict=verdict,
                duplicate=not (row["fresh"] if changed is None else changed),
                results=results,
                explanation=explain(verdict, results) if verdict else None,
                review=_reasons(review_for(policy, review), row["plan"], verdict),
            )
        )
    return recorded


def _reasons(review: ReviewPolicy, plan: int, verdict: Verdict | None) -> tuple[str, ...]:
    if verdict is None:
        return ()
    return tuple(review_reasons(review, plan, verdict.label, verdict.confidence))


async def _finalize(conn: asyncpg.Connection, settled: list[Recorded]) -> list[Recorded]:
    """Move complete sessions to their final state, write their verdicts and queue those with
    review reasons, in one guarded statement (so a verdict is queued exactly when it is
    written); a session another aggregator finalized first keeps no verdict here."""
    finals = [(r, r.verdict) for r in settled if r.verdict is not None]
    if not finals:
        return settled
    moved = await conn.fetch(
        """
        WITH moved AS (
            UPDATE sessions SET status = f.status, finished_at = clock_timestamp()
            FROM unnest($1::uuid[], $6::text[]) AS f(id, status)
            WHERE sessions.id = f.id AND sessions.day = ANY(session_days($1::uuid[]))
                AND sessions.status = 'processing'
            RETURNING sessions.id, sessions.day, sessions.tenant, sessions.plan,
                extract(epoch FROM sessions.finished_at - sessions.created_at) AS took_s
        ), written AS (
            INSERT INTO verdicts (session_id, day, score, label, confidence, explanation)
            SELECT v.session_id, moved.day, v.score, v.label, v.confidence, v.explanation
            FROM unnest($1::uuid[], $2::real[], $3::text[], $4::real[], $5::jsonb[])
                AS v(session_id, score, label, confidence, explanation)
            JOIN moved ON moved.id = v.session_id
            ON CONFLICT (session_id, day) DO NOTHING
        ), queued AS (
            INSERT INTO review_queue (session_id, day, tenant, plan, label, score, confidence,
                                     reasons)
            SELECT moved.id, moved.day, moved.tenant, moved.plan, q.label, q.score, q.confidence,
                   string_to_array(q.reasons, ',')
            FROM unnest($1::uuid[], $2::real[], $3::text[], $4::real[], $7::text[])
                AS q(session_id, score, label, confidence, reasons)
            JOIN moved ON moved.id = q.session_id
            WHERE q.reasons <> ''
            ON CONFLICT (session_id, day) DO NOTHING
        )
        SELECT id, took_s FROM moved
        """,
        [uuid.UUID(r.session_id) for r, _ in finals],
        [v.score for _, v in finals],
        [v.label for _, v in finals],
        [v.confidence for _, v in finals],
        [r.explanation for r, _ in finals],
        [v.session_status for _, v in finals],
        [",".join(r.review) for r, _ in finals],
    )
    took = {str(row["id"]): float(row["took_s"]) for row in moved}
    return [_as_written(r, took) for r in settled]


def _as_written(recorded: Recorded, took: dict[str, float]) -> Recorded:
    """A settled session as this call left it: its verdict (and time to it) when this call
    wrote it, none when another aggregator finalized it first."""
    if recorded.verdict is None:
        return recorded
    if recorded.session_id in took:
        return replace(recorded, took_s=took[recorded.session_id])
    return replace(recorded, verdict=None, explanation=None, review=())
