"""An audit trail of refused requests: who was turned away, from where, and why; no secrets.

Every 401, 403, 404 and 429 is logged as one structured `audit.refused` event, whether the
refusal came from our handlers or from FastAPI itself (an unknown route). A key appears only
as a short prefix of its SHA-256 digest: enough to tell one key's attempts from another's,
never enough to use or to rebuild it. Request bodies are never logged.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from contextvars import ContextVar
from typing import Any

import structlog
from prometheus_client import Counter
from starlette.types import ASGIApp, Message, Receive, Scope, Send

REFUSALS = Counter(
    "verdict_api_refusals_total",
    "Requests the API refused, by status and reason",
    ["status", "reason"],
)

AUDITED_STATUSES = frozenset({400, 401, 403, 404, 429})
# Why a request was refused when the handler that refused it did not say.
DEFAULT_REASONS = {401: "unauthenticated", 403: "forbidden", 404: "not_found", 429: "throttled"}
# What the code that refused the current request noted about it (`note`), for the audit.
_NOTES: ContextVar[dict[str, Any] | None] = ContextVar("refusal_notes", default=None)
# Hex digits of a key's digest in the log: tells keys apart without weakening them.
KEY_HASH_CHARS = 8
# Paths are client input: long ones are cut, so a log line stays small.
MAX_PATH_CHARS = 200


def key_digest(key: str) -> str:
    """What may be stored or logged about an API key: its SHA-256 digest, hex."""
    return hashlib.sha256(key.encode()).hexdigest()


def first_values(headers: Iterable[tuple[bytes, bytes]]) -> dict[bytes, bytes]:
    """Each header's first value: what authentication reads when a header is repeated."""
    first: dict[bytes, bytes] = {}
    for name, value in headers:
        first.setdefault(name, value)
    return first


def presented_key(headers: Mapping[bytes, bytes]) -> str | None:
    """The key a request presented (`X-API-Key`, else `Authorization: Bearer`), as auth reads it."""
    key = headers.get(b"x-api-key", b"")
    if key:
        return key.decode("latin-1")
    scheme, _, token = headers.get(b"authorization", b"").decode("latin-1").partition(" ")
    return token if scheme.lower() == "bearer" and token else None


def note(*, reason: str | None = None, tenant: str | None = None) -> None:
    """Record why the current request is refused, or whose it is, should it be refused."""
    notes = _NOTES.get()
    if notes is not None:
        notes.update({k: v for k, v in (("reason", reason), ("tenant", tenant)) if v})


def refusal_event(scope: Scope, status: int, notes: Mapping[str, Any]) -> dict[str, Any]:
    """The audit fields of a refused request: no key, no body, no query string."""
    client = scope.get("client")
    key = presented_key(first_values(scope.get("headers") or ()))
    return {
        "status": status,
        "reason": notes.get("reason") or DEFAULT_REASONS.get(status, "refused"),
        "method": scope.get("method"),
        # Escaped: a path is the client's text, and a console log must not take its newlines
        # or terminal escapes as its own.
        "path": str(scope.get("path", ""))[:MAX_PATH_CHARS].encode("unicode_escape").decode(),
        "client": client[0] if client else None,
        "tenant": notes.get("tenant"),
        "key_hash": key_digest(key)[:KEY_HASH_CHARS] if key else None,
    }


class RefusalAudit:
    """Plain-ASGI middleware: logs `audit.refused` when a response starts with a refusal status.

    It only looks at the status of the response start; nothing is buffered or re-read."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.log = structlog.get_logger("verdict.audit")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        notes: dict[str, Any] = {}

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] in AUDITED_STATUSES:
                event = refusal_event(scope, message["status"], notes)
                REFUSALS.labels(event["status"], event["reason"]).inc()
                self.log.info("audit.refused", **event)
            await send(message)

        # Handlers run in this task, so they see the variable; the dict is this request's.
        token = _NOTES.set(notes)
        try:
            await self.app(scope, receive, watch)
        finally:
            _NOTES.reset(token)
