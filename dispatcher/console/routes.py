"""The admin console's pages under /admin: sign-in and sign-out, overview, sessions, workers,
tenant settings."""

from __future__ import annotations

import time
import uuid
from typing import Annotated

import structlog
from fastapi import APIRouter, Form, HTTPException, Request, status
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from dispatcher.auth import authenticate
from dispatcher.console.access import (
    CSRF_REFUSED,
    HOME,
    LOGIN,
    Posted,
    SignedIn,
    TheConsole,
    browser_session,
)
from dispatcher.console.cookies import COOKIE, COOKIE_PATH, ConsoleSession, SessionCookies
from dispatcher.console.overview import overview
from dispatcher.console.pages import HEADERS, render
from dispatcher.console.search import FIELDS, SearchRefused, session_query
from dispatcher.console.timeline import timeline
from dispatcher.dependencies import State
from shared import attempts, console_store, tenant_store
from shared.api_keys import key_hash, key_label
from shared.console_store import STATUSES
from shared.constants import QUEUE_COMPONENTS
from shared.keys import Keys
from shared.registry import registry

log = structlog.get_logger(__name__)
router = APIRouter(prefix="/admin", include_in_schema=False)


def _with_cookie(response: Response, cookies: SessionCookies, value: str) -> Response:
    response.set_cookie(
        COOKIE,
        value,
        max_age=cookies.ttl_s,
        path=COOKIE_PATH,
        secure=True,
        httponly=True,
        samesite="strict",
    )
    return response


@router.get("/login")
async def login_page(request: Request, state: State, on: TheConsole) -> Response:
    """The sign-in form; a browser without a session gets an anonymous one for its token."""
    session = browser_session(request, on)
    if session is not None and await on.signed_out(state, session):
        session = None  # a copy of a signed-out cookie: a fresh anonymous one replaces it
    if on.grant(state, session) is not None:
        return RedirectResponse(HOME, status.HTTP_303_SEE_OTHER, headers=HEADERS)
    if session is not None:
        return render(request, "login.html", on.cookies, session)
    session, value = on.cookies.issue()
    return _with_cookie(render(request, "login.html", on.cookies, session), on.cookies, value)


@router.post("/login")
async def login(
    request: Request,
    state: State,
    on: TheConsole,
    api_key: Annotated[str, Form(max_length=512)] = "",
    csrf_token: Annotated[str, Form(max_length=128)] = "",
) -> Response:
    """Sign in with an admin API key: 303 to the overview with a session cookie; the form
    again with 401 (unknown key), 403 (no admin scope or a bad token) or 429."""
    session = browser_session(request, on)
    if session is None or not on.cookies.csrf_valid(session, csrf_token):
        return _login_refused(request, on, None, status.HTTP_403_FORBIDDEN, CSRF_REFUSED)
    address = request.client.host if request.client else "unknown"
    await on.refuse_too_many_logins(address)
    try:
        who = authenticate(state.settings, api_key.strip() or None)
    except HTTPException as refused:
        await on.count_failed_login(address)
        return _login_refused(request, on, session, refused.status_code, str(refused.detail))
    if not who.is_admin:
        await on.count_failed_login(address)
        return _login_refused(
            request, on, session, status.HTTP_403_FORBIDDEN, "this API key has no admin scope"
        )
    hashed = key_hash(api_key.strip())
    _, value = on.cookies.issue(hashed)  # a fresh nonce: no fixation
    log.info("console sign-in", operator=key_label(who.tenant, hashed), address=address)
    response = RedirectResponse(HOME, status.HTTP_303_SEE_OTHER, headers=HEADERS)
    return _with_cookie(response, on.cookies, value)


def _login_refused(
    request: Request, on: TheConsole, session: ConsoleSession | None, code: int, message: str
) -> Response:
    if session is not None:
        return render(request, "login.html", on.cookies, session, code, error=message)
    session, value = on.cookies.issue()
    page = render(request, "login.html", on.cookies, session, code, error=message)
    return _with_cookie(page, on.cookies, value)


@router.post("/logout")
async def logout(state: State, on: TheConsole, session: Posted) -> Response:
    """Sign out: the cookie's session is refused from now on (a copy of it too), the cookie
    is removed, and the sign-in page follows."""
    log.info("console sign-out", operator=on.operator(state, session))
    await on.revoke(state, session)
    response = RedirectResponse(LOGIN, status.HTTP_303_SEE_OTHER, headers=HEADERS)
    response.delete_cookie(COOKIE, path=COOKIE_PATH, secure=True, httponly=True, samesite="strict")
    return response


@router.get("")
async def overview_page(request: Request, state: State, on: TheConsole, session: SignedIn):
    """Queues, sessions per minute and latency, refreshed by the page's script."""
    figures = await overview(state)
    return render(request, "overview.html", on.cookies, session, o=figures, page="overview")


@router.get("/overview/live")
async def overview_live(
    request: Request, state: State, on: TheConsole, session: SignedIn
) -> HTMLResponse:
    """The overview's figures alone, which the page fetches every few seconds."""
    figures = await overview(state)
    return render(request, "overview_live.html", on.cookies, session, o=figures)


@router.get("/sessions")
async def sessions_page(
    request: Request, state: State, on: TheConsole, session: SignedIn
) -> HTMLResponse:
    """Search sessions by id, tenant, status, label and time; 400 for a field it cannot use."""
    form = {name: request.query_params.get(name, "") for name in FIELDS}
    try:
        query = session_query(form)
    except SearchRefused as exc:
        return render(
            request, "sessions.html", on.cookies, session, status.HTTP_400_BAD_REQUEST,
            form=form, statuses=STATUSES, error=str(exc), found=[], page="sessions",
        )  # fmt: skip
    found = await console_store.search_sessions(state.pool, query)
    return render(
        request, "sessions.html", on.cookies, session,
        form=form, statuses=STATUSES, found=found, page="sessions",
    )  # fmt: skip


@router.get("/sessions/{session_id}")
async def session_page(
    request: Request, session_id: str, state: State, on: TheConsole, session: SignedIn
) -> HTMLResponse:
    """One session: input, each component's result and evidence, verdict, timeline."""
    try:
        sid = uuid.UUID(session_id)
    except ValueError:
        sid = None
    record = await console_store.session_record(state.pool, sid) if sid else None
    if record is None:
        return render(
            request, "missing.html", on.cookies, session, status.HTTP_404_NOT_FOUND,
            what=f"no session {session_id[:60]}", page="sessions",
        )  # fmt: skip
    prefix = state.settings.key_prefix
    live_state = await state.live.read_state(str(sid))
    tried = await attempts.read(state.house.shelf, Keys(prefix), str(sid), QUEUE_COMPONENTS)
    return render(
        request, "session.html", on.cookies, session,
        s=record, moments=timeline(record, tried), live_state=live_state, page="sessions",
    )  # fmt: skip


@router.get("/workers")
async def workers_page(
    request: Request, state: State, on: TheConsole, session: SignedIn
) -> HTMLResponse:
    """Every worker of the registry (the last hour's), online, stale or offline."""
    found = await registry(state.house.shelf, state.settings.key_prefix, time.time())
    rows = sorted(found, key=lambda w: (w.status != "online", w.components, w.worker_id))
    return render(request, "workers.html", on.cookies, session, workers=rows, page="workers")


@router.get("/tenants")
async def tenants_page(
    request: Request, state: State, on: TheConsole, session: SignedIn
) -> HTMLResponse:
    """Every tenant with settings of its own, read-only (`verdict tenants` changes them)."""
    found = [r.as_json() for r in await tenant_store.every(state.pool)]
    return render(request, "tenants.html", on.cookies, session, tenants=found, page="tenants")
