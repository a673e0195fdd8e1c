"""Quotas over HTTP against the real API, Redis and Postgres: rate limits per key and plan,
the throttle on guessed keys, the in-flight cap, fail-open without Redis, and the audit log."""

import contextlib
import hashlib
import uuid
from urllib.parse import urlsplit, urlunsplit

import httpx
import pytest
from structlog.testing import capture_logs

from dispatcher.app import create_app
from dispatcher.quotas import UNCHECKED
from shared.api_keys import hashed
from tests.integration.conftest import eventually, on_both_transports, queue_depths
from tests.proxy import Proxy

pytestmark = [pytest.mark.integration, on_both_transports]

API = "/api/v3/pipeline"
SUBMIT = f"{API}/analyze-async"


def keys(**plans):
    """API keys named after their tenant, each tenant unique to this test: {name: (key, tenant)}."""
    run = uuid.uuid4().hex[:8]
    return {
        name: (f"key-{name}-{run}", f"tenant-{name}-{run}", plan) for name, plan in plans.items()
    }


def api_keys(granted):
    return hashed({key: {"tenant": tenant, "plan": plan} for key, tenant, plan in granted.values()})


def auth(granted, name):
    return {"X-API-Key": granted[name][0]}


@contextlib.asynccontextmanager
async def serving(settings):
    """The API app with its lifespan running and the broker connected."""
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        state = app.state.pipeline

        async def connected():
            return state.publisher is not None

        await eventually(connected, 10)
        yield app


def client(app, address="127.0.0.1"):
    """An HTTP client whose requests come from `address`."""
    transport = httpx.ASGITransport(app=app, client=(address, 40000))
    return httpx.AsyncClient(transport=transport, base_url="http://api")


async def sessions_of(pool, granted, name):
    return await pool.fetchval("SELECT count(*) FROM sessions WHERE tenant = $1", granted[name][1])


async def submit(api, granted, name, n, **headers):
    return [
        await api.post(
            SUBMIT, json={"text": f"probe {i}"}, headers={**auth(granted, name), **headers}
        )
        for i in range(n)
    ]


async def test_submissions_over_the_plan_limit_get_429_and_leave_nothing_behind(world, pool, redis):
    """Past its plan's limit a key gets 429 + Retry-After + RateLimit-*; no row, no task.

    A higher plan has a higher limit, and another tenant on the same plan has its own bucket.
    The counters live under the deployment's prefix (in Redis, or PostgreSQL without it),
    named by a digest of the key, never the key."""
    granted = keys(free_a=1, free_b=1, pro=4)
    settings = await world(
        api_keys=api_keys(granted), rate_limits_by_plan={1: "3/minute", 4: "6/minute"}
    )
    async with serving(settings) as app, client(app) as api:
        free_a = await submit(api, granted, "free_a", 5)
        free_b = await submit(api, granted, "free_b", 3)
        pro = await submit(api, granted, "pro", 7)

    assert [r.status_code for r in free_a] == [202, 202, 202, 429, 429]
    assert [r.headers["RateLimit-Remaining"] for r in free_a] == ["2", "1", "0", "0", "0"]
    assert {r.headers["RateLimit-Limit"] for r in free_a} == {"3"}
    assert all(1 <= int(r.headers["RateLimit-Reset"]) <= 60 for r in free_a)
    refused = free_a[3]
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    assert int(refused.headers["RateLimit-Reset"]) == int(refused.headers["Retry-After"])
    assert refused.headers["RateLimit-Policy"] == "3;w=60"
    assert "rate limit" in refused.json()["detail"]
    assert [r.status_code for r in free_b] == [202, 202, 202]
    assert [r.status_code for r in pro] == [202] * 6 + [429]
    assert pro[0].headers["RateLimit-Limit"] == "6"
    assert await sessions_of(pool, granted, "free_a") == 3
    assert await sessions_of(pool, granted, "free_b") == 3
    assert await sessions_of(pool, granted, "pro") == 6
    # Four analysis tasks for each accepted session, none for a refused one.
    assert sum((await queue_depths(settings)).values()) == 4 * (3 + 3 + 6)
    counters = await counter_keys(settings, redis, pool)
    digest = hashlib.sha256(granted["free_a"][0].encode()).hexdigest()
    assert any(digest in k and granted["free_a"][1] in k for k in counters)
    for key, _, _ in granted.values():
        assert not any(key in k for k in counters)


async def counter_keys(settings, redis, pool) -> list[str]:
    """The names of the deployment's rate-limit counters: in Redis, or in PostgreSQL's
    ephemera without it."""
    prefix = f"{settings.key_prefix}:ratelimit:"
    if not settings.redis_url:
        found = await pool.fetch("SELECT key FROM ephemera WHERE key LIKE $1 || '%'", prefix)
        return [r["key"] for r in found]
    return [k.decode() async for k in redis.scan_iter(f"{prefix}*")]


async def test_bodies_that_are_not_json_are_charged_to_their_key(world, pool):
    """A flood of malformed JSON (refused before any dependency runs) counts against the key's
    submission limit like well-formed requests: 422s, then 429 with the RateLimit-* headers;
    without a key, 401."""
    granted = keys(free=1)
    settings = await world(api_keys=api_keys(granted), rate_limits_by_plan={1: "3/minute"})
    broken = {**auth(granted, "free"), "Content-Type": "application/json"}
    async with serving(settings) as app, client(app) as api:
        answers = [
            await api.post(SUBMIT, content=b'{"text": "x"', headers=broken) for _ in range(5)
        ]
        keyless = await api.post(
            SUBMIT, content=b'{"text"', headers={"Content-Type": "application/json"}
        )
    assert [r.status_code for r in answers] == [422, 422, 422, 429, 429]
    assert answers[3].headers["RateLimit-Remaining"] == "0" and answers[3].headers["Retry-After"]
    assert keyless.status_code == 401
    assert await sessions_of(pool, granted, "free") == 0


async def test_bodies_that_cannot_be_decoded_at_all_are_charged_too(world, pool):
    """Invalid UTF-8, nesting too deep for the parser, an integer too long to convert:
    FastAPI refuses them with 400 before any dependency runs; they cost the key all the
    same (400s, then 429), and say what is wrong in the client's terms."""
    granted = keys(free=1)
    settings = await world(api_keys=api_keys(granted), rate_limits_by_plan={1: "3/minute"})
    headers = {**auth(granted, "free"), "Content-Type": "application/json"}
    bodies = [b'{"content": "\xff"}', b"[" * 999, b'{"plan_type": ' + b"9" * 5000 + b"}"]
    async with serving(settings) as app, client(app) as api:
        answers = [await api.post(SUBMIT, content=body, headers=headers) for body in bodies * 2]
    assert [r.status_code for r in answers] == [400, 400, 400, 429, 429, 429]
    assert "not valid JSON" in answers[0].json()["detail"]
    assert await sessions_of(pool, granted, "free") == 0


async def test_reads_have_a_looser_limit_of_their_own(world):
    """A key out of submissions can still poll; its reads run out at the read limit."""
    granted = keys(free=1)
    settings = await world(
        api_keys=api_keys(granted),
        rate_limits_by_plan={1: "1/minute"},
        read_rate_limits_by_plan={1: "4/minute"},
    )
    async with serving(settings) as app, client(app) as api:
        accepted, refused = await submit(api, granted, "free", 2)
        poll = accepted.json()["poll_url"]
        reads = [await api.get(poll, headers=auth(granted, "free")) for _ in range(5)]
    assert (accepted.status_code, refused.status_code) == (202, 429)
    assert [r.status_code for r in reads] == [200, 200, 200, 200, 429]
    assert [r.headers["RateLimit-Remaining"] for r in reads[:4]] == ["3", "2", "1", "0"]
    assert reads[4].headers["RateLimit-Limit"] == "4" and int(reads[4].headers["Retry-After"]) > 0


async def test_guessed_keys_get_an_address_throttled(world, pool):
    """After N unknown keys an address gets 429 for everything, a valid key included; another
    address is unaffected."""
    granted = keys(free=1)
    settings = await world(api_keys=api_keys(granted), auth_failure_limit="3/minute")
    async with serving(settings) as app, client(app, "198.51.100.7") as guesser:
        guesses = [
            await guesser.get(f"{API}/{uuid.uuid4()}/result", headers={"X-API-Key": f"guess-{i}"})
            for i in range(5)
        ]
        valid_from_guesser = await guesser.post(
            SUBMIT, json={"text": "hi"}, headers=auth(granted, "free")
        )
        async with client(app, "198.51.100.8") as neighbour:
            unknown_elsewhere = await neighbour.get(
                f"{API}/{uuid.uuid4()}/result", headers={"X-API-Key": "guess-x"}
            )
            valid_elsewhere = await neighbour.post(
                SUBMIT, json={"text": "hi"}, headers=auth(granted, "free")
            )
    assert [r.status_code for r in guesses] == [401, 401, 401, 429, 429]
    assert 1 <= int(guesses[3].headers["Retry-After"]) <= 60
    assert guesses[3].headers["RateLimit-Remaining"] == "0"
    assert valid_from_guesser.status_code == 429
    assert (unknown_elsewhere.status_code, valid_elsewhere.status_code) == (401, 202)
    assert await sessions_of(pool, granted, "free") == 1


async def test_stale_events_links_do_not_lock_an_addresss_keys_out(world):
    """Bad events tokens are counted apart from unknown keys: past AUTH_FAILURE_LIMIT the
    address gets 429 for tokens, while a valid API key from it still works."""
    granted = keys(free=1)
    settings = await world(api_keys=api_keys(granted), auth_failure_limit="3/minute")
    async with serving(settings) as app, client(app, "198.51.100.9") as browser:
        posted = await browser.post(SUBMIT, json={"text": "hi"}, headers=auth(granted, "free"))
        sid = posted.json()["session_id"]
        stale = [
            await browser.get(f"{API}/{sid}/events", params={"token": f"stale-{i}"})
            for i in range(5)
        ]
        with_key = await browser.get(f"{API}/{sid}/queue-status", headers=auth(granted, "free"))
    assert [r.status_code for r in stale] == [401, 401, 401, 429, 429]
    assert "events tokens" in stale[3].json()["detail"]
    assert with_key.status_code == 200


async def test_the_in_flight_cap_refuses_new_sessions_until_some_finish(world, pool):
    """With N sessions processing a tenant gets 429; another tenant is unaffected; replaying an
    idempotency key starts nothing and passes; once one session ends, a new one is accepted."""
    granted = keys(a=1, b=1)
    settings = await world(api_keys=api_keys(granted), max_in_flight_by_plan={1: 2})
    async with serving(settings) as app, client(app) as api:  # no workers: sessions stay open
        first = await api.post(
            SUBMIT, json={"text": "one"}, headers={**auth(granted, "a"), "Idempotency-Key": "k-1"}
        )
        with capture_logs() as logs:
            second, over_cap = await submit(api, granted, "a", 2)
        replay = await api.post(
            SUBMIT, json={"text": "one"}, headers={**auth(granted, "a"), "Idempotency-Key": "k-1"}
        )
        (other_tenant,) = await submit(api, granted, "b", 1)
        await pool.execute(
            "UPDATE sessions SET status = 'completed', finished_at = now() WHERE id = $1::uuid",
            second.json()["session_id"],
        )
        (after_one_ended,) = await submit(api, granted, "a", 1)
    assert (first.status_code, second.status_code) == (202, 202)
    assert over_cap.status_code == 429 and int(over_cap.headers["Retry-After"]) > 0
    assert "still processing" in over_cap.json()["detail"]
    refusals = [(e["reason"], e["tenant"]) for e in logs if e["event"] == "audit.refused"]
    assert refusals == [("in_flight_cap", granted["a"][1])]
    assert replay.status_code == 202
    assert replay.json()["session_id"] == first.json()["session_id"]
    assert other_tenant.status_code == 202
    assert after_one_ended.status_code == 202
    assert await sessions_of(pool, granted, "a") == 3
    assert sum((await queue_depths(settings)).values()) == 4 * (3 + 1)


async def test_without_redis_the_rate_limits_fail_open_and_return_with_it(world, services):
    """Redis cut: requests past the limit are served, with one warning and a metric for each;
    once Redis is back the limit applies again."""
    granted = keys(free=1)
    parts = urlsplit(services.redis_url)
    proxy = await Proxy(parts.hostname or "127.0.0.1", parts.port or 6379).start()
    settings = await world(
        api_keys=api_keys(granted),
        rate_limits_by_plan={1: "2/minute"},
        redis_url=urlunsplit(parts._replace(netloc=f"127.0.0.1:{proxy.port}")),
    )
    before = UNCHECKED.labels("submit")._value.get()
    with capture_logs() as logs:
        async with serving(settings) as app, client(app) as api:
            await proxy.cut()
            during = await submit(api, granted, "free", 4)
            unchecked = UNCHECKED.labels("submit")._value.get() - before
            await proxy.restore()

            async def checked():
                (response,) = await submit(api, granted, "free", 1)
                return response if "RateLimit-Limit" in response.headers else None

            first_checked = await eventually(checked, timeout=10)
            after = await submit(api, granted, "free", 2)
        await proxy.cut()
    assert [r.status_code for r in during] == [202] * 4
    assert "RateLimit-Limit" not in during[0].headers
    assert unchecked == 4
    assert first_checked.status_code == 202 and first_checked.headers["RateLimit-Remaining"] == "1"
    assert [r.status_code for r in after] == [202, 429]
    events = [e["event"] for e in logs if e["event"].startswith("rate limits")]
    assert events == [
        "rate limits unchecked: their store is unavailable",
        "rate limits checked again",
    ]


async def test_refused_requests_are_audited_without_key_material(world):
    """401, 403, 404 and 429 each log `audit.refused` with status, reason, path, address,
    tenant when known and a key-hash prefix; never a key or a body."""
    granted = keys(free=1)
    secret = granted["free"][0]
    # The refused 403 submission is counted too: the second "ok" is the third submission.
    settings = await world(api_keys=api_keys(granted), rate_limits_by_plan={1: "2/minute"})
    missing = f"{API}/{uuid.uuid4()}/result"
    body = {"text": "private words", "plan_type": 6}
    with capture_logs() as logs:
        async with serving(settings) as app, client(app, "192.0.2.44") as api:
            statuses = [
                (await api.post(SUBMIT, json=body)).status_code,
                (await api.get(missing, headers={"X-API-Key": "not-a-key"})).status_code,
                (await api.post(SUBMIT, json=body, headers=auth(granted, "free"))).status_code,
                (await api.get(missing, headers=auth(granted, "free"))).status_code,
                (await api.get("/no/such/route")).status_code,
                (
                    await api.post(SUBMIT, json={"text": "ok"}, headers=auth(granted, "free"))
                ).status_code,
                (
                    await api.post(SUBMIT, json={"text": "ok"}, headers=auth(granted, "free"))
                ).status_code,
            ]
    audited = [e for e in logs if e["event"] == "audit.refused"]
    summary = [(e["status"], e["reason"], e["tenant"]) for e in audited]
    tenant = granted["free"][1]
    assert statuses == [401, 401, 403, 404, 404, 202, 429]
    assert summary == [
        (401, "missing_key", None),
        (401, "unknown_key", None),
        (403, "forbidden", tenant),
        (404, "not_found", tenant),
        (404, "not_found", None),
        (429, "rate_limited_submit", tenant),
    ]
    assert {e["client"] for e in audited} == {"192.0.2.44"}
    assert audited[3]["path"] == missing and audited[3]["method"] == "GET"
    assert audited[5]["key_hash"] == hashlib.sha256(secret.encode()).hexdigest()[:8]
    assert audited[1]["key_hash"] == hashlib.sha256(b"not-a-key").hexdigest()[:8]
    everything = repr(logs)
    assert secret not in everything and "not-a-key" not in everything
    assert "private words" not in everything


async def test_quotas_can_be_switched_off_for_benchmarks(world, pool):
    """QUOTAS_ENABLED=false: no rate limit, no address throttle, no in-flight cap, no headers."""
    granted = keys(free=1)
    settings = await world(
        api_keys=api_keys(granted),
        quotas_enabled=False,
        rate_limits_by_plan={1: "1/minute"},
        auth_failure_limit="1/minute",
        max_in_flight_by_plan={1: 1},
    )
    async with serving(settings) as app, client(app) as api:
        guesses = [
            await api.post(SUBMIT, json={}, headers={"X-API-Key": "guess"}) for _ in range(3)
        ]
        accepted = await submit(api, granted, "free", 3)
    assert [r.status_code for r in guesses] == [401, 401, 401]
    assert [r.status_code for r in accepted] == [202, 202, 202]
    assert "RateLimit-Limit" not in accepted[-1].headers
    assert await sessions_of(pool, granted, "free") == 3
