"""The console's session cookie and CSRF tokens: signed with ADMIN_SESSION_KEY, pure.

The cookie carries a random nonce and, once signed in, a tag of the admin key used: an HMAC
under ADMIN_SESSION_KEY of the key's hash, never the key nor the hash API_KEYS verifies it by
(readable in the browser, that hash would let anyone who sees it test guesses of the key
offline), so each request finds the key by its tag and checks it still has the admin scope.
A browser gets an anonymous cookie on the sign-in page so even the sign-in form carries a
CSRF token; signing in replaces it with a fresh nonce (no session fixation).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass, field

from itsdangerous import BadSignature, URLSafeTimedSerializer

COOKIE = "verdict_console"
# The cookie is sent only to the console's own paths.
COOKIE_PATH = "/admin"
# Separates the cookie's signatures from the CSRF tokens' (both from one key).
_COOKIE_SALT = "verdict-console-session"
_CSRF_CONTEXT = b"verdict-console-csrf:"
_KEY_TAG_CONTEXT = b"verdict-console-key:"


@dataclass(frozen=True)
class ConsoleSession:
    """A browser's console session: signed in with the key tagged `key_tag`, or not yet (None),
    its cookie signed at `issued_at` (Unix seconds; 0 for a session not read from a cookie)."""

    nonce: str
    key_tag: str | None = None
    issued_at: float = field(default=0.0, compare=False)


class SessionCookies:
    """Makes and reads signed, expiring session cookies and the CSRF tokens bound to them."""

    def __init__(self, key: str, ttl_s: int) -> None:
        self._key = key.encode()
        self.ttl_s = ttl_s
        self._serializer = URLSafeTimedSerializer(key, salt=_COOKIE_SALT)

    def issue(self, key_hash: str | None = None) -> tuple[ConsoleSession, str]:
        """A new session under a fresh nonce (signed in with the key of `key_hash`, as API_KEYS
        holds it), and the cookie value that carries it."""
        tag = self.key_tag(key_hash) if key_hash is not None else None
        session = ConsoleSession(secrets.token_urlsafe(24), tag)
        return session, self._serializer.dumps({"n": session.nonce, "k": tag})

    def key_tag(self, key_hash: str) -> str:
        """What a cookie carries for the key of `key_hash`: an HMAC of it, not the hash."""
        return hmac.new(self._key, _KEY_TAG_CONTEXT + key_hash.encode(), hashlib.sha256).hexdigest()

    def remaining_s(self, session: ConsoleSession, now: float) -> int:
        """How long the session's cookie stays valid after `now` (at least 1 s)."""
        return max(1, int(session.issued_at + self.ttl_s - now) + 1)

    def read(self, value: str | None, now: float | None = None) -> ConsoleSession | None:
        """The session a cookie value carries; None when absent, forged or expired.

        `now` (Unix seconds) stands in for the clock in tests."""
        if not value:
            return None
        try:
            payload, signed_at = self._serializer.loads(value, return_timestamp=True)
        except BadSignature:
            return None
        issued_at = signed_at.timestamp()
        if (time.time() if now is None else now) - issued_at > self.ttl_s:
            return None
        if not isinstance(payload, dict) or not isinstance(payload.get("n"), str):
            return None
        tag = payload.get("k")
        return ConsoleSession(payload["n"], tag if isinstance(tag, str) else None, issued_at)

    def csrf_token(self, session: ConsoleSession) -> str:
        """The token every form of this session carries: an HMAC of its nonce."""
        message = _CSRF_CONTEXT + session.nonce.encode()
        return hmac.new(self._key, message, hashlib.sha256).hexdigest()

    def csrf_valid(self, session: ConsoleSession, token: str | None) -> bool:
        """Whether `token` is this session's CSRF token (compared in constant time)."""
        return bool(token) and hmac.compare_digest(self.csrf_token(session), str(token))
