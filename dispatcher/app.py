"""FastAPI application: submit, queue-status, result, events, health."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import structlog
from fastapi import Depends, FastAPI, HTTPException, Request, status
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse

from dispatcher.audit import RefusalAudit
from dispatcher.auth import Caller, effective_plan
from dispatcher.guard import RequestGuard, SecurityHeaders
from dispatcher.idempotency import IdempotencyHeader, request_fingerprint
from dispatcher.media import MediaRefused
from dispatcher.quotas import RateLimitHeaders
from dispatcher.schemas import AnalyzeRequest
from dispatcher.state import AppState
from dispatcher.submit import Backpressure, KeyReused, accept, media_task_path
from shared import live, sessions
from shared.sessions import NewSession, SessionView
from shared.settings import Settings

log = structlog.get_logger(__name__)

API = "/api/v3/pipeline"
# Largest request body read, from the character limit: a code point outside the BMP sent as
# two `\uXXXX` escapes takes 12 bytes of JSON. The character limit itself is exact (below).
JSON_BYTES_PER_CHAR = 12
# Room for the other fields and the JSON around them.
BODY_OVERHEAD_BYTES = 64 * 1024
# A 422 lists at most this many problems: a body with 40,000 unknown fields gets a short answer.
MAX_LISTED_PROBLEMS = 10
# Longest field name quoted in a 422 (names are the client's own text).
MAX_QUOTED_NAME = 40


def create_app(settings: Settings) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with AppState.opened(settings) as state:
            app.state.pipeline = state
            yield

    # No trailing-slash redirects: their Location would be built from the client's Host header.
    app = FastAPI(
        title="verdict-pipeline", version="0.1.0", lifespan=lifespan, redirect_slashes=False
    )
    _install_limits(app, settings)
    _install_routes(app)
    app.add_middleware(RateLimitHeaders)
    app.add_middleware(RefusalAudit)  # outermost: sees every refusal, FastAPI's own included
    return app


def _install_limits(app: FastAPI, settings: Settings) -> None:
    limit = settings.max_content_chars * JSON_BYTES_PER_CHAR + BODY_OVERHEAD_BYTES
    app.add_middleware(RequestGuard, settings=settings, limit=limit)
    app.add_middleware(SecurityHeaders, private_paths=API)

    @app.exception_handler(RequestValidationError)
    async def readable_422(request: Request, exc: RequestValidationError) -> JSONResponse:
        if request.url.path.startswith(API) and unparsed(exc.errors()):
            # A body that is not JSON is refused before the route's dependencies run, so its
            # key would never be checked nor charged: a flood of them must cost the key too.
            try:
                await request.app.state.pipeline.quotas.admit(request)
            except HTTPException as refused:
                return JSONResponse(
                    {"detail": refused.detail}, refused.status_code, headers=refused.headers
                )
        problems = readable_problems(exc.errors())
        return JSONResponse(
            {"detail": "; ".join(problems), "errors": problems},
            status.HTTP_422_UNPROCESSABLE_CONTENT,
        )

    @app.exception_handler(Exception)
    async def unexpected_500(request: Request, exc: Exception) -> JSONResponse:
        reference = uuid.uuid4().hex[:12]
        log.error("request failed", error_id=reference, path=request.url.path, exc_info=exc)
        return JSONResponse(
            {"detail": f"internal error; quote reference {reference} when reporting it"},
            status.HTTP_500_INTERNAL_SERVER_ERROR,
            headers={"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"},
        )


def unparsed(errors: Sequence[Any]) -> bool:
    """Whether validation stopped at the JSON itself (before any dependency ran)."""
    return any(e.get("type") == "json_invalid" for e in errors)


def readable_problems(errors: Sequence[Any]) -> list[str]:
    """`field: message` for the first few validation errors, never the values sent."""
    problems = [
        f"{_field_name(e['loc'])}: {str(e['msg']).removeprefix('Value error, ')}"
        for e in errors[:MAX_LISTED_PROBLEMS]
    ]
    if len(errors) > MAX_LISTED_PROBLEMS:
        problems.append(f"and {len(errors) - MAX_LISTED_PROBLEMS} more")
    return problems


def _field_name(loc: Sequence[Any]) -> str:
    name = ".".join(str(p) for p in loc if p != "body") or "body"
    return name if len(name) <= MAX_QUOTED_NAME else name[:MAX_QUOTED_NAME] + "…"


# Dependencies are coroutines although they do no I/O: FastAPI runs a plain `def` one in
# its thread pool, a thread hand-off per dependency per request.
async def pipeline(request: Request) -> AppState:
    state: AppState = request.app.state.pipeline
    return state


async def caller(request: Request, state: AppState = Depends(pipeline)) -> Caller:
    return await state.quotas.admit(request)


def _links(session_id: str) -> dict[str, str]:
    return {
        "poll_url": f"{API}/{session_id}/queue-status",
        "result_url": f"{API}/{session_id}/result",
        "events_url": f"{API}/{session_id}/events",
    }


def _result_body(view: SessionView) -> dict[str, Any]:
    return {
        "session_id": view.id,
        **view.progress(),
        "mode": view.mode,
        "plan_type": view.plan,
        "created_at": view.created_at.isoformat() if view.created_at else None,
        "finished_at": view.finished_at.isoformat() if view.finished_at else None,
        "components": view.results,
        "verdict": view.verdict,
    }


def _install_routes(app: FastAPI) -> None:
    @app.post(f"{API}/analyze-async", status_code=status.HTTP_202_ACCEPTED)
    async def analyze_async(
        body: AnalyzeRequest,
        who: Caller = Depends(caller),
        state: AppState = Depends(pipeline),
        idempotency_key: IdempotencyHeader = None,
    ) -> JSONResponse:
        settings = state.settings
        if body.body and len(body.body) > settings.max_content_chars:
            raise HTTPException(
                413,
                f"content has {len(body.body)} characters; limit {settings.max_content_chars}",
            )
        if body.url and len(body.url) > settings.max_url_chars:
            raise HTTPException(413, f"url longer than {settings.max_url_chars} characters")
        plan = effective_plan(who, body.plan_type)
        await state.quotas.hold_in_flight(who, idempotency_key)
        try:
            media_path = body.media_path and await media_task_path(
                state, who.tenant, plan, body.media_path
            )
        except MediaRefused as exc:
            # A replay returns the session its key names, whose file was checked when it was
            # created: a file removed since must not turn the replay into a refusal.
            replay = idempotency_key and await sessions.key_used(
                state.pool, who.tenant, idempotency_key
            )
            if not replay:
                raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(exc)) from exc
            media_path = body.media_path
        new = NewSession(
            id=sessions.new_session_id(),
            tenant=who.tenant,
            plan=plan,
            input_type=body.input_type,
            input=body.task_input(media_path),
            deadline_s=settings.deadline_s(plan),
            user_id=body.user_id,
            idempotency_key=idempotency_key,
            request_hash=request_fingerprint(body, plan) if idempotency_key else None,
        )
        try:
            accepted = await accept(state, new)
        except Backpressure as exc:
            return JSONResponse(
                {"detail": "the pipeline is at capacity, retry later"},
                status.HTTP_503_SERVICE_UNAVAILABLE,
                headers={"Retry-After": str(exc.retry_after_s)},
            )
        except KeyReused as exc:
            raise HTTPException(
                status.HTTP_409_CONFLICT,
                "this Idempotency-Key was already used for a different request",
            ) from exc
        if accepted.mode == "sync" or accepted.replayed:
            return await _current_state(state, accepted.session_id, who)
        return JSONResponse(
            {
                "session_id": accepted.session_id,
                "status": "processing",
                **_links(accepted.session_id),
            },
            202,
        )

    @app.get(f"{API}/{{session_id}}/queue-status")
    async def queue_status(
        session_id: str, who: Caller = Depends(caller), state: AppState = Depends(pipeline)
    ) -> dict[str, Any]:
        return {"session_id": session_id, **await _progress(state, session_id, who)}

    @app.get(f"{API}/{{session_id}}/result")
    async def result(
        session_id: str, who: Caller = Depends(caller), state: AppState = Depends(pipeline)
    ) -> JSONResponse:
        view = await sessions.load(state.pool, session_id, who.tenant)
        if view is None:
            raise HTTPException(404, "no such session")
        code = status.HTTP_200_OK if view.final else status.HTTP_202_ACCEPTED
        return JSONResponse(_result_body(view), code)

    @app.get(f"{API}/{{session_id}}/events")
    async def events(
        session_id: str, who: Caller = Depends(caller), state: AppState = Depends(pipeline)
    ) -> StreamingResponse:
        await _progress(state, session_id, who)  # 404 before the stream starts
        return StreamingResponse(
            _event_stream(state, session_id, who), media_type="text/event-stream"
        )

    @app.get("/healthz")
    async def healthz(state: AppState = Depends(pipeline)) -> JSONResponse:
        checks = {"postgres": False, "redis": False, "rabbitmq": state.publisher is not None}
        try:
            checks["postgres"] = await state.pool.fetchval("SELECT true")
        except Exception:
            checks["postgres"] = False
        try:
            checks["redis"] = bool(await state.redis.ping())
        except Exception:
            checks["redis"] = False
        healthy = checks[
            "postgres"
        ]  # without the broker or Redis the API still serves (sync, Postgres)
        return JSONResponse({"ok": healthy, **checks}, 200 if healthy else 503)


async def _current_state(state: AppState, session_id: str, who: Caller) -> JSONResponse:
    """A session as its submitter sees it now: 200 with the result once final, else 202."""
    view = await sessions.load(state.pool, session_id, who.tenant)
    if view is None:
        raise HTTPException(404, "no such session")
    if view.final:
        return JSONResponse({**_result_body(view), **_links(view.id)}, status.HTTP_200_OK)
    body = {"session_id": view.id, "status": "processing", **_links(view.id)}
    return JSONResponse(body, status.HTTP_202_ACCEPTED)


async def _progress(state: AppState, session_id: str, who: Caller) -> dict[str, Any]:
    """Progress of the caller's session: 404 unless Postgres says it is the caller's.

    Redis live state is only a cache of progress; whose session it is comes from the record.
    """
    if not await state.tenants.owns(who.tenant, session_id):
        raise HTTPException(404, "no such session")
    try:
        cached = await live.read_state(state.redis, state.settings.key_prefix, session_id)
    except Exception:
        cached = None
    if cached is not None:
        cached.pop("tenant", None)
        return cached
    view = await sessions.load(state.pool, session_id, who.tenant)
    if view is None:
        raise HTTPException(404, "no such session")
    return view.progress()


# How often the event stream re-reads state when no notification arrives (Redis may be down).
EVENT_POLL_S = 1.0


async def _event_stream(state: AppState, session_id: str, who: Caller) -> AsyncIterator[bytes]:
    """Server-sent `progress` events until the session is final, then one `result` event.

    A session that vanishes mid-stream (row deleted, expired) ends the stream with an `end`
    event, as does a failure to read it: a stream always ends as a well-formed response.
    """
    pubsub: Any = state.redis.pubsub()
    try:
        await pubsub.subscribe(live.events_channel(state.settings.key_prefix, session_id))
    except Exception:
        pubsub = None
    try:
        async for event in _session_events(state, session_id, who, pubsub):
            yield event
    except HTTPException:
        yield _sse("end", {"reason": "the session no longer exists"})
    except Exception as exc:
        log.warning("event stream ended early", session_id=session_id, error=repr(exc))
        yield _sse("end", {"reason": "progress cannot be read now; reconnect later"})
    finally:
        if pubsub is not None:
            await pubsub.aclose()


async def _session_events(
    state: AppState, session_id: str, who: Caller, pubsub: Any
) -> AsyncIterator[bytes]:
    last = None
    while True:
        if not await state.tenants.exists(session_id):  # the record, not the cache
            raise HTTPException(404, "no such session")
        progress = await _progress(state, session_id, who)
        if progress != last:
            yield _sse("progress", progress)
            last = progress
        if progress["status"] != "processing":
            view = await sessions.load(state.pool, session_id, who.tenant)
            if view is not None and view.final:
                yield _sse("result", _result_body(view))
                return
        await _wait_for_news(pubsub)


def _sse(event: str, data: Any) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, default=str)}\n\n".encode()


async def _wait_for_news(pubsub: Any) -> None:
    if pubsub is None:
        await asyncio.sleep(EVENT_POLL_S)
        return
    try:
        await pubsub.get_message(ignore_subscribe_messages=True, timeout=EVENT_POLL_S)
    except Exception:
        await asyncio.sleep(EVENT_POLL_S)
