"""The admin console's routes on a real API (Postgres, Redis, RabbitMQ): sign-in, the cookie,
CSRF, redirects, escaping, search and a session's page."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import re
import secrets
import uuid
from collections.abc import AsyncIterator

import httpx
import pytest
from redis.asyncio import Redis

from aggregator.service import Aggregator
from dispatcher.app import create_app
from dispatcher.console.cookies import SessionCookies
from dispatcher.queue_watch import FIGURES
from dispatcher.submit import first_tasks
from shared import sessions
from shared.api_keys import hashed, key_hash, key_label
from shared.constants import ANALYSIS_COMPONENTS
from shared.errors import RetryableAnalysisError
from shared.house import redis_house
from shared.live import events_channel
from shared.sessions import NewSession
from shared.settings import Settings
from tests.conftest import TEST_API_KEYS
from tests.integration.conftest import POSTGRES_ALONE, World, eventually, publisher_for, running
from tests.integration.test_dlq import dlq_of, expired_session, workers_consume
from tests.integration.test_review import new_session, queued_unsure, stream_events
from tests.integration.test_worker_flow import final_view
from workers.executor import Analysis
from workers.runtime import Worker, WorkerOptions

pytestmark = pytest.mark.integration

API = "/api/v3/pipeline"
ADMIN_KEY = "test-console-admin"
KEYS = {**TEST_API_KEYS, ADMIN_KEY: {"tenant": "ops", "plan": 6, "scopes": ["admin"]}}
ENTERPRISE = {"X-API-Key": "test-enterprise"}
CSRF = re.compile(r'name="csrf_token" value="([0-9a-f]+)"')
PAGES = ("/admin", "/admin/overview/live", "/admin/sessions", "/admin/workers", "/admin/tenants")


async def console_world(world: World, **overrides: object) -> Settings:
    values: dict[str, object] = {
        "api_keys": hashed(KEYS),
        "admin_session_key": secrets.token_urlsafe(32),
        **overrides,
    }
    return await world(**values)


@contextlib.asynccontextmanager
async def browser(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    """A client of the API over https (the cookie is Secure), keeping cookies like a browser."""
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        state = app.state.pipeline

        async def connected() -> bool:
            return state.publisher is not None

        await eventually(connected, 10)
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="https://api"
        ) as client:
            yield client


async def csrf_of(client: httpx.AsyncClient, path: str = "/admin/login") -> str:
    page = await client.get(path)
    found = CSRF.search(page.text)
    assert found, page.text
    return found.group(1)


async def sign_in(client: httpx.AsyncClient, key: str = ADMIN_KEY) -> httpx.Response:
    token = await csrf_of(client)
    return await client.post("/admin/login", data={"api_key": key, "csrf_token": token})


async def test_every_page_sends_a_browser_without_a_session_to_sign_in(world):
    """No cookie, a forged one or a signed-out one: 303 to /admin/login, nothing shown."""
    settings = await console_world(world)
    async with browser(settings) as client:
        for path in (*PAGES, "/admin/sessions/00000000-0000-0000-0000-000000000000"):
            response = await client.get(path)
            assert response.status_code == 303, path
            assert response.headers["location"] == "/admin/login"
        # Sent as a header: a cookie jar entry would not reach the ASGI test host at all.
        forged = {"Cookie": "verdict_console=forged.value.here"}
        assert (await client.get("/admin", headers=forged)).status_code == 303
        assert (await client.post("/admin/logout", headers=forged)).status_code == 303


async def test_an_admin_key_signs_in_once_with_a_secure_strict_cookie(world):
    """The admin key's sign-in answers 303 to the overview and a Secure, HttpOnly,
    SameSite=Strict cookie; then every page opens without the key."""
    settings = await console_world(world)
    async with browser(settings) as client:
        response = await sign_in(client)
        assert response.status_code == 303
        assert response.headers["location"] == "/admin"
        cookie = response.headers["set-cookie"].lower()
        for attribute in ("secure", "httponly", "samesite=strict", "path=/admin", "max-age="):
            assert attribute in cookie
        assert ADMIN_KEY not in response.headers["set-cookie"]
        for path in PAGES:
            page = await client.get(path)
            assert page.status_code == 200, path
            assert "default-src 'self'" in page.headers["content-security-policy"]
        overview = await client.get("/admin")
        assert 'id="queue-claims-6"' in overview.text


async def test_keys_without_the_admin_scope_are_refused_at_sign_in(world):
    """A tenant's key: 403, an unknown key: 401; neither gets a session."""
    settings = await console_world(world)
    async with browser(settings) as client:
        refused = await sign_in(client, "test-enterprise")
        assert refused.status_code == 403
        assert "no admin scope" in refused.text
        unknown = await sign_in(client, "not-a-key")
        assert unknown.status_code == 401
        assert (await client.get("/admin")).status_code == 303


async def test_every_post_needs_the_sessions_csrf_token(world):
    """Sign-in and sign-out without the token, or with a wrong one or another session's, are
    403; with it, sign-out ends the session."""
    settings = await console_world(world)
    async with browser(settings) as client:
        await csrf_of(client)
        no_token = await client.post("/admin/login", data={"api_key": ADMIN_KEY})
        assert no_token.status_code == 403
        assert (await client.get("/admin")).status_code == 303
        assert (await sign_in(client)).status_code == 303
        token = await csrf_of(client, "/admin")
        assert (await client.post("/admin/logout")).status_code == 403
        wrong = await client.post("/admin/logout", data={"csrf_token": "0" * 64})
        assert wrong.status_code == 403
        async with browser(settings) as other:
            await sign_in(other)
            others = await csrf_of(other, "/admin")
        assert others != token
        assert (await client.post("/admin/logout", data={"csrf_token": others})).status_code == 403
        assert (await client.get("/admin")).status_code == 200  # still signed in
        out = await client.post("/admin/logout", data={"csrf_token": token})
        assert out.status_code == 303
        assert out.headers["location"] == "/admin/login"
        assert (await client.get("/admin")).status_code == 303


@pytest.mark.parametrize("transport", ["rabbitmq", POSTGRES_ALONE])
async def test_sign_in_attempts_are_rate_limited_per_address(world):
    """Past ADMIN_LOGIN_LIMIT, even the right key is refused with 429 and Retry-After."""
    settings = await console_world(world, admin_login_limit="2/minute")
    async with browser(settings) as client:
        assert (await sign_in(client, "guess-1")).status_code == 401
        assert (await sign_in(client, "guess-2")).status_code == 401
        third = await sign_in(client)
        assert third.status_code == 429
        assert int(third.headers["retry-after"]) > 0
        assert (await client.get("/admin")).status_code == 303


@pytest.mark.parametrize("transport", ["rabbitmq", POSTGRES_ALONE])
async def test_a_signed_out_cookie_is_refused_even_when_replayed(world):
    """A copy of the cookie taken before sign-out no longer opens any page afterwards, and
    the sign-in page gives it a fresh anonymous session instead of a redirect loop."""
    settings = await console_world(world)
    async with browser(settings) as client:
        assert (await sign_in(client)).status_code == 303
        copied = {"Cookie": f"verdict_console={client.cookies['verdict_console']}"}
        token = await csrf_of(client, "/admin")
        client.cookies.clear()
        assert (await client.get("/admin", headers=copied)).status_code == 200
        out = await client.post("/admin/logout", data={"csrf_token": token}, headers=copied)
        assert out.status_code == 303
        for path in PAGES:
            response = await client.get(path, headers=copied)
            assert response.status_code == 303, path
            assert response.headers["location"] == "/admin/login"
        login = await client.get("/admin/login", headers=copied)
        assert login.status_code == 200 and 'name="api_key"' in login.text
        assert login.cookies["verdict_console"] not in copied["Cookie"]


async def test_the_console_fails_closed_while_redis_cannot_check_sign_outs(world):
    """With Redis unreachable a signed-in cookie gets 503, never a page."""
    settings = await console_world(world)
    async with browser(settings) as client:
        assert (await sign_in(client)).status_code == 303
        state = client._transport.app.state.pipeline  # type: ignore[attr-defined]
        unreachable = Redis.from_url("redis://127.0.0.1:1/0")
        working, state.house = state.house, redis_house(unreachable)
        try:
            refused = await client.get("/admin/workers")
        finally:
            await unreachable.aclose()
            state.house = working
        assert refused.status_code == 503
        assert "sign-outs" in refused.text
        assert (await client.get("/admin/workers")).status_code == 200


async def test_successful_sign_ins_do_not_lock_an_address_out(world):
    """Only failed sign-ins count towards ADMIN_LOGIN_LIMIT: an admin signing in again and
    again from a shared address is never refused."""
    settings = await console_world(world, admin_login_limit="2/minute")
    async with browser(settings) as client:
        for _ in range(4):
            client.cookies.clear()
            assert (await sign_in(client)).status_code == 303
        client.cookies.clear()
        assert (await sign_in(client, "guess-1")).status_code == 401
        client.cookies.clear()
        assert (await sign_in(client)).status_code == 303


async def test_the_cookie_carries_no_key_verifier(world):
    """The cookie holds neither the admin key nor the sha256 API_KEYS verifies it by."""
    settings = await console_world(world)
    async with browser(settings) as client:
        await sign_in(client)
        assert settings.admin_session_key is not None
        key = settings.admin_session_key.get_secret_value()
        carried = SessionCookies(key, 60).read(client.cookies["verdict_console"])
        assert carried is not None and carried.key_tag is not None
        assert hashlib.sha256(ADMIN_KEY.encode()).hexdigest() not in repr(carried)
        assert ADMIN_KEY not in repr(carried)
        assert (await client.get("/admin")).status_code == 200


async def test_the_console_is_off_without_a_session_key(world):
    """Without ADMIN_SESSION_KEY every console page answers 503 saying so."""
    settings = await world(api_keys=hashed(KEYS))
    async with browser(settings) as client:
        response = await client.get("/admin/login")
        assert response.status_code == 503
        assert "ADMIN_SESSION_KEY" in response.text
        assert response.headers["content-type"].startswith("text/html")


async def test_a_session_input_with_a_script_renders_inert(world):
    """Content holding `<script>` shows as text on the session page and in a search echo."""
    settings = await console_world(world)
    hostile = "<script>alert('console')</script> & more"
    async with browser(settings) as client:
        submitted = await client.post(
            f"{API}/analyze-async", json={"content": hostile}, headers=ENTERPRISE
        )
        assert submitted.status_code == 202, submitted.text
        sid = submitted.json()["session_id"]
        await sign_in(client)
        page = await client.get(f"/admin/sessions/{sid}")
        assert page.status_code == 200
        assert "&lt;script&gt;alert(&#39;console&#39;)&lt;/script&gt; &amp; more" in page.text
        assert "<script>alert" not in page.text
        search = await client.get("/admin/sessions", params={"tenant": "<script>x</script>"})
        assert "&lt;script&gt;x&lt;/script&gt;" in search.text
        assert "<script>x" not in search.text


async def test_search_finds_sessions_and_explains_a_field_it_cannot_use(world):
    """By tenant and status a session is found; a bad status or time is 400 with a message."""
    settings = await console_world(world)
    async with browser(settings) as client:
        submitted = await client.post(
            f"{API}/analyze-async", json={"content": "search me"}, headers=ENTERPRISE
        )
        sid = submitted.json()["session_id"]
        await sign_in(client)
        found = await client.get(
            "/admin/sessions", params={"tenant": "tenant-a", "status": "processing"}
        )
        assert sid in found.text
        by_id = await client.get("/admin/sessions", params={"session_id": sid})
        assert sid in by_id.text
        elsewhere = await client.get("/admin/sessions", params={"tenant": "tenant-b"})
        assert sid not in elsewhere.text
        bad = await client.get("/admin/sessions", params={"status": "sleeping"})
        assert bad.status_code == 400
        assert "status must be one of" in bad.text
        bad_time = await client.get("/admin/sessions", params={"since": "yesterday"})
        assert bad_time.status_code == 400
        assert "is not a time" in bad_time.text
        missing = await client.get("/admin/sessions/not-a-session")
        assert missing.status_code == 404


async def length_score(task, ctx):
    return Analysis(min(100.0, len(task.input.content or "") / 10))


def failing_once():
    """An executor whose claims analysis fails its first run with a retryable error."""
    failed: set[str] = set()

    async def run(task, ctx):
        if task.component == "claims" and task.session_id not in failed:
            failed.add(task.session_id)
            raise RetryableAnalysisError("upstream 503")
        return await length_score(task, ctx)

    return run


async def test_a_finished_session_shows_results_verdict_and_timeline(world):
    """After the pipeline ran a session, its page shows every component's result, the
    verdict, and a timeline from acceptance to final; the overview counts it."""
    settings = await console_world(world)
    services = [
        Worker(settings, WorkerOptions(c, 2, 2), length_score).run for c in ANALYSIS_COMPONENTS
    ]
    async with running(*services, Aggregator(settings).run), browser(settings) as client:
        submitted = await client.post(
            f"{API}/analyze-async", json={"content": "a" * 400}, headers=ENTERPRISE
        )
        sid = submitted.json()["session_id"]

        async def final() -> bool:
            r = await client.get(f"{API}/{sid}/result", headers=ENTERPRISE)
            return r.status_code == 200

        await eventually(final, 30)
        await sign_in(client)
        page = (await client.get(f"/admin/sessions/{sid}")).text
        for component in ANALYSIS_COMPONENTS:
            assert f'id="component-{component}"' in page
        assert 'id="verdict"' in page
        timeline = page.split('class="timeline"')[1]
        assert "accepted: text on plan 6" in timeline
        assert timeline.count("finished: ok") == len(ANALYSIS_COMPONENTS)
        assert timeline.count("attempt 1 started") == len(ANALYSIS_COMPONENTS)
        assert "final: completed" in timeline
        overview = (await client.get("/admin/overview/live")).text
        assert re.search(r'id="per-hour-completed">\s*[1-9]', overview), overview
        assert re.search(r'id="latency-n">[1-9]', overview)


async def test_the_overview_charts_every_queue_figure_over_the_hour(world, pool):
    """Once the queue watch has ticked, each plan queue's row has a chart with points of its
    depth, consumers, oldest open task and publish, deliver and ack rates; a session not yet
    analysed is the oldest open task of its plan's queues."""
    settings = await console_world(world)
    await new_session(pool)  # plan 3, no result yet
    async with browser(settings) as client:
        await sign_in(client)

        async def charted() -> str | None:
            page = (await client.get("/admin/overview/live")).text
            row = page.split('id="queue-claims-3"')[1].split("</tr>")[0]
            drawn = [re.search(rf'chart-{f}"[^>]*>\s*<polyline points="\d', row) for f in FIGURES]
            return row if all(drawn) else None

        row = await eventually(charted, 15)
    figures = re.findall(r'<td class="num[^"]*">\s*([^<]*?)\s*<svg', row)
    assert len(figures) == len(FIGURES), row
    waiting, consumers, oldest, *rates = figures
    assert waiting.isdigit() and consumers.isdigit(), row
    assert oldest.endswith((" s", " min", " h")), row
    assert all(re.fullmatch(r"\d+\.\d", rate) for rate in rates), row


@pytest.mark.parametrize("transport", ["rabbitmq", POSTGRES_ALONE])
async def test_a_retried_task_shows_each_attempt_as_the_workers_recorded_it(world):
    """A claims task that failed once: its timeline shows attempt 1 retried with the delay,
    then attempt 2 started on a worker and finished."""
    settings = await console_world(world)
    executor = failing_once()
    services = [Worker(settings, WorkerOptions(c, 2, 2), executor).run for c in ANALYSIS_COMPONENTS]
    async with running(*services, Aggregator(settings).run), browser(settings) as client:
        submitted = await client.post(
            f"{API}/analyze-async", json={"content": "b" * 300}, headers=ENTERPRISE
        )
        sid = submitted.json()["session_id"]

        async def final() -> bool:
            r = await client.get(f"{API}/{sid}/result", headers=ENTERPRISE)
            return r.status_code == 200

        await eventually(final, 30)
        await sign_in(client)
        timeline = (await client.get(f"/admin/sessions/{sid}")).text.split('class="timeline"')[1]
        steps = re.findall(r"<strong>claims</strong> ([^<]+)</li>", timeline)
        assert [s.split(" on ")[0].split(":")[0] for s in steps] == [
            "attempt 1 started",
            "attempt 1 retried",
            "attempt 2 started",
            "finished",
        ], steps
        assert "next attempt in 200 ms" in steps[1]


# --- dead letters (the operator role's connection: OPERATOR_AMQP_URL) ---


LETTER_ROW = re.compile(r'<tr id="letter-([0-9a-f]+)"')


async def dlq_world(world: World, services, **overrides: object) -> Settings:
    return await console_world(
        world,
        operator_amqp_url=services.amqp_url,
        queue_message_ttl_ms=1000,
        session_deadline_s=120,
        **overrides,
    )


async def listed(client: httpx.AsyncClient, **search: str) -> list[str]:
    page = await client.get("/admin/dead-letters", params=search)
    assert page.status_code == 200, page.text
    return LETTER_ROW.findall(page.text)


async def test_dead_letters_are_listed_searched_viewed_and_replayed_to_a_verdict(
    world, services, pool
):
    """Expired tasks show with origin, reason and tenant; one opens with its body; a replay of
    one, then of all matching, sends them home, and the session reaches its verdict."""
    settings = await dlq_world(world, services)
    new = await expired_session(settings, pool, plan=5, tenant="tenant-a")
    async with browser(settings) as client:
        await sign_in(client)
        ids = await listed(client, tenant="tenant-a")
        assert len(ids) == 4
        assert await listed(client, tenant="tenant-b") == []
        assert len(await listed(client, reason="expired", component="claims")) == 1
        page = (await client.get("/admin/dead-letters", params={"tenant": "tenant-a"})).text
        assert "expired in" in page and f"{settings.topology_prefix}.claims.5" in page
        one = await client.get(f"/admin/dead-letters/{ids[0]}")
        assert one.status_code == 200
        assert new.id in one.text  # the body, whole
        bad = await client.get("/admin/dead-letters", params={"older_than_min": "soon"})
        assert bad.status_code == 400 and "number of minutes" in bad.text

        token = await csrf_of(client, "/admin/dead-letters")
        refused = await client.post("/admin/dead-letters/replay", data={"ids": ids[0]})
        assert refused.status_code == 403
        assert len(await listed(client)) == 4

        workers = [
            Worker(settings, WorkerOptions(c, 1, 1), length_score).run for c in ANALYSIS_COMPONENTS
        ]
        async with running(*workers, Aggregator(settings).run):
            async with dlq_of(settings) as (connection, names):
                await workers_consume(connection, names, 5)
            first = await client.post(
                "/admin/dead-letters/replay",
                data={"csrf_token": token, "ids": ids[0], "scope": "selected"},
            )
            assert "1 replayed" in first.text
            assert sorted(LETTER_ROW.findall(first.text)) == sorted(ids[1:])
            rest = await client.post(
                "/admin/dead-letters/replay",
                data={"csrf_token": token, "scope": "matching", "tenant": "tenant-a"},
            )
            assert "3 replayed" in rest.text
            view = await final_view(pool, new.id)
    assert view.status == "completed"


@pytest.mark.parametrize("transport", [POSTGRES_ALONE])
async def test_the_table_transports_dead_letters_are_listed_viewed_replayed_and_purged(world, pool):
    """PostgreSQL alone, no operator broker role: a session's tasks expire into error rows
    (dead-lettered by the first claim after their TTL); the console lists them by tenant,
    shows one whole, replays three to their queues and the session's verdict follows once
    the fourth is replayed; a purge needs its confirmation."""
    settings = await console_world(world, queue_message_ttl_ms=1000, session_deadline_s=120)
    new = NewSession(sessions.new_session_id(), "tenant-a", 5, "text", {"content": "x" * 40}, 120)
    await sessions.create(pool, new)
    async with publisher_for(settings) as publisher:
        for task in first_tasks(new, None):
            await publisher.task(task, tenant="tenant-a")
    await asyncio.sleep(1.2)  # past the TTL: the next claim dead-letters them, reason expired

    def workers():
        return [
            Worker(settings, WorkerOptions(c, 1, 1), length_score).run for c in ANALYSIS_COMPONENTS
        ]

    async with browser(settings) as client:
        await sign_in(client)
        async with running(*workers()):
            ids = await eventually(lambda: _four(listed(client, tenant="tenant-a")), timeout=20)
        assert await listed(client, tenant="tenant-b") == []
        page = (await client.get("/admin/dead-letters", params={"reason": "expired"})).text
        assert f"{settings.topology_prefix}.claims.5" in page
        one = await client.get(f"/admin/dead-letters/{ids[0]}")
        assert one.status_code == 200 and new.id in one.text
        token = await csrf_of(client, "/admin/dead-letters")
        unconfirmed = await client.post(
            "/admin/dead-letters/purge", data={"csrf_token": token, "scope": "matching"}
        )
        assert unconfirmed.status_code == 400
        async with running(*workers(), Aggregator(settings).run):
            first = await client.post(
                "/admin/dead-letters/replay",
                data={"csrf_token": token, "ids": ids[0], "scope": "selected"},
            )
            assert "1 replayed" in first.text
            rest = await client.post(
                "/admin/dead-letters/replay",
                data={"csrf_token": token, "scope": "matching", "tenant": "tenant-a"},
            )
            assert "3 replayed" in rest.text
            view = await final_view(pool, new.id)
        assert await listed(client) == []
    assert view.status == "completed"


async def _four(listing) -> list[str] | None:
    found = await listing
    return found if len(found) == 4 else None


async def test_a_replayed_letter_that_dies_again_shows_its_replays_and_loops_are_refused(
    world, services, pool
):
    """With no worker, a replayed task expires again: the console shows its replay count,
    and at DLQ_MAX_REPLAYS a replay refuses it as a loop unless forced."""
    settings = await dlq_world(world, services, dlq_max_replays=1)
    await expired_session(settings, pool, plan=2, tenant="tenant-b")
    async with browser(settings) as client:
        await sign_in(client)
        token = await csrf_of(client, "/admin/dead-letters")
        everything = {"csrf_token": token, "scope": "matching"}
        assert (
            "4 replayed" in (await client.post("/admin/dead-letters/replay", data=everything)).text
        )

        async def all_back_once_replayed() -> bool:
            page = (await client.get("/admin/dead-letters")).text
            return len(re.findall(r'class="num replays">1 \(loop\)', page)) == 4

        await eventually(all_back_once_replayed, 15)
        looped = await client.post("/admin/dead-letters/replay", data=everything)
        assert "0 replayed; 4 refused as loops" in looped.text
        forced = await client.post(
            "/admin/dead-letters/replay", data={**everything, "force": "yes"}
        )
        assert "4 replayed" in forced.text


async def test_purging_needs_a_confirmation(world, services, pool, capsys):
    """Without the confirmation nothing is purged (400); with it the selection goes, and the
    log says who purged what (a hostile probe found purges, replays and sign-ins unlogged)."""
    settings = await dlq_world(world, services)
    await expired_session(settings, pool, plan=1, tenant="tenant-a")
    async with browser(settings) as client:
        await sign_in(client)
        ids = await listed(client)
        token = await csrf_of(client, "/admin/dead-letters")
        chosen = {"csrf_token": token, "scope": "selected", "ids": ids[:2]}
        unconfirmed = await client.post("/admin/dead-letters/purge", data=chosen)
        assert unconfirmed.status_code == 400 and "tick the confirmation" in unconfirmed.text
        assert len(await listed(client)) == 4
        purged = await client.post("/admin/dead-letters/purge", data={**chosen, "confirm": "yes"})
        assert "2 purged" in purged.text
        assert sorted(await listed(client)) == sorted(ids[2:])
    logged = "".join(capsys.readouterr())
    signed_in = [line for line in logged.splitlines() if "console sign-in" in line]
    purges = [line for line in logged.splitlines() if "dead letters purged" in line]
    assert signed_in and len(purges) == 1
    # the key's label, as JSON or as the console renderer writes it
    operator = re.search(r'operator"?[=:] ?"?([\w.-]+/[0-9a-f]{8})', purges[0])
    assert operator and operator[1] in signed_in[0], (purges[0], signed_in[0])
    assert re.search(r'purged"?[=:] ?2\b', purges[0]) and re.search(
        r'selected"?[=:] ?2\b', purges[0]
    )


async def test_dead_letters_need_the_operator_role(world):
    """Without OPERATOR_AMQP_URL the page says so (503); the rest of the console works."""
    settings = await console_world(world)
    async with browser(settings) as client:
        await sign_in(client)
        page = await client.get("/admin/dead-letters")
        assert page.status_code == 503 and "OPERATOR_AMQP_URL" in page.text
        assert (await client.get("/admin")).status_code == 200


# --- human review ---

# Bob's admin key has the console admin's tenant: another person, so another reviewer.
REVIEWERS = {
    **KEYS,
    "test-console-bob": {"tenant": "ops", "plan": 1, "scopes": ["admin"]},
}


async def test_a_reviewer_claims_and_overrides_a_verdict_seen_in_the_result(world, pool):
    """The queue lists the verdict; a claim holds it against another reviewer, even one whose
    key has the same tenant (409 naming the claimer's key); the override with its note is
    what the session's owner reads in the result and its event stream."""
    settings = await console_world(world, api_keys=hashed(REVIEWERS))
    sid = await queued_unsure(pool)
    async with browser(settings) as alice, browser(settings) as bob:
        await sign_in(alice)
        await sign_in(bob, "test-console-bob")
        queue = await alice.get("/admin/review")
        assert f'id="review-{sid}"' in queue.text
        token = await csrf_of(alice, "/admin/review")
        claimed = await alice.post(f"/admin/review/{sid}/claim", data={"csrf_token": token})
        assert claimed.status_code == 303
        assert claimed.headers["location"] == f"/admin/review/{sid}"
        item = await alice.get(f"/admin/review/{sid}")
        assert 'id="decide"' in item.text
        bobs = await csrf_of(bob, "/admin/review")
        taken = await bob.post(f"/admin/review/{sid}/claim", data={"csrf_token": bobs})
        alice_is = key_label("ops", key_hash(ADMIN_KEY))
        assert taken.status_code == 409 and f"claimed by {alice_is}" in taken.text
        events: list[tuple[str, dict]] = []
        streaming = asyncio.create_task(stream_events(alice, f"{API}/{sid}/events", events))
        # Decide only once the stream listens: one opened after the decision would read it
        # from the record, and the test would pass without the console announcing it.
        channel = events_channel(settings.key_prefix, sid)
        async with Redis.from_url(settings.redis_url) as redis:

            async def listening() -> bool:
                return (await redis.pubsub_numsub(channel))[0][1] >= 1

            await eventually(listening, 10)
        assert not streaming.done()  # the stream waits for the decision
        decided = await alice.post(
            f"/admin/review/{sid}/decision",
            data={"csrf_token": token, "label": "low_risk", "note": "<b>checked</b> by hand"},
        )
        assert decided.status_code == 303
        result = await alice.get(f"{API}/{sid}/result", headers=ENTERPRISE)
        review = result.json()["review"]
        assert review["status"] == "overridden"
        assert review["label"] == "low_risk"
        assert review["note"] == "<b>checked</b> by hand"
        await asyncio.wait_for(streaming, 10)
        assert [name for name, _ in events][-2:] == ["result", "review"]
        assert events[-1][1] == review
        page = (await alice.get(f"/admin/review/{sid}")).text
        assert "&lt;b&gt;checked&lt;/b&gt; by hand" in page
        assert f'id="review-{sid}"' not in (await alice.get("/admin/review")).text


async def test_nul_bytes_and_out_of_range_times_are_refused_in_words(world):
    """Search fields with a NUL, times outside the calendar once in UTC, and review tenants and
    notes with control characters are 400/422 with a message, never a 500."""
    settings = await console_world(world)
    admin = {"X-API-Key": ADMIN_KEY}
    async with browser(settings) as client:
        await sign_in(client)
        for query, message in (
            ("tenant=a%00b", "tenant contains the control character U+0000"),
            ("label=%00", "label contains the control character U+0000"),
            ("since=0001-01-01T00:00:00%2B14:00", "is out of range once in UTC"),
            ("until=9999-12-31T23:59:59-14:00", "is out of range once in UTC"),
        ):
            page = await client.get(f"/admin/sessions?{query}")
            assert page.status_code == 400, query
            assert message in page.text, query
        listed = await client.get("/api/v3/review?tenant=%00", headers=admin)
        assert listed.status_code == 422 and "control character" in listed.text
        sid = uuid.uuid4()
        noted = await client.post(
            f"/api/v3/review/{sid}/decision", json={"note": "a\x00b"}, headers=admin
        )
        assert noted.status_code == 422 and "control character" in noted.text
        token = await csrf_of(client, "/admin/review")
        form = await client.post(
            f"/admin/review/{sid}/decision", data={"csrf_token": token, "note": "a\x00b"}
        )
        assert form.status_code == 422 and "control character" in form.text


async def test_the_review_queue_reports_only_a_session_id_as_decided(world):
    """`decided` names the session just decided; any other text is not shown."""
    settings = await console_world(world)
    async with browser(settings) as client:
        await sign_in(client)
        sid = uuid.uuid4()
        shown = await client.get(f"/admin/review?decided={sid}")
        assert f"Decision on {sid} recorded." in shown.text
        forged = await client.get("/admin/review?decided=your+account+is+suspended")
        assert forged.status_code == 200
        assert "suspended" not in forged.text and 'id="outcome"' not in forged.text


# --- workers ---

WORKER_ROW = re.compile(r'<tr id="worker-([^"]+)">(.*?)</tr>', re.S)


async def test_the_workers_page_lists_the_registry_online_then_offline(world):
    """A running worker shows with its host, pid, component, version and status online; once
    it stopped cleanly it shows offline."""
    settings = await console_world(world)
    worker = Worker(settings, WorkerOptions("claims", 1, 1), length_score)
    async with browser(settings) as client:
        await sign_in(client)

        async def rows() -> list[tuple[str, str]]:
            return WORKER_ROW.findall((await client.get("/admin/workers")).text)

        async with running(worker.run):
            (row,) = await eventually(rows, 20)
            worker_id, cells = row
            assert "claims" in cells and 'class="worker-online"' in cells
            assert str(os.getpid()) in cells  # in-process: this test's pid
        (row,) = await rows()
        assert row[0] == worker_id and 'class="worker-offline"' in row[1]
