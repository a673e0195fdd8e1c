"""Quotas: 429 before anything is stored or queued.

- Rate limits per API key and plan, submissions and reads apart, counted in Redis with the
  `limits` library's fixed windows (without Redis, the same windows in PostgreSQL).
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
is the counter's expiry, read from Redis at every refusal, so `Retry-After` is exact. A
refused request is counted like any other: hammering a closed window spends the longer
windows' budget, it buys nothing.

Redis is a cache here, not the record: when it cannot be reached the rate limits and the
address throttle fail open (one warning per outage, a metric for every request let through
unchecked), since refusing every client would turn a cache outage into an API outage.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import asyncpg
import structlog
from fastapi import HTTPException, Request, status
from limits import RateLimitItem
from limits.aio.storage import RedisStorage
from prometheus_client import Counter
from redis.exceptions import RedisError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from dispatcher import audit
from dispatcher.auth import Caller, authenticated, key_from
from dispatcher.ratelimits import (
    Usage,
    headers,
    parse_limits,
    parse_plan_limits,
    parsed_limits,
    retry_after_s,
)
from shared import db as database
from shared import tenants
from shared.ephemera import Ephemera
from shared.house import House
from shared.keys import Keys
from shared.settings import Settings
from shared.tenant_store import TenantSettingsCache

log = structlog.get_logger(__name__)

UNCHECKED = Counter(
    "verdict_quota_unchecked_total",
    "Requests let through without a rate-limit check because Redis did not answer",
    ["check"],
)

# A rate-limit check waits this long for its store before it lets the request through: far
# above a loopback round trip to Redis and above the pauses of a busy process (a timeout counts
# the event loop's own lag: at 0.25 s a loaded machine once let a request past its limit).
# During an outage only the one request probing the store waits (StoreBreaker).
REDIS_TIMEOUT_S = 1.0
# Without Redis the windows are rows of PostgreSQL, reached through a pool that may first open
# a connection (a connect and its type set-up, several round trips on a loaded server).
TABLE_TIMEOUT_S = 2.0
# A wait that ended this much later than it was due was the event loop's own lag (a request's
# work held the process), not the store's: the same call gets this long more rather than being
# counted as the store away, which would let requests through unchecked (answered_within).
LOOP_LAG_S = 0.25
# After the store failed to answer, requests go unchecked this long before one tries it again.
REDIS_RETRY_S = 1.0
# Window ends remembered at most: bounds the memory an attack from many addresses can take.
MAX_REMEMBERED_ENDS = 10_000
# Nothing says when a tenant's sessions will finish; a few seconds lets some of them.
IN_FLIGHT_RETRY_AFTER_S = 5
# What the rate limit leaves in the request's state for `RateLimitHeaders`.
HEADERS = "ratelimit_headers"
# Opens the bucket of bad events tokens an address presented, apart from its unknown keys'.
_TOKENS = ("events-token",)
# Reads one session's events token may make: an EventSource reconnects every 3 s (20 a
# minute), and a few tabs may follow one session.
TOKEN_READ_LIMIT = "5/second;60/minute"

T = TypeVar("T")


def too_many(detail: str, retry_after: int) -> HTTPException:
    return HTTPException(
        status.HTTP_429_TOO_MANY_REQUESTS, detail, headers={"Retry-After": str(retry_after)}
    )


class Quotas:
    """The API's quotas, read from the settings once; the house for windows (Redis, or
    PostgreSQL without it), Postgres for caps."""

    def __init__(
        self,
        settings: Settings,
        house: House,
        pool: asyncpg.Pool,
        tenant_settings: TenantSettingsCache | None = None,
    ) -> None:
        self.settings = settings
        # A tenant's own rate limits replace its plan's (shared/tenant_settings.py).
        self.tenant_settings = tenant_settings
        self.enabled = settings.quotas_enabled
        self.pool = pool
        self.windows = WindowCounts(settings, house)
        self.submissions = parse_plan_limits(settings.rate_limits_by_plan)
        self.reads = parse_plan_limits(settings.read_rate_limits_by_plan)
        self.auth_failures = parse_limits(settings.auth_failure_limit)
        self.token_reads = parse_limits(TOKEN_READ_LIMIT)
        self.caps = settings.max_in_flight_by_plan

    async def admit(self, request: Request) -> Caller:
        """The caller of a request, after the address throttle, the key and its rate limit."""
        address = request.client.host if request.client else "unknown"
        if self.enabled:
            await self._refuse_throttled_address(request, address)
        key = key_from(request)
        try:
            who = authenticated(request, self.settings)
        except HTTPException:
            audit.note(reason="unknown_key" if key else "missing_key")
            if key and self.enabled:
                await self.windows.charge("auth_failures", self.auth_failures, address)
            raise
        audit.note(tenant=who.tenant)
        if self.enabled and key:
            await self._charge_key(request, who, key)
        return who

    async def admit_token(
        self, request: Request, check: Callable[[], Caller], session_id: str
    ) -> Caller:
        """The caller an events token stands for (`check`, which raises 401 for a bad one),
        after the address throttles. Bad tokens are counted against the address in a bucket
        of their own (under AUTH_FAILURE_LIMIT too): stale event links a browser retries must
        not lock the address's API keys out. Good ones are counted per session
        (TOKEN_READ_LIMIT): an open stream is bounded by the stream caps, but a final
        session's token answers at once and closes, and a hostile probe read one 433 times a
        second (another tenant's reads slowed twentyfold)."""
        address = request.client.host if request.client else "unknown"
        if self.enabled:
            await self._refuse_throttled_address(request, address)
            await self._refuse_throttled_tokens(request, address)
        try:
            who = check()
        except HTTPException:
            audit.note(reason="bad_events_token")
            if self.enabled:
                await self.windows.charge("token_failures", self.auth_failures, *_TOKENS, address)
            raise
        audit.note(tenant=who.tenant)
        if self.enabled:
            await self._charge_token(request, who, session_id)
        return who

    async def _charge_token(self, request: Request, who: Caller, session_id: str) -> None:
        bucket = ("token-read", who.tenant, session_id[:64])
        usages = await self.windows.charge("token_reads", self.token_reads, *bucket)
        wait = retry_after_s(usages or ())
        if usages and wait is not None:
            audit.note(reason="rate_limited_token")
            setattr(request.state, HEADERS, headers(usages))
            raise too_many(f"too many reads with this events token; retry in {wait} s", wait)

    async def enforce_in_flight_cap(self, who: Caller, idempotency_key: str | None) -> None:
        """429 when the tenant already has its plan's cap of sessions processing.

        A replay of an idempotency key the tenant used before starts nothing, so it passes.
        Concurrent submissions may overshoot the cap by as many as are checked at the same
        moment, a number the per-second rate limit bounds."""
        if not self.enabled:
            return
        cap = self.caps[who.plan]
        in_flight = await tenants.in_flight(self.pool, who.tenant, cap, idempotency_key)
        if in_flight.processing >= cap and not in_flight.replay:
            audit.note(reason="in_flight_cap")
            raise too_many(
                f"{in_flight.processing} sessions of this tenant are still processing, the most "
                "this plan allows; retry when some have finished",
                IN_FLIGHT_RETRY_AFTER_S,
            )

    async def _refuse_throttled_address(self, request: Request, address: str) -> None:
        usages = await self.windows.peek("address", self.auth_failures, address)
        wait = retry_after_s(usages or ())
        if usages and wait is not None:
            audit.note(reason="address_throttled")
            setattr(request.state, HEADERS, headers(usages))
            raise too_many("too many unknown API keys from this address; retry later", wait)

    async def _refuse_throttled_tokens(self, request: Request, address: str) -> None:
        usages = await self.windows.peek("token_failures", self.auth_failures, *_TOKENS, address)
        wait = retry_after_s(usages or ())
        if usages and wait is not None:
            audit.note(reason="address_throttled")
            setattr(request.state, HEADERS, headers(usages))
            raise too_many("too many bad events tokens from this address; retry later", wait)

    async def _charge_key(self, request: Request, who: Caller, key: str) -> None:
        reading = request.method in ("GET", "HEAD")
        scope = "read" if reading else "submit"
        windows = await self._tenant_windows(who.tenant, reading)
        if windows is None:
            windows = (self.reads if reading else self.submissions)[who.plan]
        bucket = (scope, who.tenant, audit.key_digest(key), str(who.plan))
        usages = await self.windows.charge(scope, windows, *bucket)
        if usages is None:
            return
        setattr(request.state, HEADERS, headers(usages))
        wait = retry_after_s(usages)
        if wait is not None:
            audit.note(reason=f"rate_limited_{scope}")
            kind = "reads" if reading else "submissions"
            raise too_many(f"rate limit reached: no more {kind} on this key for {wait} s", wait)

    async def _tenant_windows(self, tenant: str, reading: bool) -> tuple[RateLimitItem, ...] | None:
        """The tenant's own limit for reads or submissions, or None (its plan's then)."""
        if self.tenant_settings is None:
            return None
        try:
            record = await self.tenant_settings.get(tenant)
        except (*database.UNAVAILABLE, asyncpg.PostgresError) as exc:
            # As the counters do with Redis away: rate limits fail open, here to the plan's.
            log.warning("tenant settings unreadable, plan limits apply", error=repr(exc))
            return None
        if record is None:
            return None
        limit = record.settings.read_rate_limit if reading else record.settings.rate_limit
        return parsed_limits(limit) if limit else None


class WindowCounts:
    """Fixed-window counters in the house (the `limits` library's storage on Redis; its
    calls, over PostgreSQL's ephemera, without Redis), failing open.

    A method answers None, and the request goes through unchecked, when the store does not."""

    def __init__(self, settings: Settings, house: House) -> None:
        prefix = Keys(settings.key_prefix).rate_limits
        self.storage: Any
        if house.redis is not None:
            # The app's connection pool (the storage's options are typed for scalars only),
            # and keys under the deployment's Redis prefix.
            shared_pool: dict[str, Any] = {"connection_pool": house.redis.connection_pool}
            self.storage = RedisStorage(
                f"async+{settings.redis_url}",
                implementation="redispy",
                key_prefix=prefix,
                **shared_pool,
            )
        else:
            assert house.ephemera is not None
            self.storage = TableWindows(house.ephemera, prefix)
        self.timeout_s = REDIS_TIMEOUT_S if house.redis is not None else TABLE_TIMEOUT_S
        self.breaker = StoreBreaker(REDIS_RETRY_S)
        # When each window seen lately ends (wall clock, as the storage gives it): a window's
        # end is read from Redis once per process, not on every request.
        self.ends: dict[str, float] = {}

    async def charge(
        self, check: str, windows: Sequence[RateLimitItem], *bucket: str
    ) -> list[Usage] | None:
        """Count one request in every window of the bucket."""
        return await self._checked(check, lambda: self._charge(windows, bucket))

    async def peek(
        self, check: str, windows: Sequence[RateLimitItem], *bucket: str
    ) -> list[Usage] | None:
        """The bucket's windows as if this request were counted, without counting it."""
        return await self._checked(check, lambda: self._peek(windows, bucket))

    async def _charge(
        self, windows: Sequence[RateLimitItem], bucket: tuple[str, ...]
    ) -> list[Usage]:
        keys = [w.key_for(*bucket) for w in windows]
        counts = await asyncio.gather(
            *(self.storage.incr(k, w.get_expiry()) for k, w in zip(keys, windows, strict=True))
        )
        now = time.time()
        # A count of 1: this request opened the window, which ends one window from now.
        self._remember(
            {
                k: now + w.get_expiry()
                for k, w, c in zip(keys, windows, counts, strict=True)
                if c == 1
            }
        )
        # A refusal reads the exact end from Redis; otherwise a remembered end will do.
        unknown = [
            k
            for k, w, count in zip(keys, windows, counts, strict=True)
            if count > w.amount or self.ends.get(k, 0.0) <= now
        ]
        await self._learn_ends(unknown)
        return self._usages(windows, keys, list(counts))

    async def _peek(self, windows: Sequence[RateLimitItem], bucket: tuple[str, ...]) -> list[Usage]:
        keys = [w.key_for(*bucket) for w in windows]
        counts = [c + 1 for c in await asyncio.gather(*(self.storage.get(k) for k in keys))]
        pairs = list(zip(windows, counts, strict=True))
        if all(count <= w.amount for w, count in pairs):
            # Not over: when the windows end does not matter, and would cost a round trip.
            return [Usage(w.amount, w.get_expiry(), count, 0.0) for w, count in pairs]
        await self._learn_ends(keys)
        return self._usages(windows, keys, counts)

    async def _learn_ends(self, keys: list[str]) -> None:
        ends = await asyncio.gather(*(self.storage.get_expiry(k) for k in keys))
        self._remember(dict(zip(keys, ends, strict=True)))

    def _remember(self, ends: dict[str, float]) -> None:
        if len(self.ends) > MAX_REMEMBERED_ENDS:
            now = time.time()
            self.ends = {k: end for k, end in self.ends.items() if end > now}
            if len(self.ends) > MAX_REMEMBERED_ENDS:  # still: it is only a cache, start afresh
                self.ends = {}
        self.ends.update(ends)

    def _usages(
        self, windows: Sequence[RateLimitItem], keys: list[str], counts: list[int]
    ) -> list[Usage]:
        now = time.time()
        return [
            Usage(w.amount, w.get_expiry(), count, max(0.0, self.ends.get(k, now) - now))
            for w, k, count in zip(windows, keys, counts, strict=True)
        ]

    async def _checked(self, check: str, call: Callable[[], Awaitable[T]]) -> T | None:
        if not self.breaker.admit():
            UNCHECKED.labels(check).inc()
            return None
        try:
            result = await answered_within(call, self.timeout_s)
        except (RedisError, TimeoutError, *database.UNAVAILABLE, asyncpg.PostgresError) as exc:
            UNCHECKED.labels(check).inc()
            if self.breaker.failed():
                log.warning("rate limits unchecked: their store is unavailable", error=repr(exc))
            return None
        except BaseException:
            self.breaker.abandoned()  # cancelled (a client gone): the next request asks
            raise
        if self.breaker.succeeded():
            log.info("rate limits checked again")
        return result


async def answered_within(
    call: Callable[[], Awaitable[T]], timeout_s: float, lag_s: float = LOOP_LAG_S
) -> T:
    """`call()`'s answer, or TimeoutError when the store took `timeout_s` to give none.

    A timeout counts the event loop's own lag: when the wait ended more than `lag_s` late,
    the process was busy and the answer may well be waiting to be read, so the same call is
    given `lag_s` more (never made twice: a window's count is charged once). The lateness is
    read the moment the wait ends, before a cancelled call's clean-up could add to it."""
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(call())
    started = loop.time()
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout_s)
        if not done and loop.time() - started > timeout_s + lag_s:
            done, _ = await asyncio.wait({task}, timeout=lag_s)
    except BaseException:
        task.cancel()
        raise
    if not done:
        task.cancel()
        raise TimeoutError(f"no answer within {timeout_s} s")
    return task.result()


@dataclass
class StoreBreaker:
    """Whether a request should ask a store that may be away. Closed, everyone asks; once a
    call failed, nobody asks for `rest_s`; then one request at a time asks (a probe, the only
    one that waits out a timeout) until one gets an answer."""

    rest_s: float
    clock: Callable[[], float] = time.monotonic
    open_until: float | None = None  # None: the store answered last time
    probing: bool = False

    def admit(self) -> bool:
        if self.open_until is None:
            return True
        if self.probing or self.clock() < self.open_until:
            return False
        self.probing = True
        return True

    def failed(self) -> bool:
        """Note a failed call; True for the first failure of an outage."""
        first = self.open_until is None
        self.open_until = self.clock() + self.rest_s
        self.probing = False
        return first

    def succeeded(self) -> bool:
        """Note an answer; True for the first answer after an outage."""
        recovered = self.open_until is not None
        self.open_until = None
        self.probing = False
        return recovered

    def abandoned(self) -> None:
        """A call ended without an answer or a failure: another request may probe."""
        self.probing = False


@dataclass(frozen=True)
class TableWindows:
    """The three calls of the `limits` storage that WindowCounts makes, over PostgreSQL's
    ephemera (shared/ephemera.py): fixed windows, each opened by its first hit."""

    ephemera: Ephemera
    prefix: str

    async def incr(self, key: str, expiry: int, amount: int = 1) -> int:
        hits, _ = await self.ephemera.hit(f"{self.prefix}:{key}", expiry, amount)
        return hits

    async def get(self, key: str) -> int:
        hits, _ = await self.ephemera.window(f"{self.prefix}:{key}")
        return hits

    async def get_expiry(self, key: str) -> float:
        _, ends_at = await self.ephemera.window(f"{self.prefix}:{key}")
        return ends_at


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
