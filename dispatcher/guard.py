"""What a request may make the API read, and the headers every response carries.

Plain ASGI classes: starlette's BaseHTTPMiddleware (`@app.middleware`) costs every request an
extra task and a pair of memory streams.
"""

from __future__ import annotations

import asyncio
import collections

from fastapi import HTTPException, status
from fastapi.responses import JSONResponse
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from dispatcher.auth import Caller, authenticate, key_in, remember_caller
from dispatcher.json_values import JsonValues
from shared.settings import Settings

# Requests under this path need an API key; without a known one their body is never read.
KEYED_PATHS = "/api/"


_TWO_LENGTHS = "send either Content-Length or Transfer-Encoding, not both"
_BUSY = "too many requests with a body in progress for this API key; retry when one is done"
_TWO_KEYS = "send one API key, in one X-API-Key or one Authorization header"


class BodyRefused(HTTPException):
    """Raised while a body is read when it grows past the limit (413) or stalls (408)."""


class BoundedBody:
    """`receive` that counts body bytes as they arrive (chunked or not), times out stalls,
    ends a body that has not arrived whole by its deadline (a trickle as well as a stall)
    and, given `values`, a JSON body that holds more values than it allows."""

    def __init__(
        self,
        receive: Receive,
        limit: int,
        timeout_s: float,
        deadline_s: float,
        expected: bool,
        values: JsonValues | None = None,
    ) -> None:
        self.receive = receive
        self.limit = limit
        self.values = values
        self.timeout_s = timeout_s
        self.deadline_s = deadline_s
        self.complete = not expected  # nothing (more) to read: only a disconnect can come
        self.received = 0  # body bytes so far
        self._ends_at: float | None = None

    async def __call__(self) -> Message:
        if self.complete:  # waiting for a disconnect (streaming responses): no deadline
            return await self.receive()
        now = asyncio.get_running_loop().time()
        if self._ends_at is None:
            self._ends_at = now + self.deadline_s
        left = self._ends_at - now
        try:
            async with asyncio.timeout(min(self.timeout_s, left)):
                message = await self.receive()
        except TimeoutError:
            raise BodyRefused(status.HTTP_408_REQUEST_TIMEOUT, self._too_slow(left)) from None
        self.received += len(message.get("body", b""))
        if self.received > self.limit:
            raise BodyRefused(
                status.HTTP_413_CONTENT_TOO_LARGE, f"request body over {self.limit} bytes"
            )
        if self.values is not None and not self.values.feed(message.get("body", b"")):
            if self.values.not_utf8:
                raise BodyRefused(
                    status.HTTP_415_UNSUPPORTED_MEDIA_TYPE, "send the JSON body in UTF-8"
                )
            raise BodyRefused(
                status.HTTP_413_CONTENT_TOO_LARGE,
                f"request body holds more than {self.values.limit} JSON values",
            )
        self.complete = message["type"] != "http.request" or not message.get("more_body")
        return message

    def _too_slow(self, left: float) -> str:
        if left <= self.timeout_s:
            return f"the request body did not arrive within {self.deadline_s:g} seconds"
        return f"the request body stalled for more than {self.timeout_s:g} seconds"


def is_json(content_type: str) -> bool:
    """FastAPI's rule for a body it parses as JSON: `application/json` or `application/*+json`."""
    kind = content_type.split(";", 1)[0].strip().lower()
    main, _, sub = kind.partition("/")
    return main == "application" and (sub == "json" or sub.endswith("+json"))


def _json_values(headers: Headers, limit: int) -> JsonValues | None:
    """A count of the values of a body FastAPI would parse as JSON."""
    return JsonValues(limit) if is_json(headers.get("content-type", "")) else None


def _unreadable_body(scope: Scope, headers: Headers) -> str | None:
    """Why the API cannot read a body sent to it (415), or None: a compressed body was read
    as if it were plain. (A route that wants a JSON body and got another kind answers 415
    itself: dispatcher.error_responses.)"""
    if not (_keyed(scope) and expects_body(headers)):
        return None
    encoding = headers.get("content-encoding", "").strip().lower()
    if encoding not in ("", "identity"):
        return f"Content-Encoding {encoding!r} is not accepted: send the body uncompressed"
    return None


def _credentials_repeated(headers: Headers) -> bool:
    """Whether the request carries its credentials twice: two X-API-Key or two Authorization
    headers were taken as the first one, which a proxy that adds its own would make
    another caller's (hostile probe)."""
    return len(headers.getlist("x-api-key")) > 1 or len(headers.getlist("authorization")) > 1


def expects_body(headers: Headers) -> bool:
    """Whether the request says a body follows (a length, or chunks)."""
    return headers.get("content-length", "0") != "0" or "transfer-encoding" in headers


class _NoBody:
    """`receive` for a caller without a known key: an empty body, the socket left unread."""

    def __init__(self) -> None:
        self.given = False

    async def __call__(self) -> Message:
        if self.given:
            return {"type": "http.disconnect"}
        self.given = True
        return {"type": "http.request", "body": b"", "more_body": False}


class RequestGuard:
    """The API key before the body, then at most `limit` body bytes, each read within a timeout.

    A caller with no or an unknown key gets an empty body in place of its own, so the route's
    `caller` dependency answers 401 (FastAPI reads bodies before it runs dependencies). The
    key is looked up here once: the route reads the outcome from the request's state. Any
    answer given before the body was read to its end closes the connection, so the server
    never reads the rest.
    """

    def __init__(self, app: ASGIApp, settings: Settings, limit: int) -> None:
        self.app = app
        self.settings = settings
        self.limit = limit
        # Requests with a body in progress, by key (this process's count; at most one entry
        # per key of API_KEYS, so it stays bounded).
        self._in_progress: collections.Counter[str] = collections.Counter()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if head_bytes(scope) > self.settings.api_max_header_bytes:
            # h11 holds its limit only while a head is incomplete: one that arrived whole in a
            # single read got past it. Refused here, before anything acts on it.
            await _refuse(scope, send, 431, self._headers_over_limit)
            return
        headers = Headers(scope=scope)
        if "content-length" in headers and "transfer-encoding" in headers:
            # RFC 9112 §6.1: such a message may be smuggled past a proxy that reads the other.
            await _refuse(scope, send, status.HTTP_400_BAD_REQUEST, _TWO_LENGTHS)
            return
        length = headers.get("content-length", "")
        if length.isdigit() and int(length) > self.limit:
            await _refuse(scope, send, status.HTTP_413_CONTENT_TOO_LARGE, self._over_limit)
            return
        if _keyed(scope) and _credentials_repeated(headers):
            await _refuse(scope, send, status.HTTP_400_BAD_REQUEST, _TWO_KEYS)
            return
        refusal = _unreadable_body(scope, headers)
        if refusal is not None:
            await _refuse(scope, send, status.HTTP_415_UNSUPPORTED_MEDIA_TYPE, refusal)
            return
        body = BoundedBody(
            receive,
            self.limit,
            self.settings.api_body_timeout_s,
            self.settings.api_body_deadline_s,
            expected=expects_body(headers),
            values=_json_values(headers, self.settings.api_max_json_values),
        )
        keyed = _keyed(scope)
        key = self._known_key(scope, headers) if keyed else None
        # Without a body there is nothing to keep unread: the real `receive` still tells a
        # stream opened by an events token (no key) when its client goes away.
        reader: Receive = body if key is not None or not keyed or body.complete else _NoBody()
        counted = key if key is not None and not body.complete else None
        if counted is not None:
            if self._in_progress[counted] >= self.settings.api_max_requests_per_key:
                await _refuse(scope, send, status.HTTP_429_TOO_MANY_REQUESTS, _BUSY, retry=1)
                return
            self._in_progress[counted] += 1
        started = False

        async def closing_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                if not body.complete:
                    message["headers"] = [*message.get("headers", []), (b"connection", b"close")]
            await send(message)

        try:
            await self.app(scope, reader, closing_send)
        except BodyRefused as exc:  # raised outside FastAPI's handlers (no route read it)
            if not started:
                await _refuse(scope, send, exc.status_code, exc.detail)
        finally:
            if counted is not None:  # only what was counted: a bodiless request never was
                self._in_progress[counted] -= 1
                if not self._in_progress[counted]:
                    del self._in_progress[counted]

    @property
    def _over_limit(self) -> str:
        return f"request body over {self.limit} bytes"

    @property
    def _headers_over_limit(self) -> str:
        return f"request line and headers over {self.settings.api_max_header_bytes} bytes"

    def _known_key(self, scope: Scope, headers: Headers) -> str | None:
        """The request's key when it is a known one; the outcome is kept for the route."""
        key = key_in(headers)
        try:
            outcome: Caller | HTTPException = authenticate(self.settings, key)
        except HTTPException as refused:
            outcome = refused
        remember_caller(scope, outcome)
        return key if isinstance(outcome, Caller) else None


def head_bytes(scope: Scope) -> int:
    """About what the request line and headers took on the wire."""
    target = len(scope.get("raw_path") or b"") + len(scope.get("query_string") or b"")
    return target + sum(len(name) + len(value) + 4 for name, value in scope["headers"])


def _keyed(scope: Scope) -> bool:
    return str(scope["path"]).startswith(KEYED_PATHS)


async def _refuse(scope: Scope, send: Send, code: int, detail: str, retry: int = 0) -> None:
    headers = {"connection": "close", **({"retry-after": str(retry)} if retry else {})}
    response = JSONResponse({"detail": detail}, code, headers=headers)

    async def nothing() -> Message:
        return {"type": "http.disconnect"}

    await response(scope, nothing, send)


class SecurityHeaders:
    """`X-Content-Type-Options: nosniff` on every response; `Cache-Control: no-store` on
    responses under `private_prefix` that set none (session data must not sit in shared
    caches)."""

    def __init__(self, app: ASGIApp, private_prefix: str) -> None:
        self.app = app
        self.private_prefix = private_prefix

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        private = scope["path"].startswith(self.private_prefix)

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers.append((b"x-content-type-options", b"nosniff"))
                # A route's own Cache-Control (an event stream's) is kept: it says no-store too.
                if private and all(name.lower() != b"cache-control" for name, _ in headers):
                    headers.append((b"cache-control", b"no-store"))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_headers)
