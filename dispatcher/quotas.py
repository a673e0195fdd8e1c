"""Quotas: 429 before anything is stored or queued.

- Rate limits per API key and plan, submissions and reads apart, counted in Redis with the
  `limits` library's fixed windows.
- Unknown keys are counted per client address; past `AUTH_FAILURE_LIMIT` the address is
  refused everything, valid keys included, until its window ends. Were a valid key let
  through, a guesser would learn from the answer which guess was right: the throttle would
  not slow guessing at all.
- Sessions a tenant has processing are counted in PostgreSQL, the system of record, and
  capped per plan.

Fixed windows rather than moving ones: one counter and one script call per window per
request, where a moving window keeps one list entry per request (12,000 a minute for an
enterprise key) and scans it. A fixed window can let twice its amount through across a
window boundary; the short per-second window of every plan bounds such a burst. Its reset
is exact (the counter's expiry), so `Retry-After` is too. A refused request is counted like
any other: hammering a closed window spends the longer windows' budget, it buys nothing.

Redis is a cache here, not the record: when it cannot be reached the rate limits and the
address throttle fail open (one warning per outage, a metric for every request let through
unchecked), since refusing every client would turn a cache outage into an API outage.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Sequence
from typing import Any, TypeVar

import asyncpg
import structlog
from fastapi import HTTPException, Request, status
from limits import RateLimitItem
from limits.aio.storage import RedisStorage
from prometheus_client import Counter
from redis.asyncio import Redis
from redis.exceptions import RedisError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from dispatcher import audit
from dispatcher.auth import Caller, authenticate, key_from
from dispatcher.ratelimits import Usage, headers, parse_limits, parse_plan_limits, retry_after_s
from shared.settings import Settings

log = structlog.get_logger(__name__)

UNCHECKED = Counter(
    "verdict_quota_unchecked_total",
    "Requests let through without a rate-limit check because Redis did not answer",
    ["check"],
)

# A rate-limit check waits this long for Redis before it lets the request through: far above
# a loopback round trip, far below what a client would notice.
REDIS_TIMEOUT_S = 0.25
# Nothing says when a tenant's sessions will finish; a few seconds lets some of them.
IN_FLIGHT_RETRY_AFTER_S = 5
# What the rate limit leaves in the request's state for `RateLimitHeaders`.
HEADERS = "ratelimit_headers"

T = TypeVar("T")

IN_FLIGHT_SQL = """
SELECT (SELECT count(*) FROM (SELECT 1 FROM sessions
                              WHERE tenant = $1 AND status = 'processing' LIMIT $2) AS open
       ) AS open,
       $3::text IS NOT NULL
       AND EXISTS (SELECT 1 FROM sessions WHERE tenant = $1 AND idempotency_key = $3) AS replay
"""


class Quotas:
    """The API's quotas, read from the settings once; Redis for windows, Postgres for caps."""

    def __init__(self, settings: Settings, redis: Redis, pool: asyncpg.Pool) -> None:
        self.settings = settings
        self.enabled = settings.quotas_enabled
        self.pool = pool
        self.submissions = parse_plan_limits(settings.rate_limits_by_plan)
        self.reads = parse_plan_limits(settings.read_rate_limits_by_plan)
        self.auth_failures = parse_limits(settings.auth_failure_limit)
        self.caps = settings.max_in_flight_by_plan
        # The app's connection pool (the storage's options are typed for scalars only), and
        # keys under the deployment's Redis prefix.
        shared_pool: dict[str, Any] = {"connection_pool": redis.connection_pool}
        self.storage = RedisStorage(
            f"async+{settings.redis_url}",
            implementation="redispy",
            key_prefix=f"{settings.key_prefix}:ratelimit",
            **shared_pool,
        )
        self.degraded = False

    async def admit(self, request: Request) -> Caller:
        """The caller of a request, after the address throttle, the key and its rate limit."""
        address = request.client.host if request.client else "unknown"
        if self.enabled:
            await self._refuse_throttled_address(request, address)
        key = key_from(request)
        try:
            who = authenticate(self.settings, key)
        except HTTPException:
            request.state.refusal_reason = "unknown_key" if key else "missing_key"
            if key and self.enabled:
                await self._checked("auth_failures", self._charge(self.auth_failures, address))
            raise
        setattr(request.state, audit.TENANT, who.tenant)
        if self.enabled and key:
            await self._charge_key(request, who, key)
        return who

    async def hold_in_flight(self, who: Caller, idempotency_key: str | None) -> None:
        """429 when the tenant already has its plan's cap of sessions processing.

        A replay of an idempotency key the tenant used before starts nothing, so it passes.
        Concurrent submissions may overshoot the cap by as many as are checked at the same
        moment, a number the per-second rate limit bounds."""
        if not self.enabled:
            return
        cap = self.caps[who.plan]
        row = await self.pool.fetchrow(IN_FLIGHT_SQL, who.tenant, cap, idempotency_key)
        if row["open"] >= cap and not row["replay"]:
            raise HTTPException(
                status.HTTP_429_TOO_MANY_REQUESTS,
                f"{row['open']} sessions of this tenant are still processing, the most this "
                f"plan allows; retry when some have finished",
                headers={"Retry-After": str(IN_FLIGHT_RETRY_AFTER_S)},
            )

    async def _refuse_throttled_address(self, request: Request, address: str) -> None:
        usages = await self._checked("address", self._peek(self.auth_failures, address))
        wait = retry_after_s(usages or ())
        if wait is None:
            return
        request.state.refusal_reason = "address_throttled"
        setattr(request.state, HEADERS, headers(usages or ()))
        raise HTTPException(
            status.HTTP_429_TOO_MANY_REQUESTS,
            "too many unknown API keys from this address; retry later",
            headers={"Retry-After": str(wait)},
        )

    async def _charge_key(self, request: Request, who: Caller, key: str) -> None:
        reading = request.method in ("GET", "HEAD")
        windows = (self.reads if reading else self.submissions)[who.plan]
        scope = "read" if reading else "submit"
        bucket = (scope, who.tenant, audit.key_digest(key), str(who.plan))
        usages = await self._checked(scope, self._charge(windows, *bucket))
        if usages is None:
            return
        setattr(request.state, HEADERS, headers(usages))
        wait = retry_after_s(usages)
        if wait is not None:
            request.state.refusal_reason = f"rate_limited_{scope}"
            kind = "reads" if reading else "submissions"
            raise HTTPException(
                status.HTTP_429_TOO_MANY_REQUESTS,
                f"rate limit of this API key's plan reached for {kind}; retry in {wait} s",
                headers={"Retry-After": str(wait)},
            )

    async def _charge(self, windows: Sequence[RateLimitItem], *bucket: str) -> list[Usage]:
        """Count one request in every window of the bucket."""
        keys = [w.key_for(*bucket) for w in windows]
        counts = await asyncio.gather(
            *(self.storage.incr(k, w.get_expiry()) for k, w in zip(keys, windows, strict=True))
        )
        return await self._usages(windows, keys, list(counts))

    async def _peek(self, windows: Sequence[RateLimitItem], *bucket: str) -> list[Usage]:
        """The bucket's windows as if this request were counted, without counting it."""
        keys = [w.key_for(*bucket) for w in windows]
        counts = await asyncio.gather(*(self.storage.get(k) for k in keys))
        return await self._usages(windows, keys, [c + 1 for c in counts])

    async def _usages(
        self, windows: Sequence[RateLimitItem], keys: list[str], counts: list[int]
    ) -> list[Usage]:
        ends = await asyncio.gather(*(self.storage.get_expiry(k) for k in keys))
        clock = time.time()  # the storage gives a window's end as a wall-clock time
        return [
            Usage(w.amount, w.get_expiry(), count, max(0.0, end - clock))
            for w, count, end in zip(windows, counts, ends, strict=True)
        ]

    async def _checked(self, check: str, call: Awaitable[T]) -> T | None:
        """The call's result, or None (let the request through) when Redis does not answer."""
        try:
            async with asyncio.timeout(REDIS_TIMEOUT_S):
                result = await call
        except (RedisError, OSError, TimeoutError) as exc:
            UNCHECKED.labels(check).inc()
            if not self.degraded:
                log.warning("rate limits unchecked: redis unavailable", error=repr(exc))
                self.degraded = True
            return None
        if self.degraded:
            log.info("rate limits checked again: redis answers")
            self.degraded = False
        return result


class RateLimitHeaders:
    """Plain-ASGI middleware: adds the RateLimit-* fields a quota check left for the response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        state = scope.setdefault("state", {})

        async def add(message: Message) -> None:
            extra = state.get(HEADERS)
            if extra and message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), *extra]
            await send(message)

        await self.app(scope, receive, add)
