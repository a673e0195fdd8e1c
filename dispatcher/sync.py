"""Synchronous fallback: when the broker is unreachable, analyse in-process
(docs/architecture.md §2.7)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable

import asyncpg
import httpx
import structlog

from aggregator.explanation import explain
from aggregator.fanin import live_states, record_result
from shared.constants import MEDIA_PREPROCESS
from shared.errors import AnalysisTimeout
from shared.house import House
from shared.live import Live
from shared.messages import Result, Task, failure_results, success_result
from shared.settings import Settings
from workers.executor import Analysis, ExecutorContext, executor_for
from workers.isolation import AnalysisPool
from workers.reasons import user_reason
from workers.retry import describe

log = structlog.get_logger(__name__)

# The worker id recorded on results analysed inside the API.
SYNC_WORKER = "api-sync"


async def analyse_inline(
    tasks: list[Task],
    settings: Settings,
    pool: asyncpg.Pool,
    house: House,
    http: httpx.AsyncClient,
    analysis: AnalysisPool,
) -> None:
    """Run a session's first tasks (and for media the tasks they dispatch); record each result.

    The executors run their CPU-bound analysis in `analysis`, as in a worker: the sync timeout
    kills it, so hostile input cannot stall the API's event loop.
    """
    follow_ups: list[Task] = []

    async def collect(task: Task) -> None:
        follow_ups.append(task)

    context = ExecutorContext(
        settings, house.media_cache, pool, http, collect, SYNC_WORKER, analysis=analysis
    )
    results: list[Result] = []
    for media in (t for t in tasks if t.component == MEDIA_PREPROCESS):
        outcome = await _attempt(media, context, settings.sync_timeout_s)
        if isinstance(outcome, str):
            results += failure_results(media, outcome, 1, SYNC_WORKER)
    if not results:
        analyses = [t for t in tasks if t.component != MEDIA_PREPROCESS] + follow_ups
        results = await asyncio.gather(
            *(_run(t, context, settings.sync_timeout_s) for t in analyses)
        )
    recorded = [
        await record_result(pool, r, settings.verdict_weights, explain, settings.review_policy)
        for r in results
    ]
    try:  # the POST's "processing" state would otherwise stand in Redis for a day
        await Live(house, settings.key_prefix).publish_states(live_states(recorded))
    except Exception as exc:  # Redis is a cache of Postgres: a miss falls back to the record
        log.warning("live state not updated", error=repr(exc))


async def _attempt(task: Task, context: ExecutorContext, timeout_s: float) -> Analysis | str:
    """The executor's analysis, or the reason it failed in user terms (the log has detail)."""
    try:
        return await _within(executor_for(task.component)(task, context), timeout_s)
    except Exception as exc:
        log.warning("sync analysis failed", component=task.component, error=describe(exc))
        return user_reason(exc)


async def _within(analysis: Awaitable[Analysis], timeout_s: float) -> Analysis:
    try:
        async with asyncio.timeout(timeout_s):
            return await analysis
    except TimeoutError as exc:  # the timeout cancelled the executor, and with it its analysis
        raise AnalysisTimeout(timeout_s) from exc


async def _run(task: Task, context: ExecutorContext, timeout_s: float) -> Result:
    started = time.perf_counter()
    outcome = await _attempt(task, context, timeout_s)
    if isinstance(outcome, str):
        return failure_results(task, outcome, 1, SYNC_WORKER)[0]
    elapsed_ms = int((time.perf_counter() - started) * 1000)
    return success_result(task, outcome.score, outcome.data, 1, SYNC_WORKER, elapsed_ms)
