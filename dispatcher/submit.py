"""Accepting a session: record it, publish its tasks with confirms, or fall back to sync."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

import structlog

from dispatcher.media import locate
from dispatcher.state import AppState
from dispatcher.sync import analyse_inline
from shared import metrics, sessions
from shared.constants import ANALYSIS_COMPONENTS, MEDIA_INPUT_TYPES, MEDIA_PREPROCESS
from shared.errors import BrokerUnavailable, PublishError, QueueFull
from shared.job_queue import TablePublisher
from shared.messages import Task, TaskInput, now_ms, priority_of
from shared.names import Names
from shared.sessions import NewSession, progress_of
from shared.urgency import UrgentSignals

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class Accepted:
    session_id: str
    mode: str  # "async": tasks confirmed by the broker; "sync": analysed in-process
    replayed: bool = False  # the idempotency key named an earlier session: no new work


class Backpressure(Exception):
    """Raised when the broker refused the session's tasks; the client should retry later."""

    def __init__(self, reason: str, retry_after_s: int) -> None:
        super().__init__(reason)
        self.retry_after_s = retry_after_s


class KeyReused(Exception):
    """Raised when an idempotency key already named a session created by another request."""


# Seconds a refused client should wait: long enough for workers to drain some backlog.
FULL_RETRY_AFTER_S = 5
UNROUTABLE_RETRY_AFTER_S = 30
# About one heartbeat: a worker that (re)starts announces itself at once, and the API sees it
# within API_WORKERS_TTL_S.
NO_WORKER_RETRY_AFTER_S = 30


def first_tasks(session: NewSession, user_id: str | None) -> list[Task]:
    """Media input goes through media_preprocess first; everything else straight to the
    session's components (its tenant's choice, else all four). Each carries the tenant's
    settings, signed with it."""
    components = (
        (MEDIA_PREPROCESS,) if session.input_type in MEDIA_INPUT_TYPES else session.components
    )
    return [
        Task(
            session_id=session.id,
            component=c,
            plan_type=session.plan,
            priority=priority_of(session.plan),
            input=TaskInput.model_validate(session.input),
            user_id=user_id,
            timestamp=now_ms(),
            tenant=session.tuning,
        )
        for c in components
    ]


async def accept(state: AppState, session: NewSession) -> Accepted:
    """Record the session and hand its tasks to the broker; 202 only after every confirm.
    On the postgres transport the session and its tasks are written in one transaction."""
    # An urgent session is announced first, so lower tiers everywhere yield while it is
    # recorded and published; its end comes from the aggregator (or lapses by itself).
    urgent = _is_urgent(state, session)
    if urgent:
        begun = asyncio.ensure_future(_signal_urgent(state, session.id, begin=True))
    if state.settings.transport == "postgres":
        try:
            recorded = await _record_with_tasks(state, session)
        except QueueFull as exc:  # neither the session nor its tasks were written
            log.warning("job queue refused the session", session_id=session.id, error=str(exc))
            raise Backpressure(str(exc), FULL_RETRY_AFTER_S) from exc
        finally:
            if urgent:
                await begun
        if recorded.id == session.id:
            await _announce(state, session)
            metrics.SESSIONS.labels("async").inc()
            return Accepted(session.id, "async")
    else:
        recorded = await sessions.record(state.pool, session)
    if urgent:
        await begun
    if recorded.id != session.id:
        if urgent:  # idempotency key seen before: same session, no new work
            await _signal_urgent(state, session.id, begin=False)
        if recorded.request_hash not in (None, session.request_hash):
            raise KeyReused(recorded.id)
        return Accepted(recorded.id, "async", replayed=True)
    tasks = first_tasks(session, session.user_id)
    # The live state is written while the tasks are confirmed, not before: it is not on the
    # critical path, and a later state from the aggregator is never overwritten by it.
    announced = asyncio.ensure_future(_announce(state, session))
    try:
        await _publish_all(state, tasks, session.tenant)
    except BrokerUnavailable as exc:
        log.warning(
            "broker unavailable, analysing synchronously", session_id=session.id, error=str(exc)
        )
        await sessions.mark_sync(state.pool, session.id)
        await analyse_inline(
            tasks, state.settings, state.pool, state.house, state.http, state.analysis
        )
        metrics.SESSIONS.labels("sync").inc()
        return Accepted(session.id, "sync")
    except PublishError as exc:  # queue full, or no queue bound: nothing may claim the work
        await sessions.delete(state.pool, session.id)
        await announced
        await _forget(state, session.id)
        log.warning("broker refused the session", session_id=session.id, error=str(exc))
        wait = FULL_RETRY_AFTER_S if isinstance(exc, QueueFull) else UNROUTABLE_RETRY_AFTER_S
        raise Backpressure(str(exc), wait) from exc
    finally:
        await announced
    metrics.SESSIONS.labels("async").inc()
    return Accepted(session.id, "async")


async def _record_with_tasks(state: AppState, session: NewSession) -> sessions.Recorded:
    """The postgres transport: the session's row and its task rows commit together, so a
    session is never recorded without its work (PostgreSQL away: neither, and the caller's
    answer is a 503 to try again). A reused idempotency key writes nothing."""
    async with state.pool.acquire() as conn, conn.transaction():
        recorded = await sessions.record(conn, session)
        if recorded.id == session.id:
            rows = TablePublisher(
                conn,
                Names(state.settings.topology_prefix),
                task_signer=state.task_signer,
                max_length=state.settings.queue_max_length,
            )
            await rows.tasks(first_tasks(session, session.user_id), tenant=session.tenant)
    return recorded


async def media_task_path(state: AppState, tenant: str, media_path: str) -> str:
    """The path a task carries for a client's media file; MediaRefused when none can be read."""
    return await asyncio.to_thread(locate, state.settings.media_root, tenant, media_path)


async def unservable(
    state: AppState, input_type: str, components: Sequence[str] = ANALYSIS_COMPONENTS
) -> str | None:
    """Why no online worker can serve a session of `input_type` now, or None.

    Only sessions bound for the broker are checked: with the broker away the API analyses
    the session itself (dispatcher/sync.py), whatever the registry says.
    """
    if not state.checks_workers:
        return None
    return await state.workers.refusal(input_type, components)


async def _publish_all(state: AppState, tasks: list[Task], tenant: str) -> None:
    publisher = state.publisher
    if publisher is None:
        raise BrokerUnavailable("no connection to RabbitMQ")
    results = await asyncio.gather(
        *(publisher.task(t, tenant=tenant) for t in tasks), return_exceptions=True
    )
    errors = [r for r in results if isinstance(r, BaseException)]
    if errors:
        # A refusal by a live broker outranks a lost connection: it must not turn into sync work.
        errors.sort(key=lambda e: isinstance(e, BrokerUnavailable))
        raise errors[0]


async def _forget(state: AppState, session_id: str) -> None:
    try:
        await state.live.forget(session_id)
    except Exception as exc:  # it expires by itself; the refused session has no row anyway
        log.warning("live state not removed", session_id=session_id, error=repr(exc))


async def _announce(state: AppState, session: NewSession) -> None:
    try:
        initial = {**progress_of("processing", session.components, {}), "tenant": session.tenant}
        await state.live.publish_states([(session.id, initial)])
    except Exception as exc:  # Redis is a cache of Postgres: a miss falls back to the record
        log.warning("live state not written", session_id=session.id, error=repr(exc))


def _is_urgent(state: AppState, session: NewSession) -> bool:
    threshold = state.settings.urgent_threshold
    return threshold is not None and priority_of(session.plan) >= threshold


async def _signal_urgent(state: AppState, session_id: str, begin: bool) -> None:
    signals = UrgentSignals(state.house.channels, state.settings.key_prefix)
    try:
        await (signals.begin(session_id) if begin else signals.end([session_id]))
    except Exception as exc:  # precedence is an optimisation: the session goes on without it
        log.warning("urgent signal not sent", session_id=session_id, error=repr(exc))
