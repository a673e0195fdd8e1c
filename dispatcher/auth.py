"""API keys: each maps to a tenant and the highest plan it may use; only their hashes are
configured (shared/api_keys.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from fastapi import HTTPException, Request, status
from starlette.types import Scope

from shared.api_keys import key_hash, key_label
from shared.settings import ADMIN_SCOPE, Settings

# Where RequestGuard leaves what authenticating a request's key gave (a Caller, or the 401
# refusal) in the ASGI scope's state, `request.state`: the route asks it, not the keys again.
CALLER = "caller"


@dataclass(frozen=True)
class Caller:
    tenant: str
    plan: int
    scopes: frozenset[str] = frozenset()
    # The hash of the key presented ("" for an events token): who, not only which tenant.
    key_hash: str = field(default="", compare=False, repr=False)
    # An events token's expiry (Unix time, None for a key): its streams end then.
    until: float | None = field(default=None, compare=False)

    @property
    def is_admin(self) -> bool:
        return ADMIN_SCOPE in self.scopes

    @property
    def key_label(self) -> str:
        """The key's name in records of who did what (`shared.api_keys.key_label`)."""
        assert self.key_hash, "a caller without a key has no key label"
        return key_label(self.tenant, self.key_hash)


def key_from(request: Request) -> str | None:
    """The key from `X-API-Key` or `Authorization: Bearer …`."""
    return key_in(request.headers)


def key_in(headers: Mapping[str, str]) -> str | None:
    """`key_from` for bare headers (the ASGI layer checks keys before a body is read)."""
    key = headers.get("x-api-key")
    if key:
        return key
    scheme, _, token = headers.get("authorization", "").partition(" ")
    return token if scheme.lower() == "bearer" and token else None


def authenticate(settings: Settings, key: str | None) -> Caller:
    """The caller a key belongs to; 401 when the key is missing or unknown."""
    if not key:
        raise HTTPException(status.HTTP_401_UNAUTHORIZED, "missing API key (X-API-Key header)")
    hashed_key = key_hash(key)
    grant = settings.api_keys.get(hashed_key)
    if grant is None:
        raise HTTPException(status.HTTP_401_UNAUTHORIZED, "unknown API key")
    return Caller(grant.tenant, grant.plan, grant.scopes, hashed_key)


def remember_caller(scope: Scope, outcome: Caller | HTTPException) -> None:
    """Keep the outcome of authenticating this request for `authenticated`."""
    scope.setdefault("state", {})[CALLER] = outcome


def authenticated(request: Request, settings: Settings) -> Caller:
    """The request's caller as the guard authenticated it; looked up here only on a path the
    guard does not check. 401 when the key is missing or unknown."""
    outcome: Caller | HTTPException | None = getattr(request.state, CALLER, None)
    if outcome is None:
        return authenticate(settings, key_from(request))
    if isinstance(outcome, HTTPException):
        raise outcome
    return outcome


def effective_plan(caller: Caller, requested: int | None) -> int:
    """The plan of the key, lowered by a body `plan_type`; raising it is refused."""
    if requested is None:
        return caller.plan
    if requested > caller.plan:
        raise HTTPException(
            status.HTTP_403_FORBIDDEN,
            f"plan_type {requested} is above this key's plan {caller.plan}; it may only lower it",
        )
    return requested
