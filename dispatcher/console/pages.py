"""Rendering console pages: Jinja2 templates shipped in the package, every value escaped, and
the headers every console answer carries."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, FileSystemLoader

from dispatcher.console.cookies import ConsoleSession, SessionCookies
from dispatcher.console.overview import sparkline

# Every console page lives under this path.
CONSOLE = "/admin"
HERE = Path(__file__).parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"

# Only the console's own files: no CDN, no inline script, no framing.
HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
        "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
}


def pretty(value: Any) -> str:
    """A JSON value indented for reading (escaped by the template like any text)."""
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=str)


def when(value: datetime | float | None) -> str:
    """A time as UTC `YYYY-MM-DD HH:MM:SS.mmm`; a Unix time is converted; None is blank."""
    if value is None:
        return ""
    if isinstance(value, int | float):
        value = datetime.fromtimestamp(value, UTC)
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def age(seconds: float | None) -> str:
    """Seconds as the largest unit that fits: `42 s`, `3 min`, `2 h`; blank for None."""
    if seconds is None:
        return ""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _environment() -> Environment:
    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=True)
    env.filters.update(pretty=pretty, when=when, age=age, sparkline=sparkline)
    return env


ENVIRONMENT = _environment()


def render(
    request: Request,
    template: str,
    cookies: SessionCookies | None,
    session: ConsoleSession | None,
    status_code: int = 200,
    **context: Any,
) -> HTMLResponse:
    """The page, with the session's CSRF token for its forms."""
    csrf = cookies.csrf_token(session) if cookies and session else ""
    html = ENVIRONMENT.get_template(template).render(
        request=request, csrf_token=csrf, signed_in=bool(session and session.key_tag), **context
    )
    return HTMLResponse(html, status_code, headers=HEADERS)


def problem_page(code: int, message: str, headers: Mapping[str, str] | None = None) -> HTMLResponse:
    """A refusal on a console page as a page a person reads (the API's own stay JSON)."""
    html = ENVIRONMENT.get_template("problem.html").render(code=code, message=message)
    return HTMLResponse(html, code, headers={**HEADERS, **(headers or {})})
