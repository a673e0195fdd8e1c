"""Admission: the pipeline takes on no more sessions than it can finish soon.

Without it, clients that submit faster than the pipeline finishes get a quick 202 each, and
the difference waits in the broker's queues: every session then waits behind all the others,
and nobody sees the backlog until latency is counted in seconds. So the API counts the
sessions processing across the whole pipeline (PostgreSQL, the record: every API process
reads the same number) and admits a new one only while that count is below
`ADMISSION_LIMIT`; a lower plan only below its share of the limit (`PLAN_TENTHS`), so a flood
of free sessions leaves room for paying ones. A request over the limit waits for room, up
to `ADMISSION_WAIT_S`, and is then refused with 503 and `Retry-After`: the backlog stays with
the clients, whose next request waits with it, instead of hiding in a queue.

Sizing (Little's law): sessions processing = sessions finished per second × seconds each
takes. A limit of the pipeline's throughput times the latency one accepts at full load keeps
that latency; a limit far below throughput × the latency of an idle pipeline starves it.

The count is read at most every `ADMISSION_RECHECK_S` per process, one query shared by every
request that asks meanwhile (below half the limit in the background, off the request's
way), and a process adds its own sessions the reading may not have seen: those admitted and
not yet recorded, and those recorded since the reading began (counted twice at worst, until
the next reading, never not at all). Several API processes may together overshoot the limit
by what each admits within one interval. Waiting re-reads on the same pace; at most `limit`
requests wait in a process at once (more are refused at once), and room goes to them in the
order they came: a request takes room only when no earlier one that the same room would
admit is still in line (a lower plan held back at its share holds no higher plan back).
A reading slower than `READ_TIMEOUT_S`, or one that fails, leaves the estimate where it was,
which only grows until a reading succeeds; before the first, nothing is admitted.

The limit follows the pipeline's pace (`ADMISSION_TARGET_S`; 0 keeps it fixed): a fixed
number of sessions is a second of work on one machine and two on a slower one, and the
latency at full load is that number over the throughput. So every `PACE_WINDOW_S` one
reading also counts the sessions created since the last such reading, which gives the
sessions finished in between (processing then + created since − processing now), and a
window in which the limit held a request back measured what the pipeline can finish: the
limit becomes that pace (smoothed over windows) times the target, between `MIN_LIMIT` and
`ADMISSION_LIMIT`. A window in which nobody waited says only what clients asked for and
changes nothing. It starts at the floor (a ceiling of sessions admitted before any measure
would take the ceiling over the throughput to finish) and rises with the first measures: a
limit too low finishes fewer sessions per second, but more than the limit over the target,
so each measure lifts it until pace × target meets it. A stalled pipeline (nothing
finishing) brings it back to the floor, and it rises again with the pace.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Final

import asyncpg
import structlog

from shared import metrics, sessions
from shared.errors import VerdictError

log = structlog.get_logger(__name__)

# The tenths of ADMISSION_LIMIT each plan may fill: freemium stops at half the limit, so a
# free flood leaves the other half for paying plans; enterprise alone may use all of it.
PLAN_TENTHS: Final = {1: 5, 2: 6, 3: 7, 4: 8, 5: 9, 6: 10}
# What a refused client is told to wait: room comes back as fast as sessions finish.
RETRY_AFTER_S: Final = 1
# A reading of the count that takes longer is given up (the next caller starts another).
READ_TIMEOUT_S: Final = 2.0
# The pace is measured over windows this long; a window that ran far longer (no reading
# came: nobody asked) is dropped, not measured. Each new measure weighs this much.
PACE_WINDOW_S: Final = 1.0
PACE_STALE_S: Final = 3.0
PACE_WEIGHT: Final = 0.5
# The learned limit stays at or above this (or ADMISSION_LIMIT, if lower).
MIN_LIMIT: Final = 10
# The pace's readings count the sessions processing up to this many limits: a window that
# began or ended beyond (sessions stranded by an outage) is not measured.
PACE_COUNT_LIMITS: Final = 4


class AtCapacity(VerdictError):
    """Raised when the pipeline had no room for a session within the admission wait."""

    def __init__(self, why: str) -> None:
        super().__init__(f"the pipeline is at capacity ({why}); retry in {RETRY_AFTER_S} s")
        self.retry_after_s = RETRY_AFTER_S


def bound_for(plan: int, limit: int) -> int:
    """Sessions processing below which a session of `plan` is admitted (at least 1)."""
    return max(1, limit * PLAN_TENTHS[plan] // 10)


def has_room(plan: int, processing: int, limit: int) -> bool:
    """Whether a session of `plan` may start with `processing` sessions under way; a limit of
    0 admits everything."""
    return limit == 0 or processing < bound_for(plan, limit)


def paced_limit(finished_per_s: float, target_s: float, ceiling: int) -> int:
    """Little's law: the sessions that may be processing for each to take about `target_s`
    at `finished_per_s`, between MIN_LIMIT (or `ceiling`, if lower) and `ceiling`."""
    return max(min(MIN_LIMIT, ceiling), min(ceiling, round(finished_per_s * target_s)))


def smoothed(previous: float | None, measured: float) -> float:
    """The pace after one more window's measure."""
    if previous is None:
        return measured
    return previous + PACE_WEIGHT * (measured - previous)


@dataclass
class Window:
    """One window of the pace: when it began (monotonic), the wall-clock millisecond from
    which new session ids are its, the sessions processing then, and whether the limit held
    a request back since."""

    began: float
    since_ms: int
    processing: int
    held_back: bool = False

    def finished_per_s(self, now: float, processing: int, created: int) -> float | None:
        """Sessions finished per second over the window, ended at `now` with `processing`
        sessions under way and `created` new since it began; None when it does not measure
        the pipeline's pace (nobody held back, too short, or too long ago)."""
        took = now - self.began
        if not self.held_back or took <= 0 or took > PACE_STALE_S:
            return None
        return max(0, self.processing + created - processing) / took


class Admission:
    """The pipeline's sessions processing as one API process sees them, and the admission
    decision on them."""

    def __init__(
        self,
        pool: asyncpg.Pool,
        limit: int,
        wait_s: float,
        recheck_s: float,
        target_s: float = 0.0,
    ) -> None:
        self.pool = pool
        self.ceiling = limit  # ADMISSION_LIMIT
        # The limit now: the ceiling, or what the pace made of it. A paced limit starts at its
        # floor and rises with the first measures: sessions admitted before any measure must
        # not take longer than the target (a pipeline idle a moment ago finishes MIN_LIMIT
        # sessions in about its idle latency).
        self.limit = paced_limit(0.0, target_s, limit) if target_s > 0 else limit
        self.wait_s = wait_s
        self.recheck_s = recheck_s
        self.target_s = target_s
        self.pace: float | None = None  # sessions finished per second, smoothed
        self._window: Window | None = None
        metrics.ADMISSION_LIMIT.set(self.limit)
        self._count = 0  # the last reading
        self._read_at: float | None = None  # monotonic time of the last reading
        self._pending = 0  # admitted by this process, not yet recorded
        self._recorded = 0  # recorded by this process since the last reading began
        self._line: dict[int, int] = {}  # the plans of the requests deciding now, in arrival order
        self._tickets = 0
        self._reading: asyncio.Future[None] | None = None
        self._failing = False

    @contextlib.asynccontextmanager
    async def slot(self, plan: int, replay: Callable[[], Awaitable[bool]]) -> AsyncIterator[bool]:
        """Room for one session of `plan`, held while the block records it; yields whether
        the request waited for it (what was checked before may have changed meanwhile).
        AtCapacity when no room came within the wait. `replay` says whether the request names
        an earlier session: asked only when there is no room, such a request passes and holds
        none. A block that raises gives its room back."""
        if self.ceiling == 0:
            yield False
            return
        outcome = await self._admit(plan, replay)
        metrics.ADMISSIONS.labels(str(plan), outcome).inc()
        if outcome == "replay":
            yield False
            return
        try:
            yield outcome == "waited"
        except BaseException:
            self._pending -= 1
            raise
        self._pending -= 1
        self._recorded += 1

    async def _admit(self, plan: int, replay: Callable[[], Awaitable[bool]]) -> str:
        """`at_once` or `waited` (room taken: counted pending), or `replay`."""
        deadline = time.monotonic() + self.wait_s
        waited = False
        self._tickets += 1
        ticket = self._tickets
        self._line[ticket] = plan
        try:
            while True:
                processing = await self.processing(deadline)
                if (
                    processing is not None
                    and has_room(plan, processing, self.limit)
                    and not self._ahead(ticket, processing)
                ):
                    self._pending += 1  # no await since the check: no other request between
                    return "waited" if waited else "at_once"
                if not waited and await replay():
                    return "replay"
                if self._window is not None:
                    self._window.held_back = True
                if time.monotonic() >= deadline or (not waited and self._in_line(ticket)):
                    metrics.ADMISSIONS.labels(str(plan), "refused").inc()
                    raise AtCapacity(self._why(plan, processing))
                waited = True
                await asyncio.sleep(min(self.recheck_s, max(0.0, deadline - time.monotonic())))
        finally:
            del self._line[ticket]

    def _in_line(self, ticket: int) -> bool:
        """Whether as many requests as the limit came before `ticket` and still decide."""
        return sum(1 for earlier in self._line if earlier < ticket) >= self.limit

    def _ahead(self, ticket: int, processing: int) -> bool:
        """Whether a request that came before `ticket` is still in line for the room there is."""
        for earlier, plan in self._line.items():
            if earlier >= ticket:
                return False
            if has_room(plan, processing, self.limit):
                return True
        return False

    def _why(self, plan: int, processing: int | None) -> str:
        if processing is None:
            return "the sessions processing could not be counted in time"
        return (
            f"{processing} sessions processing, {bound_for(plan, self.limit)} allowed for this plan"
        )

    async def processing(self, deadline: float | None = None) -> int | None:
        """Sessions processing now as far as this process can tell: the last reading plus its
        own sessions the reading may not hold; None before any reading landed. A stale
        reading is read again, once for every caller; a caller waits for it (until
        `deadline`, or for the first reading as long as a reading may take) only from half
        the limit up, below that it lands in the background."""
        fresh = self._read_at is not None and time.monotonic() - self._read_at < self.recheck_s
        if not fresh:
            reading = self._reading or self._start_reading()
            if self._read_at is None or 2 * self._estimate() >= self.limit:
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                if self._read_at is None and left is not None:  # no estimate yet to go on
                    left = max(left, READ_TIMEOUT_S)
                # Shielded: a caller that gives up leaves the reading to the rest.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(left):
                        await asyncio.shield(reading)
        return None if self._read_at is None else self._estimate()

    def _estimate(self) -> int:
        return self._count + self._pending + self._recorded

    def _start_reading(self) -> asyncio.Future[None]:
        window = self._window
        paced = self.target_s > 0 and (
            window is None or time.monotonic() - window.began >= PACE_WINDOW_S
        )
        self._reading = asyncio.ensure_future(self._read(self._recorded, paced))
        return self._reading

    async def _read(self, recorded_before: int, paced: bool) -> None:
        """Read the count (with the sessions created since the pace's window began, when
        `paced`); the sessions this process recorded before the reading began are in it and
        leave the estimate. A reading that fails or is too slow changes nothing."""
        window, since_ms = self._window, time.time_ns() // 1_000_000
        try:
            async with asyncio.timeout(READ_TIMEOUT_S):
                if paced:
                    up_to = PACE_COUNT_LIMITS * self.ceiling
                    count, created = await sessions.processing_and_created(
                        self.pool, up_to, window.since_ms if window else since_ms
                    )
                else:
                    count = await sessions.processing(self.pool, self.ceiling)
        except (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
            if not self._failing:
                log.warning("admission could not count the sessions processing", error=repr(exc))
            self._failing = True
            return
        finally:
            self._reading = None
        self._failing = False
        self._count = count
        self._read_at = time.monotonic()
        self._recorded -= recorded_before
        if paced:
            self._pace(window, Window(self._read_at, since_ms, count), created, up_to)

    def _pace(self, ended: Window | None, next_window: Window, created: int, up_to: int) -> None:
        """Close the pace's window with this reading, learn from it, and open the next."""
        self._window = next_window
        if ended is None or up_to in (ended.processing, next_window.processing):
            return
        measured = ended.finished_per_s(next_window.began, next_window.processing, created)
        if measured is None:
            return
        self.pace = smoothed(self.pace, measured)
        limit = paced_limit(self.pace, self.target_s, self.ceiling)
        if limit != self.limit:
            log.info("admission limit follows the pace", limit=limit, finished_per_s=self.pace)
            self.limit = limit
            metrics.ADMISSION_LIMIT.set(limit)
