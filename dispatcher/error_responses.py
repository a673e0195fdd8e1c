"""How errors reach a client: a readable 422 without the values sent, an opaque 500."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import asyncpg
import structlog
from fastapi import FastAPI, HTTPException, Request, status
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from dispatcher.console.pages import CONSOLE, problem_page
from dispatcher.dependencies import app_state
from dispatcher.guard import expects_body, is_json
from dispatcher.views import API

log = structlog.get_logger(__name__)

# A 422 lists at most this many problems: a body with 40,000 unknown fields gets a short answer.
MAX_LISTED_PROBLEMS = 10
# Longest field name quoted in a 422 (names are the client's own text).
MAX_QUOTED_NAME = 40


# What FastAPI answers when it cannot decode a body at all (bad UTF-8, nesting too deep for
# the parser, an integer too long to convert), before any dependency runs.
BODY_NOT_PARSED = "There was an error parsing the body"


# PostgreSQL away, restarting or out of connections (shared.db.UNAVAILABLE, without the
# bare OSError, which could be anything): the request may be sent again in a moment.
DATABASE_AWAY: tuple[type[Exception], ...] = (
    ConnectionError,
    asyncpg.InterfaceError,
    asyncpg.PostgresConnectionError,
    asyncpg.exceptions.OperatorInterventionError,
    asyncpg.exceptions.InsufficientResourcesError,
)
DATABASE_RETRY_AFTER_S = 2


def install(app: FastAPI) -> None:
    """Answer validation errors and unexpected exceptions with this module's handlers."""
    app.exception_handler(RequestValidationError)(readable_422)
    app.exception_handler(StarletteHTTPException)(charged_400)
    for away in DATABASE_AWAY:
        app.exception_handler(away)(database_away_503)
    app.exception_handler(Exception)(unexpected_500)


async def database_away_503(request: Request, exc: Exception) -> JSONResponse:
    """503 with Retry-After while PostgreSQL cannot be reached: the client sends the
    request again (with its Idempotency-Key, a session recorded meanwhile is the one it gets;
    on the postgres transport a session is recorded with its tasks or not at all)."""
    log.warning("postgres unavailable", path=request.url.path, error=repr(exc))
    return JSONResponse(
        {"detail": "the session store is unreachable for a moment; try again shortly"},
        status.HTTP_503_SERVICE_UNAVAILABLE,
        headers={"Retry-After": str(DATABASE_RETRY_AFTER_S), "Cache-Control": "no-store"},
    )


async def readable_422(request: Request, exc: RequestValidationError) -> JSONResponse:
    """422 with `field: message` per problem; a body that is not JSON still costs its key.
    A route that wants a JSON body and was sent another kind (or no media type) answers 415
    in those terms, not a 422 about a "dictionary" the client never sent."""
    if request.url.path.startswith(API) and unparsed(exc.errors()):
        refused = await _charge(request)
        if refused is not None:
            return refused
    if _body_of_another_kind(request, exc.errors()):
        return JSONResponse(
            {"detail": "send the body as JSON, with Content-Type: application/json"},
            status.HTTP_415_UNSUPPORTED_MEDIA_TYPE,
        )
    problems = readable_problems(exc.errors())
    return JSONResponse(
        {"detail": "; ".join(problems), "errors": problems},
        status.HTTP_422_UNPROCESSABLE_CONTENT,
    )


async def charged_400(request: Request, exc: StarletteHTTPException) -> Response:
    """A body FastAPI could not decode at all is charged to its key like any other (else a
    flood of them would cost nothing), and answered in the client's terms."""
    if exc.status_code == status.HTTP_400_BAD_REQUEST and exc.detail == BODY_NOT_PARSED:
        if request.url.path.startswith(API):
            refused = await _charge(request)
            if refused is not None:
                return refused
        return JSONResponse(
            {"detail": "the body is not valid JSON in UTF-8 (or nests too deep to read)"},
            status.HTTP_400_BAD_REQUEST,
        )
    if request.url.path.startswith(CONSOLE) and exc.status_code >= 400:
        return problem_page(exc.status_code, str(exc.detail), exc.headers)
    return await http_exception_handler(request, exc)


async def _charge(request: Request) -> JSONResponse | None:
    """Count the request against its key's rate limit: the key is checked and charged here
    because the route's dependencies never ran. The refusal to answer, if any."""
    try:
        await (await app_state(request)).quotas.admit(request)
    except HTTPException as refused:
        return JSONResponse(
            {"detail": refused.detail}, refused.status_code, headers=refused.headers
        )
    return None


async def unexpected_500(request: Request, exc: Exception) -> JSONResponse:
    """500 with a reference to the logged traceback, never the error itself."""
    reference = uuid.uuid4().hex[:12]
    log.error("request failed", error_id=reference, path=request.url.path, exc_info=exc)
    return JSONResponse(
        {"detail": f"internal error; quote reference {reference} when reporting it"},
        status.HTTP_500_INTERNAL_SERVER_ERROR,
        headers={"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"},
    )


def _body_of_another_kind(request: Request, errors: Sequence[Any]) -> bool:
    """Whether the route wanted a JSON body and the request's body, sent as another media
    type, never reached it (FastAPI then validates nothing, or the raw bytes, as the body)."""
    if is_json(request.headers.get("content-type", "")) or not expects_body(request.headers):
        return False
    return any(tuple(e.get("loc", ())) == ("body",) for e in errors)


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
