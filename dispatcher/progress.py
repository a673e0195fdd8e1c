"""A session's progress as its submitter may read it: once, or as server-sent events.

Whose session it is comes from the PostgreSQL record; Redis live state is only a cache of
progress (without Redis the record answers, and NOTIFY wakes the streams).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from collections.abc import AsyncIterator
from typing import Any

import structlog
from fastapi import HTTPException

from dispatcher import sse
from dispatcher.auth import Caller
from dispatcher.state import AppState
from dispatcher.views import result_body
from shared import live, sessions
from shared.background import stop_if_cancelled
from shared.sessions import SessionView

log = structlog.get_logger(__name__)

# How often the event stream re-reads state when no notification arrives (Redis, or the
# NOTIFY listener, may be down).
EVENT_POLL_S = 1.0
# Waiting for a person's review can take hours: the stream is told of the decision, so it
# re-reads only this often in case the announcement was lost (a Redis restart).
REVIEW_POLL_S = 30.0
# How long a stream waits for its cancelled read to end before it closes the subscription.
STOP_READ_WAIT_S = 1.0


def no_such_session() -> HTTPException:
    """404 for an unknown session and another tenant's alike: ids of others are not told."""
    return HTTPException(404, "no such session")


async def owned_view(state: AppState, session_id: str, who: Caller) -> SessionView:
    """The caller's session as recorded; 404 when unknown or another tenant's."""
    view = await sessions.load(state.pool, session_id, who.tenant)
    if view is None:
        raise no_such_session()
    return view


async def session_progress(state: AppState, session_id: str, who: Caller) -> dict[str, Any]:
    """Progress of the caller's session: 404 unless Postgres says it is the caller's."""
    if not await state.tenants.owns(who.tenant, session_id):
        raise no_such_session()
    try:
        cached = await state.live.read_state(session_id)
    except Exception:
        cached = None
    if cached is not None:
        cached.pop("tenant", None)
        return cached
    return (await owned_view(state, session_id, who)).progress()


# Why a token's stream ended (a hostile probe kept one open past its token's expiry, holding
# one of its tenant's streams for as long as a review waited).
TOKEN_EXPIRED = (
    "the events token has expired; take a fresh events_url from POST analyze-async, "
    "or send your API key"
)


async def event_stream(
    state: AppState, session_id: str, who: Caller, last_event_id: str | None = None
) -> AsyncIterator[bytes]:
    """Server-sent events (dispatcher/sse.py) until the session is final: `progress` events
    the client has not seen (by `Last-Event-ID`), then one `result` event; for a verdict
    queued for human review, then one `review` event once it is decided.

    A session that vanishes mid-stream (row deleted, expired) ends the stream with an `end`
    event, as does a failure to read it: a stream always ends as a well-formed response.
    (The route counts the tenant's open streams: answers.EventStream ends the count.)
    """
    pubsub: Any = None
    try:
        pubsub = state.live.subscription()
        try:
            await pubsub.subscribe(live.events_channel(state.settings.key_prefix, session_id))
        except Exception:  # no Redis, or every stream connection in use: follow the record
            await _closed(pubsub)
            pubsub = None
        read = functools.partial(_snapshot, state, session_id, who)
        wait = functools.partial(_wait_unless_stopping, state.stopping, pubsub)

        def expired() -> bool:  # a token's stream ends with the token (a key's never does)
            return who.until is not None and time.time() >= who.until

        def stopping() -> bool:
            return state.stopping.is_set() or expired()

        async for event in sse.follow(read, wait, last_event_id, stopping=stopping):
            yield event
        if expired():
            yield sse.frame("end", {"reason": TOKEN_EXPIRED})
    except HTTPException:
        yield sse.frame("end", {"reason": "the session no longer exists"})
    except Exception as exc:
        log.warning("event stream ended early", session_id=session_id, error=repr(exc))
        yield sse.frame("end", {"reason": "progress cannot be read now; reconnect later"})
    finally:
        if pubsub is not None:
            await _closed(pubsub)


async def _closed(pubsub: Any) -> None:
    with contextlib.suppress(Exception):
        await pubsub.aclose()


async def _snapshot(state: AppState, session_id: str, who: Caller) -> sse.Snapshot:
    """The session now: progress from the live cache; the result and any review from the
    record once final."""
    if not await state.tenants.exists(session_id):  # the record, not the cache
        raise no_such_session()
    progress = await session_progress(state, session_id, who)
    if progress["status"] != "processing":
        view = await sessions.load(state.pool, session_id, who.tenant)
        if view is None:
            raise no_such_session()
        if view.final:
            return sse.Snapshot(view.progress(), result_body(view), view.review)
    return sse.Snapshot(progress)


async def _wait_unless_stopping(stopping: asyncio.Event, pubsub: Any, for_review: bool) -> None:
    """`_wait_for_news`, cut short when the server begins to stop."""
    if stopping.is_set():
        return
    news = asyncio.ensure_future(_wait_for_news(pubsub, for_review))
    stop = asyncio.ensure_future(stopping.wait())
    try:
        await asyncio.wait({news, stop}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiting in (news, stop):
            waiting.cancel()
        # The read ends before the stream closes its subscription (bounded: a read that
        # swallows its cancel must not hold the stream).
        await asyncio.wait({news, stop}, timeout=STOP_READ_WAIT_S)


async def _wait_for_news(pubsub: Any, for_review: bool) -> None:
    """Until news on the session's channel, or a poll interval: a long one while a review is
    awaited, though never past a keep-alive, which the stream owes its client meanwhile."""
    timeout_s = min(REVIEW_POLL_S, sse.KEEPALIVE_S) if for_review else EVENT_POLL_S
    if pubsub is None:
        await asyncio.sleep(timeout_s)
        return
    try:
        await pubsub.get_message(ignore_subscribe_messages=True, timeout=timeout_s)
    except Exception:
        stop_if_cancelled()  # a closed stream's cancel turned into a read error: end here
        await asyncio.sleep(EVENT_POLL_S)
    stop_if_cancelled()
