"""GET /healthz: whether this API process can serve, and which services it reaches."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from dispatcher import answers
from dispatcher.dependencies import State
from dispatcher.state import AppState
from shared import sessions

router = APIRouter()


@router.get("/healthz", response_model=None, responses=answers.HEALTH)
async def healthz(state: State) -> JSONResponse:
    """200 while Postgres answers: without the broker or Redis the API still serves (sync)."""
    checks = {
        "postgres": await _answers(sessions.store_answers(state.pool)),
        # Where heartbeats, live news and rate-limit windows are kept (shared/house.py).
        "house": state.house.kind,
        "redis": state.house.redis is not None and await _answers(state.house.ping()),
        "transport": state.settings.transport,
        # Whether sessions go to RabbitMQ now (never on the postgres transport).
        "rabbitmq": state.settings.transport == "rabbitmq" and state.publisher is not None,
        "accepts_text": _accepts_text(state),
    }
    healthy = checks["postgres"]
    return JSONResponse({"ok": healthy, **checks}, 200 if healthy else 503)


def _accepts_text(state: AppState) -> bool:
    """Whether a text session would be taken now, by the API's last read of the registry
    (kept current by its watch loop and by submissions): no I/O on this unauthenticated
    path, and the same view a POST made after it is judged by, or a newer one."""
    return not state.checks_workers or state.workers.cached_refusal("text") is None


async def _answers(check: Awaitable[Any]) -> bool:
    try:
        return bool(await check)
    except Exception:
        return False
