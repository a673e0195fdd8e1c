"""FastAPI application: submit, queue-status, result, events, health, metrics."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from fastapi import Depends, FastAPI, Header, HTTPException, Request, status
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from prometheus_client import make_asgi_app
from redis.asyncio import Redis
from starlette.types import ASGIApp, Receive, Scope, Send

from dispatcher.audit import RefusalAudit
from dispatcher.auth import Caller, effective_plan
from dispatcher.quotas import RateLimitHeaders
from dispatcher.schemas import AnalyzeRequest
from dispatcher.state import AppState
from dispatcher.submit import Backpressure, accept
from shared import db as database
from shared import live, sessions
from shared.sessions import NewSession, SessionView
from shared.settings import Settings

API = "/api/v3/pipeline"
# Largest request body accepted before parsing; content itself is bounded by settings.
BODY_OVERHEAD_BYTES = 64 * 1024


def create_app(settings: Settings) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        state = AppState(
            settings=settings,
            pool=await database.create_pool(settings.database_url, max_size=20),
            redis=Redis.from_url(settings.redis_url),
            http=httpx.AsyncClient(timeout=httpx.Timeout(30.0, connect=5.0)),
        )
        state.start_broker()
        app.state.pipeline = state
        yield
        await state.close()

    app = FastAPI(title="verdict-pipeline", version="0.1.0", lifespan=lifespan)
    app.mount("/metrics", make_asgi_app())
    _install_limits(app, settings)
    _install_routes(app)
    app.add_middleware(RateLimitHeaders)
    app.add_middleware(RefusalAudit)  # outermost: sees every refusal, FastAPI's own included
    return app


class BodyLimit:
    """413 for a request whose declared body is over `limit` bytes, before it is read.

    Plain ASGI: starlette's BaseHTTPMiddleware (`@app.middleware`) costs every request an
    extra task and a pair of memory streams."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            length = dict(scope["headers"]).get(b"content-length", b"")
            if length.isdigit() and int(length) > self.limit:
                response = JSONResponse(
                    {"detail": f"request body over {self.limit} bytes"},
                    status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _install_limits(app: FastAPI, settings: Settings) -> None:
    limit = settings.max_content_chars * 4 + BODY_OVERHEAD_BYTES  # 4 bytes per char at most
    app.add_middleware(BodyLimit, limit=limit)

    @app.exception_handler(RequestValidationError)
    async def readable_422(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = [
            f"{'.'.join(str(p) for p in e['loc'] if p != 'body') or 'body'}: {e['msg']}"
            for e in exc.errors()
        ]
        return JSONResponse(
            {"detail": "; ".join(problems), "errors": problems},
            status.HTTP_422_UNPROCESSABLE_CONTENT,
        )


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
        idempotency_key: str | None = Header(None, max_length=200),
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
        new = NewSession(
            id=sessions.new_session_id(),
            tenant=who.tenant,
            plan=plan,
            input_type=body.input_type,
            input=body.task_input(),
            deadline_s=settings.deadline_s(plan),
            user_id=body.user_id,
            idempotency_key=idempotency_key,
        )
        try:
            accepted = await accept(state, new)
        except Backpressure as exc:
            return JSONResponse(
                {"detail": f"the pipeline is at capacity, retry later ({exc})"},
                status.HTTP_503_SERVICE_UNAVAILABLE,
                headers={"Retry-After": str(exc.retry_after_s)},
            )
        if accepted.mode == "sync":
            view = await sessions.load(state.pool, accepted.session_id, who.tenant)
            assert view is not None
            return JSONResponse({**_result_body(view), **_links(view.id)}, status.HTTP_200_OK)
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


async def _progress(state: AppState, session_id: str, who: Caller) -> dict[str, Any]:
    """Live state from Redis when it has it, else from Postgres; 404 for others' sessions."""
    try:
        cached = await live.read_state(state.redis, state.settings.key_prefix, session_id)
    except Exception:
        cached = None
    if cached is not None and cached.get("tenant") == who.tenant:
        cached.pop("tenant")
        return cached
    view = await sessions.load(state.pool, session_id, who.tenant)
    if view is None:
        raise HTTPException(404, "no such session")
    return view.progress()


# How often the event stream re-reads state when no notification arrives (Redis may be down).
EVENT_POLL_S = 1.0


async def _event_stream(state: AppState, session_id: str, who: Caller) -> AsyncIterator[bytes]:
    """Server-sent `progress` events until the session is final, then one `result` event."""
    pubsub: Any = state.redis.pubsub()
    try:
        await pubsub.subscribe(live.events_channel(state.settings.key_prefix, session_id))
    except Exception:
        pubsub = None
    last = None
    try:
        while True:
            progress = await _progress(state, session_id, who)
            if progress != last:
                yield f"event: progress\ndata: {json.dumps(progress)}\n\n".encode()
                last = progress
            if progress["status"] != "processing":
                view = await sessions.load(state.pool, session_id, who.tenant)
                if view is not None and view.final:
                    final = json.dumps(_result_body(view), default=str)
                    yield f"event: result\ndata: {final}\n\n".encode()
                    return
            await _wait_for_news(pubsub)
    finally:
        if pubsub is not None:
            await pubsub.aclose()


async def _wait_for_news(pubsub: Any) -> None:
    if pubsub is None:
        await asyncio.sleep(EVENT_POLL_S)
        return
    try:
        await pubsub.get_message(ignore_subscribe_messages=True, timeout=EVENT_POLL_S)
    except Exception:
        await asyncio.sleep(EVENT_POLL_S)
