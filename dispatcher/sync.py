"""Synchronous fallback: when the broker is unreachable, analyse in-process (SPEC §6.2)."""

from __future__ import annotations

import asyncio
import time

import asyncpg
import httpx
import structlog
from redis.asyncio import Redis

from aggregator.explain import explain
from aggregator.fanin import record_result
from shared.constants import MEDIA_PREPROCESS
from shared.messages import Result, Task, now_ms
from shared.settings import Settings
from workers.executor import ExecutorContext, executor_for
from workers.handling import failed_components
from workers.retry import describe

log = structlog.get_logger(__name__)


async def analyse_inline(
    tasks: list[Task], settings: Settings, pool: asyncpg.Pool, redis: Redis, http: httpx.AsyncClient
) -> None:
    """Run a session's first tasks (and for media the tasks they dispatch); record each result."""
    follow_ups: list[Task] = []

    async def collect(task: Task) -> None:
        follow_ups.append(task)

    context = ExecutorContext(settings, redis, pool, http, collect, "api-sync")
    for media in (t for t in tasks if t.component == MEDIA_PREPROCESS):
        failure = await _run(media, context, settings.sync_timeout_s)
        if failure is not None:
            await _record_failures(media, failure, settings, pool)
            return
    analyses = [t for t in tasks if t.component != MEDIA_PREPROCESS] + follow_ups
    outcomes = await asyncio.gather(*(_run_to_result(t, context, settings) for t in analyses))
    for result in outcomes:
        await record_result(pool, result, settings.verdict_weights, explain)


async def _run(task: Task, context: ExecutorContext, timeout_s: float) -> str | None:
    """Run one executor; the failure reason, or None on success."""
    try:
        await asyncio.wait_for(executor_for(task.component)(task, context), timeout_s)
    except Exception as exc:
        return describe(exc)
    return None


async def _run_to_result(task: Task, context: ExecutorContext, settings: Settings) -> Result:
    started = time.perf_counter()
    base = {
        "session_id": task.session_id,
        "component": task.component,
        "timestamp": now_ms(),
        "worker_id": "api-sync",
    }
    try:
        analysis = await asyncio.wait_for(
            executor_for(task.component)(task, context), settings.sync_timeout_s
        )
    except Exception as exc:
        log.warning("sync analysis failed", component=task.component, error=describe(exc))
        return Result(**base, success=False, score=0, error=describe(exc))
    elapsed = int((time.perf_counter() - started) * 1000)
    return Result(
        **base, success=True, score=analysis.score, data=analysis.data, processing_time=elapsed
    )


async def _record_failures(task: Task, reason: str, settings: Settings, pool: asyncpg.Pool) -> None:
    for component in failed_components(task):
        failure = Result(
            session_id=task.session_id,
            component=component,
            success=False,
            score=0,
            error=reason,
            timestamp=now_ms(),
            worker_id="api-sync",
        )
        await record_result(pool, failure, settings.verdict_weights, explain)
