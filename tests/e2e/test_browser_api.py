"""A browser with no internet uses the API: its docs with a key, a session's events.

Chromium (tests/browser.py) reaches loopback only; screenshots go to artifacts/screenshots/.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import httpx
import pytest
from playwright.sync_api import Page, Request, expect

from tests.browser import LOOPBACK, browser_page, screenshot
from tests.e2e.conftest import API

pytestmark = pytest.mark.e2e

KEY = "test-enterprise"
# How long the page follows a session: its verdict, the reconnect after it, and a margin.
FOLLOW_MS = 30_000


def off_machine(page: Page) -> list[str]:
    """Every URL the page sent, or tried to send, off this machine (the browser aborts them);
    one its own Content-Security-Policy stopped before it left (failure `csp`) is not sent."""
    sent: list[str] = []

    def note(request: Request) -> None:
        if urlsplit(request.url).hostname not in LOOPBACK and request.failure != "csp":
            sent.append(request.url)

    page.on("requestfailed", note)
    page.on("requestfinished", note)
    return sent


def test_the_docs_work_offline_and_try_it_out_sends_the_key(module_pipeline) -> None:
    """/docs renders from the API's own assets with the internet cut off; a key entered
    through Authorize goes with "Try it out", and the POST answers 202 with its links."""
    with browser_page(module_pipeline["base"]) as page:
        foreign = off_machine(page)
        page.goto("/docs")
        # The first render of Swagger UI's bundle on a loaded machine (CI's two cores) can take
        # longer than expect's 5 s default: seen once, the page up but not yet drawn.
        expect(page.locator(".swagger-ui .info .title")).to_contain_text(
            "verdict-pipeline", timeout=30_000
        )
        page.get_by_role("button", name="Authorize").first.click()
        dialog = page.locator(".dialog-ux")
        dialog.locator("input").first.fill(KEY)
        dialog.locator(".auth-btn-wrapper button.authorize").first.click()
        expect(dialog.locator(".auth-container").first).to_contain_text("Authorized")
        dialog.locator(".auth-btn-wrapper button.btn-done").first.click()
        operation = page.locator(
            "#operations-default-analyze_async_api_v3_pipeline_analyze_async_post"
        )
        operation.locator(".opblock-summary").click()
        operation.get_by_role("button", name="Try it out").click()
        operation.locator("textarea.body-param__text").fill(
            '{"content": "Share now, before they delete it!"}'
        )
        operation.get_by_role("button", name="Execute").click()
        answered = operation.locator(".live-responses-table tr.response")
        status = answered.locator(".response-col_status").first
        expect(status).to_have_text("202", timeout=15_000)
        body = answered.locator(".response-col_description").first
        expect(body).to_contain_text("events_url")
        curl = operation.locator(".curl-command").first.inner_text()
        print("screenshot:", screenshot(page, "api-docs-try-it-out"))
        page.goto("/redoc")
        expect(page.locator("h1").first).to_contain_text("verdict-pipeline", timeout=15_000)
        print("screenshot:", screenshot(page, "api-redoc"))
    assert f"X-API-Key: {KEY}" in curl
    assert foreign == []


# Follows `url` with an EventSource until it closes (or FOLLOW_MS pass): the events it had,
# how often it opened, and its final readyState (2: closed, it will not reconnect).
FOLLOW = """
([url, limit]) => new Promise((resolve) => {
  const seen = {events: [], opens: 0, errors: 0};
  const list = document.createElement("ol");
  document.body.replaceChildren(list);
  const source = new EventSource(url);
  const show = (text) => { const li = document.createElement("li"); li.textContent = text;
                           list.append(li); };
  source.onopen = () => { seen.opens += 1; show("open"); };
  for (const name of ["progress", "result", "end"]) {
    source.addEventListener(name, (e) => {
      seen.events.push({name, id: e.lastEventId, data: JSON.parse(e.data)});
      show(`${name} id=${e.lastEventId} ${e.data.slice(0, 120)}`);
    });
  }
  const finish = () => { seen.readyState = source.readyState; source.close(); resolve(seen); };
  source.onerror = () => {
    seen.errors += 1;
    show(`error, readyState ${source.readyState}`);
    if (source.readyState === EventSource.CLOSED) finish();
  };
  setTimeout(finish, limit);
})
"""


def test_a_browser_eventsource_follows_a_session_to_its_verdict_and_stops(module_pipeline) -> None:
    """The POST's events_url, opened by a plain EventSource (no key): progress events, one
    result with the verdict, then a single reconnect answered 204 closes it for good."""
    base = module_pipeline["base"]
    answer = httpx.post(
        f"{base}{API}/analyze-async",
        json={"content": "SHOCKING!!! They hide the TRUTH. Share now: https://bit.ly/x"},
        headers={"X-API-Key": KEY},
        timeout=10,
    )
    assert answer.status_code == 202, answer.text
    events_url = answer.json()["events_url"]
    with browser_page(base) as page:
        streams: list[str] = []
        page.on("request", lambda r: streams.append(r.url) if "/events" in r.url else None)
        page.goto("/healthz")  # the API's origin: an EventSource of the same origin
        seen = page.evaluate(FOLLOW, [events_url, FOLLOW_MS])
        print("screenshot:", screenshot(page, "eventsource-followed"))
    names = [e["name"] for e in seen["events"]]
    assert names[-1] == "result" and names.count("result") == 1 and "progress" in names
    assert seen["events"][-1]["id"] == "result"
    assert seen["events"][-1]["data"]["verdict"]["label"]
    assert seen["readyState"] == 2  # closed by the 204, not by the time limit
    assert seen["opens"] == 1 and len(streams) == 2  # the stream, and one reconnect: 204
