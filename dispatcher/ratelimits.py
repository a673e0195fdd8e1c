"""Rate-limit policy as plain functions: parsing the per-plan limits, and the response headers.

Header fields follow the IETF draft "RateLimit header fields for HTTP" (draft 06):
`RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` describe the window closest
to being exhausted; `RateLimit-Policy` lists every window as `amount;w=seconds`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import limits
from limits import RateLimitItem


@dataclass(frozen=True)
class Usage:
    """One window of a limit after a request was counted in it."""

    limit: int
    window_s: int
    count: int  # requests counted in the current window, this one included
    reset_in_s: float  # until the current window ends and its count starts again

    @property
    def remaining(self) -> int:
        return max(0, self.limit - self.count)

    @property
    def exceeded(self) -> bool:
        return self.count > self.limit


def parse_limits(text: str) -> tuple[RateLimitItem, ...]:
    """The windows of a limit string such as "10/second;300/minute"; ValueError if it is not one."""
    return tuple(limits.parse_many(text))


@lru_cache(maxsize=256)
def parsed_limits(text: str) -> tuple[RateLimitItem, ...]:
    """`parse_limits`, remembered: a tenant's limit is parsed once, not per request."""
    return parse_limits(text)


def parse_plan_limits(by_plan: Mapping[int, str]) -> dict[int, tuple[RateLimitItem, ...]]:
    """Each plan's windows, parsed once at start-up."""
    return {plan: parse_limits(text) for plan, text in by_plan.items()}


def retry_after_s(usages: Sequence[Usage]) -> int | None:
    """Whole seconds until every exceeded window has reset; None when none is exceeded."""
    waits = [u.reset_in_s for u in usages if u.exceeded]
    return max(1, math.ceil(max(waits))) if waits else None


def headers(usages: Sequence[Usage]) -> list[tuple[bytes, bytes]]:
    """The RateLimit-* fields for these windows (raw ASGI header pairs); none without windows."""
    if not usages:
        return []
    # The window closest to exhaustion; between equals, the one that resets last.
    tightest = min(usages, key=lambda u: (u.remaining, -u.reset_in_s))
    policy = ", ".join(f"{u.limit};w={u.window_s}" for u in usages)
    return [
        (b"ratelimit-limit", str(tightest.limit).encode()),
        (b"ratelimit-remaining", str(tightest.remaining).encode()),
        (b"ratelimit-reset", str(max(0, math.ceil(tightest.reset_in_s))).encode()),
        (b"ratelimit-policy", policy.encode()),
    ]
