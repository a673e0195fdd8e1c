"""What routes ask FastAPI for: the process's shared state and the request's admitted caller.

Both are coroutines although `app_state` does no I/O: FastAPI runs a plain `def` dependency
in its thread pool, a thread hand-off per dependency per request.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, HTTPException, Request, status

from dispatcher.auth import Caller
from dispatcher.state import AppState


async def app_state(request: Request) -> AppState:
    """The connections and caches the lifespan opened for every request."""
    state: AppState = request.app.state.pipeline
    return state


async def caller(request: Request, state: AppState = Depends(app_state)) -> Caller:
    """The request's caller once the quotas admit it (401, 429 otherwise)."""
    return await state.quotas.admit(request)


async def admin(who: Caller = Depends(caller)) -> Caller:
    """The admitted caller when its key has the `admin` scope; 403 otherwise."""
    if not who.is_admin:
        raise HTTPException(status.HTTP_403_FORBIDDEN, "this API key has no admin scope")
    return who


State = Annotated[AppState, Depends(app_state)]
Admitted = Annotated[Caller, Depends(caller)]
Admin = Annotated[Caller, Depends(admin)]
