"""GET /healthz: whether this API process can serve, and which services it reaches."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from dispatcher import answers
from dispatcher.dependencies import State
from dispatcher.submit import unservable
from shared import sessions

router = APIRouter()


@router.get("/healthz", response_model=None, responses=answers.HEALTH)
async def healthz(state: State) -> JSONResponse:
    """200 while Postgres answers: without the broker or Redis the API still serves (sync)."""
    checks = {
        "postgres": await _answers(sessions.store_answers(state.pool)),
        "redis": await _answers(state.redis.ping()),
        "rabbitmq": state.publisher is not None,
        "accepts_text": await unservable(state, "text") is None,
    }
    healthy = checks["postgres"]
    return JSONResponse({"ok": healthy, **checks}, 200 if healthy else 503)


async def _answers(check: Awaitable[Any]) -> bool:
    try:
        return bool(await check)
    except Exception:
        return False
