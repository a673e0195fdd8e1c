"""Background loops that end when they are cancelled, whatever a library makes of it."""

from __future__ import annotations

import asyncio


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
