"""The API application assembled: its connections, middleware, error answers and routers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles
from fastapi_offline import FastAPIOffline

from dispatcher import error_responses
from dispatcher.audit import RefusalAudit
from dispatcher.console import dead_letters as console_dead_letters
from dispatcher.console import pages as console_pages
from dispatcher.console import review as console_review
from dispatcher.console import routes as console
from dispatcher.docs import DocsPolicy
from dispatcher.guard import RequestGuard, SecurityHeaders
from dispatcher.quotas import RateLimitHeaders
from dispatcher.routes import health, progress, review, sessions, workers
from dispatcher.state import AppState
from shared.background import report_if_stuck
from shared.settings import Settings

# Largest request body read, from the character limit: a code point outside the BMP sent as
# two `\uXXXX` escapes takes 12 bytes of JSON. The character limit itself is exact (the route).
JSON_BYTES_PER_CHAR = 12
# Room for the other fields and the JSON around them.
BODY_OVERHEAD_BYTES = 64 * 1024

# Sessions and reviews alike must not sit in shared caches.
PRIVATE = "/api/v3/"

ROUTERS = (
    sessions.router,
    progress.router,
    review.router,
    health.router,
    workers.router,
    console.router,
    console_dead_letters.router,
    console_review.router,
)
# The documentation pages (fastapi-offline's defaults).
DOCS_PAGES = ("/docs", "/redoc")

DESCRIPTION = (
    "Submit content for analysis and follow it to its verdict. Every route under "
    "/api/v3/pipeline wants an API key: `X-API-Key: <key>` or `Authorization: Bearer <key>` "
    "(Authorize, above). A session's event stream also opens with the token of the "
    "`events_url` the POST answered with, for a browser's EventSource, which cannot send a key."
)


def create_app(settings: Settings) -> FastAPI:
    """The API: routers and error answers behind, from the outside in, the refusal audit,
    the RateLimit headers, the security headers and the request guard (the last added
    middleware is the outermost)."""
    # No trailing-slash redirects: their Location would be built from the client's Host header.
    # Swagger UI (/docs) and ReDoc (/redoc) from the assets fastapi-offline ships, never a
    # CDN: the docs work on a machine without internet.
    app = FastAPIOffline(
        title="verdict-pipeline",
        version="0.1.0",
        description=DESCRIPTION,
        lifespan=_lifespan(settings),
        redirect_slashes=False,
        # A key given to Authorize is kept in memory only: persisting it would leave it in
        # the browser's localStorage, readable by any script of this origin, after the tab.
        swagger_ui_parameters={"persistAuthorization": False},
    )
    error_responses.install(app)
    for router in ROUTERS:
        app.include_router(router)
    # The console's stylesheet and script, from the package: no CDN.
    app.mount("/admin/static", StaticFiles(directory=console_pages.STATIC), name="console-static")
    app.add_middleware(RequestGuard, settings=settings, limit=body_limit(settings))
    app.add_middleware(DocsPolicy, paths=DOCS_PAGES)
    app.add_middleware(SecurityHeaders, private_prefix=PRIVATE)
    app.add_middleware(RateLimitHeaders)
    app.add_middleware(RefusalAudit)  # outermost: sees every refusal, FastAPI's own included
    return app


def body_limit(settings: Settings) -> int:
    """The most request-body bytes the API reads: a body of the largest content allowed."""
    return settings.max_content_chars * JSON_BYTES_PER_CHAR + BODY_OVERHEAD_BYTES


# Seconds the API's connections may take to close before it logs what every task and thread
# is doing: uvicorn's graceful shutdown (10 s) and this stay inside the engine's stop grace
# (40 s), so a stop that ends in SIGKILL has said where it hung.
STUCK_CLOSING_S = 20.0


def _lifespan(settings: Settings) -> Callable[[FastAPI], AbstractAsyncContextManager[None]]:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        stopping = asyncio.Event()
        watchdog = asyncio.ensure_future(report_if_stuck(stopping, STUCK_CLOSING_S))
        try:
            async with AppState.opened(settings) as state:
                app.state.pipeline = state
                yield
                stopping.set()
        finally:
            # It watches the close of the connections: a hang after them (the loop's own
            # clean-up) is not its to report; what could hold that (a pool connection kept
            # by a task left behind) is bounded where it is closed (close_pool).
            watchdog.cancel()

    return lifespan
