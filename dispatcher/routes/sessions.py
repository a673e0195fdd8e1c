"""Submitting a session: POST analyze-async."""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Sequence

from fastapi import APIRouter, HTTPException, status
from fastapi.responses import JSONResponse

from dispatcher import answers
from dispatcher.admission import AtCapacity
from dispatcher.auth import Caller, effective_plan
from dispatcher.dependencies import KEY_SCHEMES, Admitted, State
from dispatcher.event_tokens import grant_for, issue
from dispatcher.idempotency import IdempotencyHeader, request_fingerprint
from dispatcher.media import MediaRefused
from dispatcher.progress import owned_view
from dispatcher.schemas import AnalyzeRequest
from dispatcher.state import AppState
from dispatcher.submit import (
    NO_WORKER_RETRY_AFTER_S,
    Accepted,
    Backpressure,
    KeyReused,
    accept,
    media_task_path,
    unservable,
)
from dispatcher.views import API, links, processing_body, result_body
from shared import sessions
from shared.sessions import NewSession
from shared.settings import Settings
from shared.tenant_settings import components_of, session_policy, tuning_of
from shared.tenant_store import TenantRecord

router = APIRouter(prefix=API, dependencies=KEY_SCHEMES)


@router.post(
    "/analyze-async",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=None,
    responses=answers.SUBMIT,
)
async def analyze_async(
    body: AnalyzeRequest, who: Admitted, state: State, idempotency_key: IdempotencyHeader = None
) -> JSONResponse:
    """202 once the broker confirmed the session's tasks; the result at once when analysed
    in-process (broker away) or when the idempotency key names an earlier session."""
    problem = size_problem(body, state.settings)
    if problem:
        raise HTTPException(status.HTTP_413_CONTENT_TOO_LARGE, problem)
    plan = effective_plan(who, body.plan_type)
    await state.quotas.enforce_in_flight_cap(who, idempotency_key)
    media_path = await _media_path(state, who, body.media_path, idempotency_key)
    tenant = await state.tenant_settings.get(who.tenant)  # cached: no query per session
    components = components_of(tenant.settings if tenant else None)
    await _servable(state, who, body.input_type, components, idempotency_key)
    async with _admitted(state, who, plan, idempotency_key) as waited:
        if waited:  # the tenant's other requests may have started sessions meanwhile
            await state.quotas.enforce_in_flight_cap(who, idempotency_key)
        new = new_session(body, who, plan, media_path, idempotency_key, state.settings, tenant)
        accepted = await _accept(state, new)
    if accepted.mode == "sync" or accepted.replayed:
        return await _current_state(state, accepted.session_id, who)
    token = events_token(state, who, accepted.session_id, plan)
    return JSONResponse(processing_body(accepted.session_id, token), status.HTTP_202_ACCEPTED)


def size_problem(body: AnalyzeRequest, settings: Settings) -> str | None:
    """Why the content or url is too long for this server (413), or None."""
    if body.body and len(body.body) > settings.max_content_chars:
        return f"content has {len(body.body)} characters; limit {settings.max_content_chars}"
    if body.url and len(body.url) > settings.max_url_chars:
        return f"url longer than {settings.max_url_chars} characters"
    return None


def new_session(
    body: AnalyzeRequest,
    who: Caller,
    plan: int,
    media_path: str | None,
    idempotency_key: str | None,
    settings: Settings,
    tenant: TenantRecord | None = None,
) -> NewSession:
    """The session a request asks for, under a fresh id, with its tenant's settings."""
    chosen = tenant.settings if tenant else None
    return NewSession(
        id=sessions.new_session_id(),
        tenant=who.tenant,
        plan=plan,
        input_type=body.input_type,
        input=body.task_input(media_path),
        deadline_s=settings.deadline_s(plan),
        user_id=body.user_id,
        idempotency_key=idempotency_key,
        request_hash=request_fingerprint(body, plan) if idempotency_key else None,
        components=components_of(chosen),
        tuning=tuning_of(chosen, tenant.version if tenant else None),
        policy=session_policy(chosen),
    )


async def _media_path(
    state: AppState, who: Caller, media_path: str | None, idempotency_key: str | None
) -> str | None:
    """The path the tasks carry for the client's media file; 422 when it cannot be used."""
    if not media_path:
        return media_path
    try:
        return await media_task_path(state, who.tenant, media_path)
    except MediaRefused as exc:
        # A replay returns the session its key names, whose file was checked when it was
        # created: a file removed since must not turn the replay into a refusal.
        if not await _replay(state, who, idempotency_key):
            raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(exc)) from exc
        return media_path


async def _servable(
    state: AppState,
    who: Caller,
    input_type: str,
    components: Sequence[str],
    idempotency_key: str | None,
) -> None:
    """503 with Retry-After while no online worker can serve the session; a replay asks for
    no new work, so it gets its session whatever runs now."""
    reason = await unservable(state, input_type, components)
    if reason is None or await _replay(state, who, idempotency_key):
        return
    raise HTTPException(
        status.HTTP_503_SERVICE_UNAVAILABLE,
        f"{input_type} input cannot be analysed right now: {reason}",
        headers={"Retry-After": str(NO_WORKER_RETRY_AFTER_S)},
    )


@contextlib.asynccontextmanager
async def _admitted(
    state: AppState, who: Caller, plan: int, idempotency_key: str | None
) -> AsyncIterator[bool]:
    """Room in the pipeline for the session while it is recorded (dispatcher/admission.py);
    503 with Retry-After when none came. Yields whether the request waited for it. A replay
    asks for no new work, so it passes; with the broker away the API analyses the session
    itself, and the sessions left processing meanwhile must not hold that back."""
    if not state.broker_up:
        yield False
        return
    try:
        async with state.admission.slot(
            plan, lambda: _replay(state, who, idempotency_key)
        ) as waited:
            yield waited
    except AtCapacity as exc:
        raise HTTPException(
            status.HTTP_503_SERVICE_UNAVAILABLE,
            str(exc),
            headers={"Retry-After": str(exc.retry_after_s)},
        ) from exc


async def _replay(state: AppState, who: Caller, idempotency_key: str | None) -> bool:
    """Whether the idempotency key already names a session of this tenant."""
    return bool(idempotency_key) and await sessions.key_used(
        state.pool, who.tenant, idempotency_key or ""
    )


async def _accept(state: AppState, new: NewSession) -> Accepted:
    """`accept`, its refusals as answers: 503 with Retry-After, 409 for a reused key."""
    try:
        return await accept(state, new)
    except Backpressure as exc:
        raise HTTPException(
            status.HTTP_503_SERVICE_UNAVAILABLE,
            "the pipeline is at capacity, retry later",
            headers={"Retry-After": str(exc.retry_after_s)},
        ) from exc
    except KeyReused as exc:
        raise HTTPException(
            status.HTTP_409_CONFLICT,
            "this Idempotency-Key was already used for a different request",
        ) from exc


async def _current_state(state: AppState, session_id: str, who: Caller) -> JSONResponse:
    """A session as its submitter sees it now: 200 with the result once final, else 202."""
    view = await owned_view(state, session_id, who)
    token = events_token(state, who, view.id, view.plan)
    if view.final:
        return JSONResponse({**result_body(view), **links(view.id, token)}, status.HTTP_200_OK)
    return JSONResponse(processing_body(view.id, token), status.HTTP_202_ACCEPTED)


def events_token(state: AppState, who: Caller, session_id: str, plan: int) -> str:
    """The token of the session's `events_url`: its events only, for as long as it may run."""
    grant = grant_for(state.settings, session_id, who.tenant, plan, time.time())
    return issue(state.events_key, grant)
