"""Dead letters that always fit: bounded headers, size bounds and reason classes (pure).

A dead letter must never fail to publish. RabbitMQ cannot split a content header frame, so
a header table past the connection's `frame_max` (128 KiB by default) makes the broker close
the whole connection, and the message comes back to crash the component again. Two rules
keep every dead letter small: what we add to one is a fixed whitelist of short,
type-checked headers, and a delivery too big to handle is rejected unread, so the broker
dead-letters it through its queue's `x-dead-letter-*` route without our republishing it.
The I/O around these (`send_to_dlq`, `reject_oversize`) is in shared/broker.py.

A copy parked in a retry tier while the DLQ is full carries the reason and kind it is to be
dead-lettered with when it returns, under an HMAC of the parking process's role (a worker:
its component's result key; an aggregator: a key derived from all of them). Every process
may write to the retry tiers, so a marker is honoured only when its MAC holds.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from datetime import datetime
from decimal import Decimal
from typing import Any, Final, Literal

from shared.constants import (
    ATTEMPT_HEADER,
    DEAD_AT_HEADER,
    ORIGIN_HEADER,
    PARKED_HEADER,
    PARKED_KIND_HEADER,
    PARKED_MAC_HEADER,
    REASON_HEADER,
    REPLAYS_HEADER,
    TENANT_HEADER,
)

# Why a message was dead-lettered: a small fixed set, so the metric's cardinality is bounded.
# poison: unreadable or misrouted; oversize: over a size bound, rejected to the broker's
# dead-letter route; failed: a task given up on; refused: a result Postgres cannot store;
# unauthenticated: a task or result whose signature does not hold (forged or altered);
# unknown_session: a result for a session PostgreSQL has no record of (withdrawn, or a task
# published by another dispatcher), kept for an operator rather than dropped.
DeadLetterKind = Literal[
    "poison", "oversize", "failed", "refused", "unauthenticated", "unknown_session"
]
KINDS: Final[tuple[DeadLetterKind, ...]] = (
    "poison",
    "oversize",
    "failed",
    "refused",
    "unauthenticated",
    "unknown_session",
)

# Session ids, component names and routing keys are far shorter; anything longer is noise.
MAX_VALUE_CHARS: Final = 256
# Enough for a validation error or an exception message, small beside any frame limit.
MAX_REASON_CHARS: Final = 500
# Opens what a parked copy's MAC covers, so no other message signed under the same key (a
# worker parks under its result key) can carry a MAC that passes for a parking one.
_PARKING_LABEL: Final = "verdict parked letter v1"
# The original headers a dead letter keeps, with the type each must have: what an operator
# needs to see where it came from, and what `verdict dlq replay` needs to send it back.
KEPT_HEADERS: Final[Mapping[str, type]] = {
    "sessionId": str,
    "component": str,
    "planType": int,
    ATTEMPT_HEADER: int,
    TENANT_HEADER: str,
    # Kept, so a letter that comes back after a replay keeps its count and a loop shows.
    REPLAYS_HEADER: int,
}
# What a task keeps from its delivery when a worker republishes it as a new attempt.
CARRIED_HEADERS: Final = (TENANT_HEADER, REPLAYS_HEADER)


def dead_letter_headers(
    original: Mapping[str, Any], reason: str, origin: str, dead_at_ms: int
) -> dict[str, Any]:
    """The header table of a dead letter: whitelisted originals of the right type, cut short,
    plus the reason, origin and time; never the original's other headers."""
    kept = {
        name: _bounded(original[name])
        for name, kind in KEPT_HEADERS.items()
        if _is(original.get(name), kind)
    }
    return {
        **kept,
        REASON_HEADER: reason[:MAX_REASON_CHARS],
        ORIGIN_HEADER: origin[:MAX_VALUE_CHARS],
        DEAD_AT_HEADER: dead_at_ms,
    }


def carried_headers(original: Mapping[str, Any] | None) -> dict[str, Any]:
    """The headers a retried task carries over from its delivery (tenant, replay count), so
    a replayed task that fails again is dead-lettered with its count."""
    return {
        name: _bounded(value)
        for name in CARRIED_HEADERS
        if _is(value := (original or {}).get(name), KEPT_HEADERS[name])
    }


def _is(value: object, kind: type) -> bool:
    return isinstance(value, kind) and not isinstance(value, bool)


def _bounded(value: Any) -> Any:
    return value[:MAX_VALUE_CHARS] if isinstance(value, str) else value


# Encoded size of each AMQP field-value type past its one-byte tag (the widest integer form).
_FIXED_SIZE: Final[tuple[tuple[type, int], ...]] = (
    (bool, 1),
    (int, 8),
    (float, 8),
    (Decimal, 5),
    (datetime, 8),
)


def header_bytes(headers: Mapping[str, Any] | None) -> int:
    """An upper estimate of the AMQP encoding of a header table, nested tables and arrays
    included. Iterative, so hostile nesting cannot exhaust the stack."""
    total = 0
    pending: list[Any] = [headers or {}]
    while pending:
        value = pending.pop()
        if isinstance(value, Mapping):
            total += 4  # the table's length prefix
            for key, item in value.items():
                total += 1 + len(str(key).encode()) + 1  # key length, key, value tag
                pending.append(item)
        elif isinstance(value, list | tuple):
            total += 4
            total += len(value)  # a tag per element
            pending.extend(value)
        else:
            total += _scalar_bytes(value)
    return total


def _scalar_bytes(value: object) -> int:
    if value is None:
        return 0
    if isinstance(value, bytes | bytearray):
        return 4 + len(value)
    for kind, size in _FIXED_SIZE:
        if isinstance(value, kind):
            return size
    return 4 + len(str(value).encode())


def oversize(
    body: bytes, headers: Mapping[str, Any] | None, max_body: int, max_headers: int
) -> str | None:
    """Why a delivery is too big to handle, or None when it is within both bounds."""
    if len(body) > max_body:
        return f"body of {len(body)} bytes exceeds {max_body}"
    size = header_bytes(headers)
    if size > max_headers:
        return f"headers of about {size} bytes exceed {max_headers}"
    return None


def parking_headers(
    original: Mapping[str, Any] | None,
    reason: str,
    kind: DeadLetterKind,
    body: bytes,
    key: bytes,
) -> dict[str, Any]:
    """The headers of a copy parked while the DLQ is full: its own, and what to do with it
    when it returns (be dead-lettered with this reason), authenticated under `key`."""
    reason = reason[:MAX_REASON_CHARS]
    return {
        **(original or {}),
        PARKED_HEADER: reason,
        PARKED_KIND_HEADER: kind,
        PARKED_MAC_HEADER: parking_mac(key, reason, kind, body),
    }


def parked_letter(
    headers: Mapping[str, Any] | None, body: bytes, key: bytes
) -> tuple[str, DeadLetterKind] | None:
    """(reason, kind) when these are the headers of a copy parked under `key` with this
    body, else None: a marker without a valid MAC is no parked letter."""
    reason = (headers or {}).get(PARKED_HEADER)
    kind = (headers or {}).get(PARKED_KIND_HEADER)
    mac = (headers or {}).get(PARKED_MAC_HEADER)
    if not isinstance(reason, str) or kind not in KINDS or not isinstance(mac, str):
        return None
    if not hmac.compare_digest(parking_mac(key, reason, kind, body), mac):
        return None
    return reason, kind


def marked_as_parked(headers: Mapping[str, Any] | None) -> bool:
    """Whether the headers claim a parked letter at all, genuine or not."""
    return PARKED_HEADER in (headers or {})


def parking_mac(key: bytes, reason: str, kind: str, body: bytes) -> str:
    """HMAC-SHA256 over the reason, kind and body digest of a parked copy; its payload is a
    labelled JSON array, so it can never be the JSON object a result signature covers."""
    digest = hashlib.sha256(body).hexdigest()
    payload = json.dumps([_PARKING_LABEL, reason, kind, digest]).encode()  # ASCII: always encodes
    return hmac.new(key, payload, hashlib.sha256).hexdigest()


def dead_letter_kind(name: str) -> DeadLetterKind:
    """`name` as a kind; anything unknown counts as poison."""
    for kind in KINDS:
        if kind == name:
            return kind
    return "poison"
