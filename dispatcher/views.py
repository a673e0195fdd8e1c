"""What a client is shown of a session: the documents the API answers with, and their links."""

from __future__ import annotations

from typing import Any

from shared.sessions import SessionView

# Every route of the pipeline lives under this path.
API = "/api/v3/pipeline"


def links(session_id: str, events_token: str | None = None) -> dict[str, str]:
    """Where a client follows a session: its progress, its result and its event stream; the
    last with the token that opens it without an API key (dispatcher/event_tokens.py)."""
    events = f"{API}/{session_id}/events"
    return {
        "poll_url": f"{API}/{session_id}/queue-status",
        "result_url": f"{API}/{session_id}/result",
        "events_url": f"{events}?token={events_token}" if events_token else events,
    }


def processing_body(session_id: str, events_token: str | None = None) -> dict[str, Any]:
    """The answer for a session still processing: its id and the links to follow it."""
    return {"session_id": session_id, "status": "processing", **links(session_id, events_token)}


def result_body(view: SessionView) -> dict[str, Any]:
    """The result document: progress, plan, times, each component's result, the verdict and
    its human review."""
    return {
        "session_id": view.id,
        **view.progress(),
        "mode": view.mode,
        "plan_type": view.plan,
        "created_at": view.created_at.isoformat() if view.created_at else None,
        "finished_at": view.finished_at.isoformat() if view.finished_at else None,
        "components": view.results,
        "verdict": view.verdict,
        # {status, label, note, reviewed_at} once the verdict was queued for review, else null.
        "review": view.review,
    }
