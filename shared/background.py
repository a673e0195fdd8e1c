"""Background tasks: one that lives for the length of a block, and loops that end when they
are cancelled, whatever a library makes of it."""

from __future__ import annotations

import asyncio
import contextlib
import faulthandler
import io
from collections.abc import AsyncIterator, Coroutine
from typing import Any

import structlog

log = structlog.get_logger(__name__)

# How long a cancelled background task may take to end before its block goes on without it.
# A task that swallows its cancel (a library that turned it into its own error, a loop that
# caught that) would otherwise hold its process's stop until the supervisor's SIGKILL.
STOP_WAIT_S = 5.0


@contextlib.asynccontextmanager
async def in_background(
    work: Coroutine[Any, Any, object], what: str, stop_wait_s: float = STOP_WAIT_S
) -> AsyncIterator[asyncio.Task[Any]]:
    """Run `work` while the block runs; on exit cancel it and wait until it has stopped, at
    most `stop_wait_s`: one still running then is logged with its stack and left behind
    (cancelled again), so the block's exit is not held by it. The event loop's own clean-up
    may still wait for it; what it holds (a pool connection) is bounded where it is closed
    (`shared.resources.close_pool`).

    A failure of its own (not the cancel) is logged when it happens, and raised at the end
    of a block that ended normally: a loop that died must not go unnoticed.
    """
    task = asyncio.create_task(work, name=what)
    task.add_done_callback(_log_failure)
    try:
        yield task
    finally:
        task.cancel()
        # Its end, not its result: a cancel here is ours to raise.
        await asyncio.wait({task}, timeout=stop_wait_s)
        if not task.done():
            stack = io.StringIO()
            task.print_stack(file=stack)
            log.error("background task did not stop", task=what, stack=stack.getvalue())
            task.cancel()
    if task.done() and not task.cancelled() and task.exception() is not None:
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


async def report_if_stuck(stop: asyncio.Event, after_s: float) -> None:
    """Once `stop` is set, wait `after_s`; still running then, log what every task and thread
    is doing, so a stop that ends in SIGKILL says where it hung."""
    await stop.wait()
    await asyncio.sleep(after_s)
    for task in asyncio.all_tasks() - {asyncio.current_task()}:
        stack = io.StringIO()
        task.print_stack(file=stack)
        log.error("still stopping", task=repr(task), stack=stack.getvalue())
    faulthandler.dump_traceback(all_threads=True)
