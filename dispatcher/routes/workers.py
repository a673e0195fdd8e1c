"""GET /api/v3/workers: the worker registry, for operators (admin scope)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from dispatcher import answers
from dispatcher.dependencies import KEY_SCHEMES, Admin, State

router = APIRouter(tags=["workers"], dependencies=KEY_SCHEMES)


@router.get("/api/v3/workers", responses=answers.WORKERS)
async def workers(who: Admin, state: State) -> JSONResponse:
    """Every worker and aggregator record with its status now (online, stale, offline), read
    fresh from Redis: 403 without the admin scope."""
    records = await state.workers.refresh()
    # No-store like everything under /api/v3/ (dispatcher/app.py, PRIVATE).
    return JSONResponse({"workers": [r.as_json() for r in records]})
