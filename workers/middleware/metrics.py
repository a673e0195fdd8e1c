"""Executor run time and the outcome of every task, for Prometheus and the log."""

from __future__ import annotations

import time

import structlog

from shared import metrics
from workers.middleware.chain import Job, Next

log = structlog.get_logger(__name__)


async def count_outcome(job: Job, call_next: Next) -> None:
    """`verdict_jobs_total` by outcome once the rest has settled the delivery (a retry counts
    in `verdict_retries_total` instead)."""
    await call_next(job)
    if job.outcome is None:
        return
    metrics.JOBS.labels(job.task.component, job.outcome).inc()
    if job.outcome == "ok" and job.analysis is not None:
        log.info("task done", score=job.analysis.score, ms=job.elapsed_ms)


async def time_execution(job: Job, call_next: Next) -> None:
    """`job.elapsed_ms` and `verdict_job_seconds` of a run that succeeded."""
    started = time.perf_counter()
    await call_next(job)
    job.elapsed_ms = int((time.perf_counter() - started) * 1000)
    metrics.JOB_SECONDS.labels(job.task.component).observe(job.elapsed_ms / 1000)
