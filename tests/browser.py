"""A headless Chromium page for browser tests, driven by Playwright.

Debian's Chromium (`apt-get install chromium`, scripts/system-packages), never a browser that
Playwright would download. Requests to anything but loopback are refused, so a page that needs
the internet (a CDN asset) shows it by failing, as it would on an offline machine.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

from playwright.sync_api import Page, Route, sync_playwright

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}
# Screenshots are kept here for a person to look at after the run (git-ignored).
SCREENSHOTS = Path(__file__).resolve().parents[1] / "artifacts" / "screenshots"


def _loopback_only(route: Route) -> None:
    if urlsplit(route.request.url).hostname in LOOPBACK:
        route.continue_()
    else:
        route.abort("internetdisconnected")


@contextlib.contextmanager
def browser_page(base_url: str | None = None) -> Iterator[Page]:
    """A fresh page in a fresh browser context; off-machine requests are aborted."""
    if not Path(CHROMIUM).exists():
        raise AssertionError(
            f"no Chromium at {CHROMIUM}: install Debian's chromium (scripts/system-packages)"
        )
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            context = browser.new_context(base_url=base_url)
            context.route("**/*", _loopback_only)
            yield context.new_page()
            context.close()
        finally:
            browser.close()


def screenshot(page: Page, name: str) -> Path:
    """Save the page as artifacts/screenshots/<name>.png; the path is returned."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
