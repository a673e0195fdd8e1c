"""Calls to configured external services, with their failures turned into our errors.

Timeouts and 5xx (and 429) may pass: RetryableAnalysisError. Other 4xx and
replies that are not JSON will not: AnalysisError.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from shared.errors import AnalysisError, RetryableAnalysisError


def bounded(total_s: float, connect_s: float = 5.0) -> httpx.Timeout:
    """An explicit timeout: `connect_s` at most to connect, `total_s` for each other phase."""
    return httpx.Timeout(total_s, connect=min(connect_s, total_s))


def bearer(api_key: str | None) -> dict[str, str]:
    """Authorization header for an optional API key."""
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


async def post(
    http: httpx.AsyncClient, service: str, url: str, limits: httpx.Timeout, **kwargs: Any
) -> httpx.Response:
    """POST to a service; raise RetryableAnalysisError or AnalysisError on failure."""
    # httpx bounds each phase; a server that trickles bytes could still hold us, so the
    # whole exchange also gets a deadline.
    deadline = sum(t or 0.0 for t in (limits.connect, limits.read, limits.write))
    try:
        async with asyncio.timeout(deadline or None):
            response = await http.post(url, timeout=limits, **kwargs)
    except (httpx.TimeoutException, TimeoutError) as exc:
        raise RetryableAnalysisError(f"{service} timed out ({url})") from exc
    except httpx.TransportError as exc:
        raise RetryableAnalysisError(f"{service} unreachable ({url}): {exc}") from exc
    if response.status_code >= 500 or response.status_code == 429:
        raise RetryableAnalysisError(f"{service} answered {response.status_code}")
    if response.status_code >= 400:
        raise AnalysisError(
            f"{service} refused the request: {response.status_code} {response.text[:200]}"
        )
    return response


def json_object(response: httpx.Response, service: str) -> dict[str, Any]:
    """The reply as a JSON object, or AnalysisError."""
    try:
        body = response.json()
    except ValueError as exc:
        raise AnalysisError(f"{service} answered with something other than JSON") from exc
    if not isinstance(body, dict):
        raise AnalysisError(f"{service} answered with JSON that is not an object")
    return body
