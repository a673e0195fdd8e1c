"""Server-sent events as standard clients (a browser's EventSource) expect them.

Framing is pure; `follow` turns a session's successive snapshots into events, given how to
read one and how to wait for news, so its rules are tested without a server:

- every event has an `id:`; a client that reconnects sends the last one as `Last-Event-ID`
  and is not sent again what it has seen. A progress event's id is how many of the session's
  components have answered (it only grows); the result's is `RESULT_ID`; the review's (a
  verdict queued for human review, once decided) `REVIEW_ID`.
- the stream opens with `retry:`, so a client waits that long before it reconnects;
- a comment goes out whenever nothing else has for `keepalive_s`, so proxies and clients do
  not take a quiet stream for a dead one;
- a client that has had the last event (the result, or the review when one was queued) is
  answered 204 when it reconnects (the route), which tells an EventSource to stop;
- when the API stops, an open stream ends as it is (no final event): its client reconnects
  after `retry:` with the last id it saw, to another replica or this one restarted.

Events are forwarded by name: a new kind of event needs a name and an id, not a new framing.
Not sse-starlette: what it would add (framing, a ping task, disconnect watching) is these few
lines and Starlette's StreamingResponse, while the rules above are this API's own either way.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

# How long a client waits before it reconnects: long enough not to hammer the API when it is
# unwell, short enough that a dropped stream is barely noticed.
RETRY_MS = 3000
# A comment at least this often while idle: below the 30-60 s idle timeouts of common proxies.
KEEPALIVE_S = 15.0
# The ids of the result event, and of the review event that follows it for a verdict queued
# for human review: after either there is no progress to send.
RESULT_ID = "result"
REVIEW_ID = "review"
FINAL_IDS = (RESULT_ID, REVIEW_ID)
# What a keep-alive says (a comment: clients ignore it).
KEEPALIVE = b": keep-alive\n\n"
# The headers of every event stream: no cache may keep it (the token of a browser's link is
# in its URL), and nginx must pass each event on as it comes rather than buffer the stream.
HEADERS = {"Cache-Control": "no-cache, no-store", "X-Accel-Buffering": "no"}


def frame(event: str, data: Any, event_id: str | None = None) -> bytes:
    """One event: its name, its id when it has one, and its data as one line of JSON."""
    head = f"event: {event}\n" + (f"id: {event_id}\n" if event_id is not None else "")
    return f"{head}data: {json.dumps(data, default=str)}\n\n".encode()


def retry_field(retry_ms: int = RETRY_MS) -> bytes:
    """The reconnection delay: a block with no data sets it without dispatching an event."""
    return f"retry: {retry_ms}\n\n".encode()


def progress_id(progress: dict[str, Any]) -> str:
    """A progress event's id: how many components have answered, ok or not."""
    return str(len(progress["completed_components"]) + len(progress["failed_components"]))


def seen(event_id: str, last_event_id: str | None) -> bool:
    """True when a client whose last event was `last_event_id` has had this progress event
    (or a later one): a progress id it sent back at least as high, or a final event's id."""
    if last_event_id is None:
        return False
    if last_event_id in FINAL_IDS:
        return True
    # isdigit() takes '²' and other digits int() refuses: only ASCII decimals are an id we sent.
    if not (last_event_id.isascii() and last_event_id.isdecimal()):
        return False
    return int(event_id) <= int(last_event_id)


def finished(last_event_id: str | None, review_queued: bool) -> bool:
    """True when the client has had a session's last event: the review's, or the result's
    when its verdict was not queued for review. Nothing more will come."""
    return last_event_id == REVIEW_ID or (last_event_id == RESULT_ID and not review_queued)


@dataclass(frozen=True)
class Snapshot:
    """A session as read now: its progress; once final, its result document and, when its
    verdict was queued for human review, the review (decided once `reviewed_at` is set)."""

    progress: dict[str, Any]
    result: dict[str, Any] | None = None
    review: dict[str, Any] | None = None

    @property
    def reviewed(self) -> bool:
        return self.review is not None and self.review.get("reviewed_at") is not None


async def follow(
    read: Callable[[], Awaitable[Snapshot]],
    wait: Callable[[bool], Awaitable[None]],
    last_event_id: str | None = None,
    keepalive_s: float = KEEPALIVE_S,
    clock: Callable[[], float] = time.monotonic,
    stopping: Callable[[], bool] = lambda: False,
) -> AsyncIterator[bytes]:
    """The stream of one session: `retry:`, progress events the client has not seen, the
    result, and for a verdict queued for review the `review` event once it is decided.
    `wait(for_review)` returns on news, after a poll interval (a longer one while the stream
    waits for a person's review), or as the server begins to stop; once `stopping()` the
    stream ends there, and its client resumes elsewhere from its last id."""
    yield retry_field()
    quiet_since = clock()
    while True:
        snapshot = await read()
        event_id = progress_id(snapshot.progress)
        if not seen(event_id, last_event_id):
            yield frame("progress", snapshot.progress, event_id)
            last_event_id, quiet_since = event_id, clock()
        if snapshot.result is not None and last_event_id not in FINAL_IDS:
            yield frame("result", snapshot.result, RESULT_ID)
            last_event_id, quiet_since = RESULT_ID, clock()
        if snapshot.result is not None and snapshot.review is None:
            return
        if snapshot.reviewed:
            yield frame("review", snapshot.review, REVIEW_ID)
            return
        await wait(snapshot.result is not None)
        if stopping():
            return
        if clock() - quiet_since >= keepalive_s:
            yield KEEPALIVE
            quiet_since = clock()
