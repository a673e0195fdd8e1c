"""The console's session cookie and CSRF tokens: signed with ADMIN_SESSION_KEY, pure.

The cookie carries a random nonce and, once signed in, the hash of the admin key used (as
API_KEYS holds it), never the key itself, so each request checks the key still has the admin
scope. A browser gets an anonymous cookie on the sign-in page so even the sign-in form
carries a CSRF token; signing in replaces it with a fresh nonce (no session fixation).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass

from itsdangerous import BadSignature, URLSafeTimedSerializer

COOKIE = "verdict_console"
# The cookie is sent only to the console's own paths.
COOKIE_PATH = "/admin"
# Separates the cookie's signatures from the CSRF tokens' (both from one key).
_COOKIE_SALT = "verdict-console-session"
_CSRF_CONTEXT = b"verdict-console-csrf:"


@dataclass(frozen=True)
class ConsoleSession:
    """A browser's console session: signed in with the key of `key_hash`, or not yet (None)."""

    nonce: str
    key_hash: str | None = None


class SessionCookies:
    """Makes and reads signed, expiring session cookies and the CSRF tokens bound to them."""

    def __init__(self, key: str, ttl_s: int) -> None:
        self._key = key.encode()
        self.ttl_s = ttl_s
        self._serializer = URLSafeTimedSerializer(key, salt=_COOKIE_SALT)

    def issue(self, key_hash: str | None = None) -> tuple[ConsoleSession, str]:
        """A new session under a fresh nonce, and the cookie value that carries it."""
        session = ConsoleSession(secrets.token_urlsafe(24), key_hash)
        return session, self._serializer.dumps({"n": session.nonce, "k": key_hash})

    def read(self, value: str | None, now: float | None = None) -> ConsoleSession | None:
        """The session a cookie value carries; None when absent, forged or expired.

        `now` (Unix seconds) stands in for the clock in tests."""
        if not value:
            return None
        try:
            if now is None:
                payload = self._serializer.loads(value, max_age=self.ttl_s)
            else:
                payload, signed_at = self._serializer.loads(value, return_timestamp=True)
                if now - signed_at.timestamp() > self.ttl_s:
                    return None
        except BadSignature:  # SignatureExpired is one too
            return None
        if not isinstance(payload, dict) or not isinstance(payload.get("n"), str):
            return None
        key_hash = payload.get("k")
        return ConsoleSession(payload["n"], key_hash if isinstance(key_hash, str) else None)

    def csrf_token(self, session: ConsoleSession) -> str:
        """The token every form of this session carries: an HMAC of its nonce."""
        message = _CSRF_CONTEXT + session.nonce.encode()
        return hmac.new(self._key, message, hashlib.sha256).hexdigest()

    def csrf_valid(self, session: ConsoleSession, token: str | None) -> bool:
        """Whether `token` is this session's CSRF token (compared in constant time)."""
        return bool(token) and hmac.compare_digest(self.csrf_token(session), str(token))
