"""Rate-limit policy without I/O: per-plan settings, RateLimit-* headers, audit fields."""

import hashlib

import pytest
from pydantic import ValidationError

from dispatcher.audit import presented_key, refusal_event
from dispatcher.ratelimits import Usage, headers, parse_plan_limits, retry_after_s
from shared.settings import Settings

URLS = {"amqp_url": "amqp://x", "redis_url": "redis://x", "database_url": "postgresql://x"}


def settings(**values):
    return Settings(**URLS, **values)


def test_every_plan_has_limits_and_caps_by_default_rising_with_the_plan():
    """Without configuration all six plans are limited, and a higher plan never gets less."""
    s = settings()
    for by_plan in (s.rate_limits_by_plan, s.read_rate_limits_by_plan):
        parsed = parse_plan_limits(by_plan)
        assert sorted(parsed) == [1, 2, 3, 4, 5, 6]
        per_minute = [next(w.amount for w in parsed[p] if w.get_expiry() == 60) for p in parsed]
        assert per_minute == sorted(per_minute)
    caps = [s.max_in_flight_by_plan[p] for p in range(1, 7)]
    assert caps == sorted(caps) and caps[-1] < s.queue_max_length


def test_a_partial_override_changes_only_the_plans_it_names(monkeypatch):
    """RATE_LIMITS_BY_PLAN='{"1": "2/second"}' limits freemium and keeps the other defaults."""
    monkeypatch.setenv("RATE_LIMITS_BY_PLAN", '{"1": "2/second"}')
    monkeypatch.setenv("MAX_IN_FLIGHT_BY_PLAN", '{"6": 7}')
    s = settings()
    assert s.rate_limits_by_plan[1] == "2/second"
    assert s.rate_limits_by_plan[6] == Settings.DEFAULT_RATE_LIMITS[6]
    assert s.max_in_flight_by_plan[6] == 7 and s.max_in_flight_by_plan[1] == 20
    windows = parse_plan_limits(s.rate_limits_by_plan)[1]
    assert [(w.amount, w.get_expiry()) for w in windows] == [(2, 1)]


@pytest.mark.parametrize(
    "values",
    [
        {"rate_limits_by_plan": {"7": "1/second"}},
        {"read_rate_limits_by_plan": {"1": "plenty"}},
        {"auth_failure_limit": "ten a minute"},
        {"max_in_flight_by_plan": {"1": 0}},
    ],
)
def test_malformed_quota_settings_stop_the_process_at_start_up(values):
    """An unknown plan, a limit that does not parse or a zero cap is a settings error."""
    with pytest.raises(ValidationError):
        settings(**values)


def test_headers_describe_the_window_closest_to_exhaustion():
    """RateLimit-Limit/Remaining/Reset come from the tightest window; Policy lists them all."""
    usages = [Usage(10, 1, 3, 0.4), Usage(300, 60, 299, 41.2)]
    fields = dict(headers(usages))
    assert fields[b"ratelimit-limit"] == b"300"
    assert fields[b"ratelimit-remaining"] == b"1"
    assert fields[b"ratelimit-reset"] == b"42"
    assert fields[b"ratelimit-policy"] == b"10;w=1, 300;w=60"
    assert retry_after_s(usages) is None


def test_a_refusal_waits_until_every_exceeded_window_has_reset():
    """Retry-After is the latest reset among exceeded windows, in whole seconds, at least 1."""
    both = [Usage(10, 1, 11, 0.3), Usage(300, 60, 301, 12.5)]
    assert retry_after_s(both) == 13
    assert dict(headers(both))[b"ratelimit-reset"] == b"13"
    assert dict(headers(both))[b"ratelimit-remaining"] == b"0"
    assert retry_after_s([Usage(10, 1, 11, 0.0)]) == 1
    assert headers([]) == []


def test_an_audit_event_names_the_key_by_a_digest_prefix_only():
    """The event has status, reason, route, address, tenant and 8 hex digits of the key's hash."""
    key = "sk-live-very-secret"
    scope = {
        "type": "http",
        "method": "GET",
        "path": "/api/v3/pipeline/abc/result",
        "query_string": b"token=also-secret",
        "client": ("203.0.113.9", 5555),
        "headers": [(b"authorization", f"Bearer {key}".encode())],
    }
    event = refusal_event(scope, 429, {"tenant": "acme", "reason": "rate_limited_read"})
    assert event == {
        "status": 429,
        "reason": "rate_limited_read",
        "method": "GET",
        "path": "/api/v3/pipeline/abc/result",
        "client": "203.0.113.9",
        "tenant": "acme",
        "key_hash": hashlib.sha256(key.encode()).hexdigest()[:8],
    }
    assert "secret" not in repr(event)


def test_a_refusal_without_a_handler_note_gets_the_status_reason():
    """FastAPI's own 404 (no such route) is audited as not_found, with no tenant and no key."""
    event = refusal_event(
        {"type": "http", "method": "GET", "path": "/nope", "headers": []}, 404, {}
    )
    assert event["reason"] == "not_found" and event["tenant"] is None
    assert event["key_hash"] is None and event["client"] is None
    assert presented_key({b"x-api-key": b"k1", b"authorization": b"Bearer k2"}) == "k1"


def test_a_refused_path_cannot_write_lines_or_escapes_into_the_log():
    """A path with a newline or a terminal escape is logged escaped, as one line of text."""
    scope = {"type": "http", "method": "GET", "path": "/x\nforged event\x1b[2J", "headers": []}
    path = refusal_event(scope, 404, {})["path"]
    assert "\n" not in path and "\x1b" not in path
    assert path == "/x\\nforged event\\x1b[2J"


def test_the_audit_names_the_key_authentication_read_when_one_is_repeated():
    """Two X-API-Key headers: authentication reads the first, so the audit hashes the first."""
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/api/v3/pipeline/analyze-async",
        "headers": [(b"x-api-key", b"wrong"), (b"x-api-key", b"the-valid-one")],
    }
    event = refusal_event(scope, 401, {})
    assert event["key_hash"] == hashlib.sha256(b"wrong").hexdigest()[:8]
