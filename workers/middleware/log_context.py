"""Every log line of a task names its session, component and attempt."""

from __future__ import annotations

import structlog

from workers.middleware.chain import Job, Next


async def bind_log_context(job: Job, call_next: Next) -> None:
    """Binds the task's identity for the rest of the chain (structlog context variables)."""
    task = job.task
    with structlog.contextvars.bound_contextvars(
        session_id=task.session_id, component=task.component, attempt=job.attempt
    ):
        await call_next(job)
