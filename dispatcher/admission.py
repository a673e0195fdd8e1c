"""Admission: the pipeline takes on no more sessions than it can finish soon.

Without it, clients that submit faster than the pipeline finishes get a quick 202 each, and
the difference waits in the broker's queues: every session then waits behind all the others,
and nobody sees the backlog until latency is counted in seconds. So the API counts the
sessions processing across the whole pipeline (PostgreSQL, the record: every API process
reads the same number) and admits a new one only while that count is below
`ADMISSION_LIMIT`; a lower plan only below its share of the limit (`PLAN_SHARE`), so a flood
of free sessions leaves room for paying ones. A request over the limit waits for room, up
to `ADMISSION_WAIT_S`, and is then refused with 503 and `Retry-After`: the backlog stays with
the clients, whose next request waits with it, instead of hiding in a queue.

Sizing (Little's law): sessions processing = sessions finished per second × seconds each
takes. A limit of the pipeline's throughput times the latency one accepts at full load keeps
that latency; a limit far below throughput × the latency of an idle pipeline starves it.

The count is read at most every `ADMISSION_RECHECK_S` per process, one query shared by every
request that asks meanwhile, and a process adds what it admitted since that reading began.
Several API processes may together overshoot the limit by what each admits within one such
interval, and a session admitted just before a reading whose row is not yet written when it
counts is missed until the next. Waiting re-reads on that same pace: it happens only while
the pipeline is full.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Final

import asyncpg

from shared import metrics, sessions
from shared.errors import VerdictError

# The share of ADMISSION_LIMIT each plan may fill: freemium stops at half the limit, so a
# free flood leaves the other half for paying plans, enterprise alone may use all of it.
PLAN_SHARE: Final = {1: 0.5, 2: 0.6, 3: 0.7, 4: 0.8, 5: 0.9, 6: 1.0}
# What a refused client is told to wait: room comes back as fast as sessions finish.
RETRY_AFTER_S: Final = 1


class AtCapacity(VerdictError):
    """Raised when the pipeline had no room for a session within the admission wait."""

    def __init__(self, processing: int, bound: int) -> None:
        super().__init__(
            f"the pipeline is at capacity ({processing} sessions processing, {bound} allowed "
            f"for this plan); retry in {RETRY_AFTER_S} s"
        )
        self.retry_after_s = RETRY_AFTER_S


def bound_for(plan: int, limit: int) -> int:
    """Sessions processing below which a session of `plan` is admitted (at least 1)."""
    return max(1, int(limit * PLAN_SHARE[plan]))


def has_room(plan: int, processing: int, limit: int) -> bool:
    """Whether a session of `plan` may start with `processing` sessions under way; a limit of
    0 admits everything."""
    return limit == 0 or processing < bound_for(plan, limit)


class Admission:
    """The pipeline's sessions processing as one API process sees them, and the admission
    decision on them."""

    def __init__(self, pool: asyncpg.Pool, limit: int, wait_s: float, recheck_s: float) -> None:
        self.pool = pool
        self.limit = limit
        self.wait_s = wait_s
        self.recheck_s = recheck_s
        self._count = 0
        self._read_at: float | None = None  # monotonic time of the last reading
        self._since = 0  # sessions this process admitted since that reading
        self._reading: asyncio.Future[None] | None = None

    async def admit(self, plan: int, replay: Callable[[], Awaitable[bool]]) -> None:
        """Return once a session of `plan` may start; AtCapacity when no room came within
        the wait. `replay` says whether the request names an earlier session (no new work):
        asked only when there is no room, such a request always passes."""
        if self.limit == 0:
            return
        deadline = time.monotonic() + self.wait_s
        waited = False
        while True:
            processing = await self.processing()
            if has_room(plan, processing, self.limit):
                self._since += 1
                metrics.ADMISSIONS.labels("waited" if waited else "at_once").inc()
                return
            if not waited and await replay():
                return
            if time.monotonic() >= deadline:
                metrics.ADMISSIONS.labels("refused").inc()
                raise AtCapacity(processing, bound_for(plan, self.limit))
            waited = True
            await asyncio.sleep(min(self.recheck_s, max(0.0, deadline - time.monotonic())))

    async def processing(self) -> int:
        """Sessions processing now (up to the limit), as the last reading plus what this
        process admitted since. A stale reading is read again, once for every caller; a
        caller waits for it only from half the limit up. Below that (the idle pipeline's case)
        the reading is renewed in the background and no query is in the request's way: this
        process's admissions stay counted meanwhile, so only other processes' can slip past."""
        fresh = self._read_at is not None and time.monotonic() - self._read_at < self.recheck_s
        if not fresh:
            reading = self._reading or self._start_reading()
            if self._read_at is None or 2 * (self._count + self._since) >= self.limit:
                # Shielded: a caller cancelled (its client gone) leaves it to the rest.
                await asyncio.shield(reading)
        return self._count + self._since

    def _start_reading(self) -> asyncio.Future[None]:
        self._reading = asyncio.ensure_future(self._read(self._since))
        self._reading.add_done_callback(_retrieve)
        return self._reading

    async def _read(self, before: int) -> None:
        """Read the count; of this process's admissions, only the `before` made before the
        reading began leave the estimate. Later ones may or may not be in the count: they
        stay counted besides it (twice, at worst, until the next reading), never not at all."""
        try:
            self._count = await sessions.processing(self.pool, self.limit)
            self._read_at = time.monotonic()
            self._since -= before
        finally:
            self._reading = None


def _retrieve(reading: asyncio.Future[None]) -> None:
    """A reading nobody waited for fails quietly: the next caller reads again, and a database
    away is answered where a caller meets it."""
    if not reading.cancelled():
        reading.exception()
