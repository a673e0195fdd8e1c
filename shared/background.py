"""Background tasks: one that lives for the length of a block, and loops that end when they
are cancelled, whatever a library makes of it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Coroutine
from typing import Any

import structlog

log = structlog.get_logger(__name__)


@contextlib.asynccontextmanager
async def in_background(
    work: Coroutine[Any, Any, object], what: str
) -> AsyncIterator[asyncio.Task[Any]]:
    """Run `work` while the block runs; on exit cancel it and wait until it has stopped.

    A failure of its own (not the cancel) is logged when it happens, and raised at the end
    of a block that ended normally: a loop that died must not go unnoticed.
    """
    task = asyncio.create_task(work, name=what)
    task.add_done_callback(_log_failure)
    try:
        yield task
    finally:
        task.cancel()
        await asyncio.wait({task})  # its end, not its result: a cancel here is ours to raise
    if not task.cancelled() and task.exception() is not None:
        raise task.exception()  # type: ignore[misc]


def _log_failure(task: asyncio.Task[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("background task failed", task=task.get_name(), error=repr(task.exception()))


def raise_if_cancelled(error: BaseException) -> None:
    """Re-raise a cancellation that arrived as another error.

    A loop that catches `Exception` to outlive an outage must not outlive its own stop: a
    library caught mid-read may turn the cancellation into its own error (redis-py's pubsub
    answered a worker's stop with a ConnectionError, the loop went round again, and the
    process hung at exit waiting for it). The request stays counted on the task, so it is
    still known here.
    """
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError() from error


def stop_if_cancelled() -> None:
    """Raise CancelledError when this task has been asked to stop, even if the request was
    swallowed on its way: a library that catches the cancellation inside a read and retries
    (redis-py's pubsub, reconnecting after the cancel became a ConnectionError) would otherwise
    keep the task alive, and its process until the supervisor's SIGKILL. Loops over such a
    library call this after every await."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError()
