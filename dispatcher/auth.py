"""API keys: each maps to a tenant and the highest plan it may use."""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from dataclasses import dataclass

from fastapi import HTTPException, Request, status

from shared.settings import Settings


@dataclass(frozen=True)
class Caller:
    tenant: str
    plan: int


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
    for known, grant in settings.api_keys.items():
        if hmac.compare_digest(known.encode(), key.encode()):
            return Caller(grant.tenant, grant.plan)
    raise HTTPException(status.HTTP_401_UNAUTHORIZED, "unknown API key")


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
