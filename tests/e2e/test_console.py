"""The admin console in a real browser (Debian's Chromium under Playwright) against the whole
pipeline under `verdict up`: sign in, live overview, sessions, workers, tenants. Screenshots
of each page, the sign-in page included, go to artifacts/screenshots/."""

from __future__ import annotations

import asyncio
import json
import re
import secrets
import threading
import time

import httpx
import pytest
from playwright.sync_api import Page, expect

from dispatcher.queue_watch import FIGURES
from dispatcher.submit import first_tasks
from shared import sessions, tenant_store
from shared.api_keys import hashed
from shared.broker import Publisher, connect
from shared.db import create_pool
from shared.messages import encode
from shared.names import Names
from shared.sessions import NewSession
from shared.signing import private_task_key, sign_task
from shared.tenant_settings import TenantSettings
from tests.browser import browser_page, screenshot
from tests.conftest import TEST_API_KEYS
from tests.e2e.conftest import API, poll_result

pytestmark = pytest.mark.e2e

ADMIN_KEY = "test-console-admin"
# Sessions of this module's own tenant: the database is shared with the other e2e tests.
TENANT = "console-tenant"
KEYS = {
    **TEST_API_KEYS,
    "console-enterprise": {"tenant": TENANT, "plan": 6},
    ADMIN_KEY: {"tenant": "ops", "plan": 6, "scopes": ["admin"]},
}
ENTERPRISE = {"X-API-Key": "console-enterprise"}
# Long enough for several refreshes of the overview while sessions run.
SESSIONS = 40
# A tenant with settings of its own for the Tenants page; no session of this module is its.
SET_TENANT = "console-settings-tenant"


@pytest.fixture(scope="module")
def module_pipeline_env(services) -> dict[str, str]:
    return {
        # The test broker's user can do what the operator role does (read the DLQ, replay).
        "OPERATOR_AMQP_URL": services.amqp_url,
        "API_KEYS": json.dumps(hashed(KEYS)),
        "ADMIN_SESSION_KEY": secrets.token_urlsafe(32),
        # Every verdict with a risk label goes to human review.
        "REVIEW_LABEL_AT_LEAST": "low_risk",
    }


def sign_in(page: Page, key: str = ADMIN_KEY) -> None:
    page.goto("/admin")
    expect(page).to_have_url(re.compile(r"/admin/login$"))
    page.fill("#api_key", key)
    page.click("button[type=submit]")


# The API's copy of the worker registry lags it by up to API_WORKERS_TTL_S (3 s): just after
# start-up it may still refuse work the registry already shows a worker for.
ACCEPT_WITHIN_S = 15


def submit(base: str, count: int, content: str = "The cure they do not want you to know") -> list:
    """Submit `count` sessions, each retried as a client would on a 503 with Retry-After."""
    with httpx.Client(base_url=base, timeout=10) as client:
        ids = []
        for n in range(count):
            body = {"content": f"{content} #{n}"}
            deadline = time.monotonic() + ACCEPT_WITHIN_S
            r = client.post(f"{API}/analyze-async", json=body, headers=ENTERPRISE)
            while r.status_code == 503 and time.monotonic() < deadline:
                time.sleep(float(r.headers.get("retry-after", "1")))
                r = client.post(f"{API}/analyze-async", json=body, headers=ENTERPRISE)
            assert r.status_code == 202, r.text
            ids.append(r.json()["session_id"])
        return ids


def refresh_state(page: Page) -> str:
    """What the overview's refreshes did, and what the live figures say when asked now: for
    a failure message."""
    live = page.locator("#live")
    asked = page.request.get("/admin/overview/live")
    found = re.search(r'id="per-hour-completed"[^>]*>([^<]*)<', asked.text())
    return (
        f"refreshed at {live.get_attribute('data-refreshed-at')} (page clock now "
        f"{page.evaluate('Date.now()')}), "
        f"refresh error {live.get_attribute('data-refresh-error')}; "
        f"/admin/overview/live now: HTTP {asked.status}, completed in the last hour "
        f"{found.group(1) if found else 'not found'}"
    )


def test_an_operator_signs_in_watches_the_overview_and_opens_a_session(module_pipeline):
    """Signed in with the admin key, the overview's numbers change by themselves while
    sessions run; a session found by search shows its verdict and timeline; workers list."""
    base = module_pipeline["base"]
    asyncio.run(give_settings(module_pipeline["env"], SET_TENANT))
    with browser_page(base) as page:
        page.goto("/admin")
        expect(page).to_have_url(re.compile(r"/admin/login$"))
        screenshot(page, "console-login")
        sign_in(page, "test-enterprise")
        expect(page.locator(".error")).to_contain_text("no admin scope")
        page.fill("#api_key", ADMIN_KEY)
        page.click("button[type=submit]")
        expect(page).to_have_url(re.compile(r"/admin$"))
        # The database is shared by the session's e2e tests: count from what is there now.
        before = int(page.locator("#per-hour-completed").inner_text())

        ids: list[str] = []
        running = threading.Thread(target=lambda: ids.extend(submit(base, SESSIONS)))
        running.start()
        # No reload: the page's script refreshes the figures as sessions finish.
        try:
            expect(page.locator("#per-hour-completed")).not_to_have_text(
                str(before), timeout=30_000
            )
        except AssertionError as failed:
            raise AssertionError(f"{failed}\n{refresh_state(page)}") from None
        expect(page.locator("#latency-n")).not_to_have_text("0", timeout=30_000)
        screenshot(page, "console-overview-running")
        running.join(60)
        with httpx.Client(base_url=base) as client:
            for sid in ids:
                poll_result(client, sid, ENTERPRISE)
        # At least ours: sessions of earlier tests may still be finishing in the same hour.
        page.wait_for_function(
            "n => Number(document.querySelector('#per-hour-completed').textContent) >= n",
            arg=before + SESSIONS,
            timeout=15_000,
        )
        # Sessions of plan 6 ran: its claims queue has a chart of each figure, with points.
        for figure in FIGURES:
            chart = page.locator(f"#queue-claims-6 svg.chart-{figure} polyline")
            expect(chart).to_have_attribute("points", re.compile(r"^\d"))
        screenshot(page, "console-overview")

        page.click("nav >> text=Sessions")
        page.fill("input[name=tenant]", TENANT)
        page.select_option("select[name=status]", "completed")
        page.click("form.search button[type=submit]")
        expect(page.locator("table.sessions a")).to_have_count(SESSIONS)
        screenshot(page, "console-sessions")
        page.click(f"a[href='/admin/sessions/{ids[0]}']")
        expect(page.locator("#session-status")).to_have_text("completed")
        expect(page.locator("#session-input")).to_contain_text("The cure they do not want")
        expect(page.locator("#verdict")).to_be_visible()
        expect(page.locator("ol.timeline li").first).to_contain_text("accepted")
        expect(page.locator("ol.timeline li").last).to_contain_text("final: completed")
        screenshot(page, "console-session")

        page.click("nav >> text=Workers")
        expect(page.locator("table.workers td.worker-online").first).to_be_visible()
        screenshot(page, "console-workers")

        page.click("nav >> text=Tenants")
        expect(page.locator(f"#tenant-{SET_TENANT}")).to_contain_text("protected_brands")
        screenshot(page, "console-tenants")

        page.click("text=Sign out")
        expect(page).to_have_url(re.compile(r"/admin/login$"))
        page.goto("/admin")
        expect(page).to_have_url(re.compile(r"/admin/login$"))


def test_the_overview_says_when_its_figures_stopped_refreshing_and_recovers(module_pipeline):
    """A refresh the API answers with an error, or does not answer, puts a note above the
    figures and the page keeps trying; the next good refresh takes the note away."""
    with browser_page(module_pipeline["base"]) as page:
        sign_in(page)
        expect(page).to_have_url(re.compile(r"/admin$"))
        live = page.locator("#live")
        page.route("**/admin/overview/live", lambda route: route.fulfill(status=500, body="x"))
        expect(live).to_have_attribute("data-refresh-error", "HTTP 500", timeout=10_000)
        screenshot(page, "console-overview-not-refreshed")
        page.unroute("**/admin/overview/live")
        expect(live).not_to_have_attribute("data-refresh-error", re.compile("."), timeout=10_000)
        refreshed = live.get_attribute("data-refreshed-at")
        assert refreshed is not None
        expect(live).not_to_have_attribute("data-refreshed-at", refreshed, timeout=10_000)


def test_a_reviewer_overrides_a_queued_verdict_and_the_result_api_says_so(module_pipeline):
    """A finished session's verdict waits in the review queue; claimed and overridden with a
    note in the console, the result API returns the review."""
    base = module_pipeline["base"]
    (sid,) = submit(base, 1, "Miracle cure hidden by doctors")
    with httpx.Client(base_url=base) as client:
        label = poll_result(client, sid, ENTERPRISE)["verdict"]["label"]
    override = "critical_risk" if label != "critical_risk" else "low_risk"
    with browser_page(base) as page:
        sign_in(page)
        page.click("nav >> text=Review")
        row = page.locator(f"#review-{sid}")
        expect(row).to_contain_text(label)
        screenshot(page, "console-review")
        row.locator("button", has_text="Claim").click()
        expect(page).to_have_url(re.compile(f"/admin/review/{sid}$"))
        expect(page.locator("#review-status")).to_contain_text("claimed by ops")
        page.select_option("#decision-label", override)
        page.fill("#decision-note", "checked against the original source")
        screenshot(page, "console-review-item")
        page.click("#decide")
        expect(page.locator("#outcome")).to_contain_text(sid)
        expect(page.locator(f"#review-{sid}")).to_have_count(0)
    with httpx.Client(base_url=base) as client:
        review = client.get(f"{API}/{sid}/result", headers=ENTERPRISE).json()["review"]
    assert review["status"] == "overridden"
    assert review["label"] == override
    assert review["note"] == "checked against the original source"


async def give_settings(env: dict[str, str], tenant: str) -> None:
    """Settings of the tenant's own, as `verdict tenants set` stores them."""
    pool = await create_pool(env["DATABASE_URL"], max_size=1)
    try:
        await tenant_store.change(
            pool, tenant, lambda _: TenantSettings(protected_brands=("examplebank.com",))
        )
    finally:
        await pool.close()


async def plant_dead_letter(env: dict[str, str], component: str = "claims") -> str:
    """A session (TENANT, plan 3) whose tasks all go to their queues but `component`'s,
    which goes straight to the DLQ, signed, as a worker dead-letters it: its id."""
    new = NewSession(sessions.new_session_id(), TENANT, 3, "text", {"content": "x" * 80}, 600)
    pool = await create_pool(env["DATABASE_URL"], max_size=1)
    try:
        await sessions.create(pool, new)
    finally:
        await pool.close()
    key = private_task_key(env["TASK_SIGNING_KEY"])
    names = Names(env["TOPOLOGY_PREFIX"])
    connection = await connect(env["AMQP_URL"], "test-plant")
    try:
        publisher = await Publisher(connection, names, 5).open()
        for task in first_tasks(new, None):
            signed = sign_task(key, task)
            if task.component != component:
                await publisher.task(signed, tenant=new.tenant)
                continue
            headers = {"sessionId": new.id, "component": component, "tenant": new.tenant}
            queue = names.task_queue(component, new.plan)
            await publisher.dead_letter(
                encode(signed), headers, "planted by the console test", queue, task.priority
            )
    finally:
        await connection.close()
    return new.id


def waiting_on_claims(client: httpx.Client, sid: str, timeout: float = 60) -> None:
    """Wait until the session's other components are done and only claims is pending."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = client.get(f"{API}/{sid}/queue-status", headers=ENTERPRISE).json()
        if status["pending_components"] == ["claims"]:
            return
        time.sleep(0.2)
    raise AssertionError(f"session {sid} not waiting on claims alone: {status}")


def test_an_operator_replays_a_dead_letter_and_the_session_finishes(module_pipeline):
    """A session waits on its dead-lettered claims task; found by tenant and reason in the
    console and replayed, the task runs and the session reaches its verdict."""
    base = module_pipeline["base"]
    sid = asyncio.run(plant_dead_letter(module_pipeline["env"]))
    with httpx.Client(base_url=base) as client:
        waiting_on_claims(client, sid)
    with browser_page(base) as page:
        sign_in(page)
        page.click("nav >> text=Dead letters")
        page.fill("input[name=tenant]", TENANT)
        page.fill("input[name=reason]", "planted")
        page.click("form.search button[type=submit]")
        rows = page.locator("table.letters tr[id^=letter-]")
        expect(rows).to_have_count(1)
        expect(rows.first).to_contain_text("planted by the console test")
        expect(rows.first.locator(".replays")).to_have_text("0")
        screenshot(page, "console-dead-letters")
        rows.first.locator("a").click()
        expect(page.locator("dl.facts")).to_contain_text(sid)
        screenshot(page, "console-dead-letter")
        page.click("#replay-one")
        expect(page.locator("#outcome")).to_contain_text("1 replayed")
        expect(page.locator("table.letters tr[id^=letter-]")).to_have_count(0)
    with httpx.Client(base_url=base) as client:
        result = poll_result(client, sid, ENTERPRISE)
    assert result["status"] == "completed"
    assert "claims" in result["completed_components"]
