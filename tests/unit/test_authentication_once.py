"""The API key is looked up once per request: the guard's outcome is what the route uses."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from fastapi import HTTPException
from redis.asyncio import Redis
from starlette.requests import Request

from dispatcher.app import create_app
from dispatcher.auth import Caller, authenticated
from dispatcher.quotas import Quotas
from dispatcher.tenancy import SessionTenants
from shared.api_keys import hashed
from shared.house import redis_house
from shared.settings import Settings

API = "/api/v3/pipeline"
KNOWN = {"X-API-Key": "key-a"}


class CountingKeys(dict[str, Any]):
    """API keys that count how often they are searched (`authenticate` looks a hash up)."""

    lookups = 0

    def get(self, key: str, default: Any = None) -> Any:
        self.lookups += 1
        return super().get(key, default)


@dataclass
class Offline:
    """The parts of the app state these requests reach, none of which does I/O here."""

    settings: Settings
    quotas: Quotas
    tenants: SessionTenants


@pytest.fixture
async def keys() -> CountingKeys:
    return CountingKeys()


@pytest.fixture
async def api(keys: CountingKeys) -> AsyncIterator[httpx.AsyncClient]:
    """The real app (guard, quotas, routes) over a state without services; quotas off, so no
    rate limit needs Redis, and a session id that is no UUID is 404 without Postgres."""
    settings = Settings(
        amqp_url="amqp://127.0.0.1:1/",
        redis_url="redis://127.0.0.1:1/",
        database_url="postgresql://127.0.0.1:1/x",
        api_keys=hashed({"key-a": {"tenant": "acme", "plan": 6}}),  # type: ignore[arg-type]
        quotas_enabled=False,
        max_content_chars=10,
    )
    keys.update(settings.api_keys)
    settings = settings.model_copy(update={"api_keys": keys})
    redis = Redis.from_url(settings.redis_url)
    app = create_app(settings)
    app.state.pipeline = Offline(
        settings, Quotas(settings, redis_house(redis), pool=None), SessionTenants(pool=None, size=1)
    )  # type: ignore[arg-type]
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
        yield client
    await redis.aclose()


@pytest.mark.parametrize(
    ("method", "path", "headers", "content", "code"),
    [
        ("GET", f"{API}/not-a-session/queue-status", KNOWN, None, 404),
        ("GET", f"{API}/not-a-session/result", {"X-API-Key": "unknown"}, None, 401),
        ("POST", f"{API}/analyze-async", KNOWN, b'{"content": "far too long"}', 413),
        ("POST", f"{API}/analyze-async", KNOWN, b'{"content": ', 422),
        ("POST", f"{API}/analyze-async", {"Authorization": "Bearer nope"}, b"{}", 401),
    ],
)
async def test_a_request_costs_one_key_lookup(
    api: httpx.AsyncClient,
    keys: CountingKeys,
    method: str,
    path: str,
    headers: dict[str, str],
    content: bytes | None,
    code: int,
) -> None:
    """Known or unknown key, with a body or without, the route answers after one lookup."""
    json = {"Content-Type": "application/json"} if content is not None else {}
    response = await api.request(method, path, headers=headers | json, content=content)
    assert response.status_code == code, response.text
    assert keys.lookups == 1


def _request(headers: dict[str, str]) -> Request:
    raw = [(k.lower().encode(), v.encode()) for k, v in headers.items()]
    return Request({"type": "http", "method": "GET", "path": "/other", "headers": raw})


def test_a_path_the_guard_did_not_check_is_authenticated_by_the_route() -> None:
    """Without the guard's outcome in the request's state the key is looked up there."""
    settings = Settings(
        amqp_url="amqp://x",
        redis_url="redis://x",
        database_url="postgresql://x",
        api_keys=hashed({"key-a": {"tenant": "acme", "plan": 3}}),  # type: ignore[arg-type]
    )
    assert authenticated(_request(KNOWN), settings) == Caller("acme", 3)
    with pytest.raises(HTTPException) as refused:
        authenticated(_request({"X-API-Key": "other"}), settings)
    assert refused.value.status_code == 401


def test_a_key_carries_its_scopes_and_unknown_scopes_are_refused():
    from pydantic import ValidationError

    from shared.settings import ApiKey

    admin_key = ApiKey(tenant="ops", plan=1, scopes=frozenset({"admin"}))
    assert "admin" in admin_key.scopes
    assert ApiKey(tenant="t", plan=1).scopes == frozenset()
    with pytest.raises(ValidationError, match="unknown API key scope"):
        ApiKey(tenant="t", plan=1, scopes=frozenset({"root"}))


def test_only_an_admin_key_is_let_through_as_admin():
    import asyncio

    from fastapi import HTTPException

    from dispatcher.dependencies import admin

    assert asyncio.run(admin(Caller("ops", 1, frozenset({"admin"})))).is_admin
    with pytest.raises(HTTPException) as refused:
        asyncio.run(admin(Caller("acme", 6)))
    assert refused.value.status_code == 403


def test_each_key_is_named_apart_from_its_tenants_other_keys():
    """Two keys of one tenant give two stable labels, `tenant/` and 8 hex digits of the key's
    hash (never the key), the same on every lookup; a caller without a key has none."""
    from dispatcher.auth import authenticate
    from shared.api_keys import key_hash, key_label

    settings = Settings(
        amqp_url="amqp://x",
        redis_url="redis://x",
        database_url="postgresql://x",
        api_keys=hashed(  # type: ignore[arg-type]
            {"key-a": {"tenant": "ops", "plan": 1}, "key-b": {"tenant": "ops", "plan": 1}}
        ),
    )
    a, b = authenticate(settings, "key-a"), authenticate(settings, "key-b")
    assert a.key_label != b.key_label
    assert (
        a.key_label == authenticate(settings, "key-a").key_label == f"ops/{key_hash('key-a')[7:15]}"
    )
    assert key_label("ops", key_hash("key-a")) == a.key_label
    assert "key-a" not in a.key_label
    with pytest.raises(AssertionError):
        _ = Caller("ops", 1).key_label
