"""Links to one session's events for clients that cannot send an API key (pure).

A browser's `EventSource` sends no headers of its own choosing, so the POST that accepts a
session hands back an `events_url` carrying a token: the session id, its tenant and plan, and
an expiry, signed with HMAC-SHA256 under EVENTS_TOKEN_KEY, which the API alone holds. The
token opens that session's event stream and nothing else: every other route wants a key.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from dataclasses import dataclass

from shared.constants import PLANS
from shared.errors import MissingCredential
from shared.settings import MIN_SECRET_CHARS, Settings, is_placeholder

# Opens what a token's MAC covers, so no other HMAC made under the same key could pass for one.
_LABEL = b"verdict events token v1\n"
# A token outlives its session's deadline by this much: time to reconnect and read the result.
GRACE_S = 300


class InvalidToken(ValueError):
    """Raised when an events token is malformed, forged, expired or for another session."""


@dataclass(frozen=True)
class Grant:
    """What a valid token lets its bearer read: one session of one tenant, until `expires`."""

    session_id: str
    tenant: str
    plan: int
    expires: int  # Unix time, seconds


def token_key(settings: Settings) -> bytes:
    """The API's events token key; the API does not start without a real one."""
    secret = settings.events_token_key.get_secret_value() if settings.events_token_key else ""
    if len(secret) < MIN_SECRET_CHARS or is_placeholder(secret):
        raise MissingCredential(
            f"EVENTS_TOKEN_KEY is not set, or is a placeholder or shorter than "
            f"{MIN_SECRET_CHARS} characters (`verdict keys signing` makes one)"
        )
    return secret.encode()


def grant_for(settings: Settings, session_id: str, tenant: str, plan: int, now: float) -> Grant:
    """A grant that lasts as long as the session may run, and GRACE_S more."""
    return Grant(session_id, tenant, plan, int(now + settings.deadline_s(plan) + GRACE_S))


def issue(key: bytes, grant: Grant) -> str:
    """The token for `grant`: its fields as JSON and their MAC, each base64url, dot-joined."""
    fields = [grant.session_id, grant.tenant, grant.plan, grant.expires]
    payload = json.dumps(fields, separators=(",", ":")).encode()
    return f"{_b64(payload)}.{_b64(_mac(key, payload))}"


def verify(key: bytes, token: str, session_id: str, now: float) -> Grant:
    """The grant of a token signed under `key` for `session_id` and not expired at `now`."""
    encoded, _, encoded_mac = token.partition(".")
    try:
        payload, mac = _unb64(encoded), _unb64(encoded_mac)
    except (binascii.Error, ValueError) as exc:
        raise InvalidToken("not an events token") from exc
    if not hmac.compare_digest(mac, _mac(key, payload)):
        raise InvalidToken("not an events token")
    grant = _grant(payload)
    if grant.session_id != session_id:
        raise InvalidToken("this events token is for another session")
    if grant.expires <= now:
        raise InvalidToken("this events token has expired")
    return grant


def _grant(payload: bytes) -> Grant:
    """The grant a signed payload holds: exactly [session id, tenant, plan 1..6, expiry]."""
    try:
        fields = json.loads(payload)
    except ValueError as exc:  # UnicodeDecodeError is one too
        raise InvalidToken("not an events token") from exc
    if not (isinstance(fields, list) and [type(f) for f in fields] == [str, str, int, int]):
        raise InvalidToken("not an events token")
    grant = Grant(*fields)
    if grant.plan not in PLANS:
        raise InvalidToken("not an events token")
    return grant


def _mac(key: bytes, payload: bytes) -> bytes:
    return hmac.new(key, _LABEL + payload, hashlib.sha256).digest()


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    if not text or len(text) > 2048:
        raise ValueError("empty or too long")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
