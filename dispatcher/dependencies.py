"""What routes ask FastAPI for: the process's shared state and the request's admitted caller.

Both are coroutines although `app_state` does no I/O: FastAPI runs a plain `def` dependency
in its thread pool, a thread hand-off per dependency per request.
"""

from __future__ import annotations

import time
from typing import Annotated

from fastapi import Depends, HTTPException, Query, Request, Security, status
from fastapi.security import APIKeyHeader, HTTPBearer

from dispatcher.auth import Caller, key_from
from dispatcher.event_tokens import InvalidToken, verify
from dispatcher.state import AppState

# The two ways to present a key, declared for the OpenAPI document (the docs' Authorize):
# RequestGuard and the quotas read and check the key itself.
API_KEY = APIKeyHeader(
    name="X-API-Key", auto_error=False, description="An API key (`verdict keys new`)."
)
BEARER = HTTPBearer(auto_error=False, description="The same API key as a bearer token.")
KEY_SCHEMES = [Security(API_KEY), Security(BEARER)]  # a router's `dependencies`


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


async def follower(
    request: Request,
    session_id: str,
    state: AppState = Depends(app_state),
    token: str | None = Query(
        None,
        max_length=2048,
        description="The token of the `events_url` the POST answered with: opens this "
        "session's events without an API key (a browser's EventSource cannot send one).",
    ),
) -> Caller:
    """Who follows a session's events: the caller of an API key, else of the session's
    events token (401 when it is not valid for this session now)."""
    if token is None or key_from(request):
        return await state.quotas.admit(request)
    return await state.quotas.admit_token(
        request, lambda: token_caller(state.events_key, token, session_id, time.time()), session_id
    )


def token_caller(key: bytes, token: str, session_id: str, now: float) -> Caller:
    """The caller an events token stands for; 401 in the client's terms when it does not."""
    try:
        grant = verify(key, token, session_id, now)
    except InvalidToken as exc:
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            f"{exc}; take a fresh events_url from POST analyze-async, or send your API key",
        ) from exc
    return Caller(grant.tenant, grant.plan, until=float(grant.expires))


State = Annotated[AppState, Depends(app_state)]
Admitted = Annotated[Caller, Depends(caller)]
Admin = Annotated[Caller, Depends(admin)]
Follower = Annotated[Caller, Depends(follower)]
