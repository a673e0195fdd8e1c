"""Following a session: GET queue-status, result, and events (server-sent)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, status
from fastapi.responses import JSONResponse, StreamingResponse

from dispatcher.dependencies import Admitted, State
from dispatcher.progress import event_stream, owned_view, session_progress
from dispatcher.views import API, result_body

router = APIRouter(prefix=API)


@router.get("/{session_id}/queue-status")
async def queue_status(session_id: str, who: Admitted, state: State) -> dict[str, Any]:
    """The session's progress, from the live cache when it has it."""
    return {"session_id": session_id, **await session_progress(state, session_id, who)}


@router.get("/{session_id}/result")
async def result(session_id: str, who: Admitted, state: State) -> JSONResponse:
    """The result document: 200 once the session is final, 202 while it processes."""
    view = await owned_view(state, session_id, who)
    code = status.HTTP_200_OK if view.final else status.HTTP_202_ACCEPTED
    return JSONResponse(result_body(view), code)


@router.get("/{session_id}/events")
async def events(session_id: str, who: Admitted, state: State) -> StreamingResponse:
    """Progress as server-sent events until the result; 404 before the stream starts, 429
    while the tenant has API_MAX_STREAMS_PER_TENANT streams open."""
    await session_progress(state, session_id, who)
    if state.streams[who.tenant] >= state.settings.api_max_streams_per_tenant:
        raise HTTPException(
            status.HTTP_429_TOO_MANY_REQUESTS,
            "too many event streams open for this tenant; close one or poll queue-status",
            headers={"Retry-After": "5"},
        )
    return StreamingResponse(event_stream(state, session_id, who), media_type="text/event-stream")
