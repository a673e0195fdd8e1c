"""Following a session: GET queue-status, result, and events (server-sent)."""

from __future__ import annotations

import functools
from collections import Counter
from typing import Annotated, Any

from fastapi import APIRouter, Header, HTTPException, status
from fastapi.responses import JSONResponse, Response

from dispatcher import answers, sse
from dispatcher.auth import Caller
from dispatcher.dependencies import KEY_SCHEMES, Admitted, Follower, State
from dispatcher.progress import event_stream, no_such_session, owned_view, session_progress
from dispatcher.state import AppState
from dispatcher.tenancy import parse_session_id
from dispatcher.views import API, result_body

router = APIRouter(prefix=API, dependencies=KEY_SCHEMES)
# Streams one session's events token may hold open at once: a browser tab or two follows a
# session, and a leaked link cannot take its tenant's every stream (a hostile probe opened 32
# with one token and its tenant's own key was then refused).
TOKEN_STREAMS_PER_SESSION = 4

# The id of the last event a reconnecting EventSource had (dispatcher/sse.py).
LastEventId = Annotated[
    str | None,
    Header(max_length=64, description="The last event id had; sent by an EventSource."),
]


@router.get("/{session_id}/queue-status", responses=answers.QUEUE_STATUS)
async def queue_status(session_id: str, who: Admitted, state: State) -> dict[str, Any]:
    """The session's progress, from the live cache when it has it. The id is answered (and
    the cache read) in the form the API writes it: `{…}`, a URN or capitals name the same
    session, and were echoed back as sent."""
    sid = parse_session_id(session_id)
    if sid is None:
        raise no_such_session()
    return {"session_id": str(sid), **await session_progress(state, str(sid), who)}


@router.get("/{session_id}/result", response_model=None, responses=answers.RESULT)
async def result(session_id: str, who: Admitted, state: State) -> JSONResponse:
    """The result document: 200 once the session is final, 202 while it processes."""
    view = await owned_view(state, session_id, who)
    code = status.HTTP_200_OK if view.final else status.HTTP_202_ACCEPTED
    return JSONResponse(result_body(view), code)


@router.get(
    "/{session_id}/events",
    response_class=answers.EventStream,
    response_model=None,
    responses=answers.EVENTS,
)
async def events(
    session_id: str, who: Follower, state: State, last_event_id: LastEventId = None
) -> Response:
    """Progress as server-sent events until the result (dispatcher/sse.py); 404 before the
    stream starts, 429 while the tenant has API_MAX_STREAMS_PER_TENANT streams open (or the
    session's token TOKEN_STREAMS_PER_SESSION), 204 to a client that has had the last event
    (an EventSource then stops reconnecting)."""
    await session_progress(state, session_id, who)
    if await _had_the_last_event(state, session_id, who, last_event_id):
        return Response(status_code=status.HTTP_204_NO_CONTENT)
    if state.streams[who.tenant] >= state.settings.api_max_streams_per_tenant:
        raise HTTPException(
            status.HTTP_429_TOO_MANY_REQUESTS,
            "too many event streams open for this tenant; close one or poll queue-status",
            headers={"Retry-After": "5"},
        )
    by_token = who.until is not None
    if by_token and state.token_streams[session_id] >= TOKEN_STREAMS_PER_SESSION:
        raise HTTPException(
            status.HTTP_429_TOO_MANY_REQUESTS,
            "too many event streams open with this session's token; close one",
            headers={"Retry-After": "5"},
        )
    # Counted here, with no wait between the checks and the counts: streams asked for at once
    # cannot all pass the check before the first of them counts (35 opened against a cap of
    # 32 when the stream counted itself as it started).
    state.streams[who.tenant] += 1
    if by_token:
        state.token_streams[session_id] += 1
    return answers.EventStream(
        event_stream(state, session_id, who, last_event_id),
        headers=sse.HEADERS,
        on_close=functools.partial(_stream_closed, state, who.tenant, session_id, by_token),
    )


def _stream_closed(state: AppState, tenant: str, session_id: str, by_token: bool) -> None:
    _uncount(state.streams, tenant)
    if by_token:
        _uncount(state.token_streams, session_id)


def _uncount(counts: Counter[str], name: str) -> None:
    counts[name] -= 1
    if not counts[name]:
        del counts[name]


async def _had_the_last_event(
    state: AppState, session_id: str, who: Caller, last_event_id: str | None
) -> bool:
    """Whether the client's Last-Event-ID is its session's last event; the record is read
    only for a client past the result (is a review still to come?)."""
    if last_event_id not in sse.FINAL_IDS:
        return False
    view = await owned_view(state, session_id, who)
    return sse.finished(last_event_id, review_queued=view.review is not None)
