"""Events tokens: signed by the API, one session, one tenant, until they expire."""

from __future__ import annotations

import base64
import json

import pytest
from fastapi import HTTPException

from dispatcher.dependencies import token_caller
from dispatcher.event_tokens import (
    GRACE_S,
    Grant,
    InvalidToken,
    _b64,
    _mac,
    grant_for,
    issue,
    token_key,
    verify,
)
from shared.errors import MissingCredential
from shared.settings import Settings

KEY = b"k" * 32
SID = "6f1c1a2e-3b1d-4c55-9c0e-2d7a7b1f0a11"
OTHER = "0b8f0a8e-1111-4c55-9c0e-2d7a7b1f0a11"
NOW = 1_800_000_000.0


def _settings(**overrides: object) -> Settings:
    values: dict[str, object] = {"amqp_url": "amqp://x", "redis_url": "redis://x"}
    values["database_url"] = "postgresql://x"
    return Settings(**{**values, **overrides})  # type: ignore[arg-type]


def token(session_id: str = SID, expires: float = NOW + 60, key: bytes = KEY) -> str:
    return issue(key, Grant(session_id, "acme", 3, int(expires)))


def signed(fields: object, key: bytes = KEY) -> str:
    """A token signed under `key` whatever its payload's shape (as a holder of the key could)."""
    payload = json.dumps(fields).encode()
    return f"{_b64(payload)}.{_b64(_mac(key, payload))}"


@pytest.mark.parametrize(
    "fields",
    [
        [SID, "acme", "3", int(NOW + 60)],  # plan as a string
        [SID, "acme", 3],  # a field short
        [SID, "acme", 3, int(NOW + 60), "x"],  # one too many
        {"session_id": SID},  # not a list
        [SID, "acme", 0, int(NOW + 60)],  # no such plan
        [SID, "acme", 7, int(NOW + 60)],
        [SID, "acme", True, int(NOW + 60)],  # a boolean is no plan
        [SID, "acme", 3, float(NOW + 60)],
        [SID, 5, 3, int(NOW + 60)],
        "just a string",
    ],
)
def test_a_signed_token_of_the_wrong_shape_is_invalid(fields: object) -> None:
    """Correctly signed but not [session id, tenant, plan 1..6, expiry]: InvalidToken (401),
    never a server error."""
    with pytest.raises(InvalidToken):
        verify(KEY, signed(fields), SID, NOW)


def test_a_token_gives_back_its_session_tenant_and_plan() -> None:
    """What the API signed is what the stream is opened for."""
    assert verify(KEY, token(), SID, NOW) == Grant(SID, "acme", 3, int(NOW + 60))


def test_a_token_opens_only_its_own_session() -> None:
    """One session's link cannot be pointed at another's events."""
    with pytest.raises(InvalidToken, match="another session"):
        verify(KEY, token(), OTHER, NOW)


def test_an_expired_token_is_refused() -> None:
    """Past its expiry the link opens nothing, even for its own session."""
    with pytest.raises(InvalidToken, match="expired"):
        verify(KEY, token(expires=NOW), SID, NOW)


@pytest.mark.parametrize(
    "forged",
    [
        token(key=b"x" * 32),  # signed under another key
        token().split(".")[0] + "." + token(OTHER).split(".")[1],  # one payload, another's MAC
        "",
        "not-a-token",
        "%%%.%%%",
        "a" * 5000 + "." + "b",
    ],
)
def test_a_forged_altered_or_malformed_token_is_refused(forged: str) -> None:
    """Only a token made under the API's key, unaltered, passes."""
    with pytest.raises(InvalidToken):
        verify(KEY, forged, SID, NOW)


def test_a_tenant_cannot_be_swapped_in_the_payload() -> None:
    """The payload is covered by the MAC: a re-encoded payload naming another tenant fails."""
    payload, mac = token().split(".")
    fields = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    fields[1] = "other-tenant"
    swapped = base64.urlsafe_b64encode(json.dumps(fields).encode()).rstrip(b"=").decode()
    with pytest.raises(InvalidToken):
        verify(KEY, f"{swapped}.{mac}", SID, NOW)


def test_a_grant_lasts_the_sessions_deadline_and_a_grace() -> None:
    """Long enough to follow the session to its end and reconnect, no longer."""
    settings = _settings(session_deadline_s=120)
    assert grant_for(settings, SID, "acme", 2, NOW).expires == int(NOW + 120 + GRACE_S)


def test_a_bad_token_is_a_401_that_says_what_to_do() -> None:
    """The client learns why, and how to get a link that works."""
    with pytest.raises(HTTPException) as refused:
        token_caller(KEY, token(expires=NOW - 1), SID, NOW)
    assert refused.value.status_code == 401
    assert "expired" in refused.value.detail and "events_url" in refused.value.detail
    assert token_caller(KEY, token(), SID, NOW).tenant == "acme"


@pytest.mark.parametrize("weak", [None, "short", "change-me" + "x" * 40])
def test_the_api_refuses_to_start_without_a_real_events_token_key(weak: str | None) -> None:
    """EVENTS_TOKEN_KEY unset, short or still the placeholder: no key, no API."""
    with pytest.raises(MissingCredential, match="EVENTS_TOKEN_KEY"):
        token_key(_settings(events_token_key=weak))
    assert token_key(_settings(events_token_key="s" * 32)) == b"s" * 32
