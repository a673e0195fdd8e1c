"""Results applied exactly once: batches through the fan-in, live state, verdict follow-ups."""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass

import asyncpg
import httpx
import structlog

from aggregator.explanation import explain_by_llm
from aggregator.fanin import Explain, Recorded, finalize_overdue, live_states, record_results
from aggregator.lanes import Lanes
from shared import db as database
from shared import metrics
from shared.broker import send_to_dlq
from shared.deadletters import DeadLetterKind
from shared.errors import SettlementFailed
from shared.house import House
from shared.job_queue import Completion, ack_together, prune_completed
from shared.live import Live
from shared.messages import Result
from shared.names import Names
from shared.partitions import make_ahead
from shared.sessions import store_explanation
from shared.settings import Settings
from shared.transport import Delivery, Outbox
from shared.urgency import UrgentGate, UrgentSignals

log = structlog.get_logger(__name__)

_DB_DOWN = database.UNAVAILABLE
# Back-off while Postgres is away; the result stays unacked meanwhile, so nothing is lost.
DB_RETRY_S = 1.0
# A janitor failing pass after pass waits at most this long between passes.
JANITOR_MAX_DELAY_S = 60.0
# Partitions are made days ahead (PARTITION_DAYS_AHEAD): checking hourly is plenty, and a
# failed check (a lock not granted in time, Postgres away) is tried again after a minute.
PARTITION_CHECK_S = 3600.0
PARTITION_RETRY_S = 60.0
# The postgres transport: how often completed job rows are looked for, and per statement.
JOB_PRUNE_S = 60.0
JOB_PRUNE_BATCH = 5000

Delivered = tuple[Delivery, Result]


@dataclass(frozen=True)
class Storage:
    """What the aggregator holds open: its connections and its publisher."""

    pool: asyncpg.Pool
    # Live news and urgent ends (shared/house.py): Redis, or PostgreSQL without it.
    house: House
    http: httpx.AsyncClient
    publisher: Outbox


class Applier:
    """Applies the lanes' batches and finalizes overdue sessions; every resource it uses is
    handed to it open (shared.resources), so it can be built around fakes."""

    def __init__(
        self,
        settings: Settings,
        storage: Storage,
        gate: UrgentGate,
        explain: Explain,
        parking_key: bytes,
    ) -> None:
        self.settings = settings
        self.storage = storage
        self.names = Names(settings.topology_prefix)
        self._gate = gate
        self._explain = explain
        self._parking_key = parking_key  # marks what it parks (shared.signing)
        # Live states and urgent ends of concurrent batches go out together (the house's
        # batches of Redis commands).
        self._live = Live(storage.house, settings.key_prefix)
        self._background: set[asyncio.Task[None]] = set()  # explanations being rewritten
        self._ending: set[asyncio.Task[None]] = set()  # urgent-session ends being announced

    async def apply_lane(self, lanes: Lanes[Delivered], urgent: bool) -> None:
        """Apply whatever a lane received meanwhile as one batch, for as long as it comes.

        New lower-tier batches wait at the gate while urgent ones are applied. A batch that
        fails unexpectedly is handed back, never the lane: a dead lane would leave its
        results unacked and keep a stopping aggregator waiting for them forever."""
        priority = self._gate.threshold if urgent else 0
        while True:
            batch = await lanes.take(urgent=urgent)
            try:
                finished = await self._apply_in_turn(batch, priority)
                if urgent and finished:  # in the background: the next batch need not wait
                    self._spawn(self._end_urgent(finished), self._ending)
            except Exception:
                log.exception("batch failed, handed back", size=len(batch))
                await hand_back(d for d, _ in batch)
            finally:
                lanes.done(batch)

    async def _apply_in_turn(self, batch: list[Delivered], priority: int) -> list[str]:
        await self._gate.admit(lambda: priority)
        self._gate.started(priority)
        try:
            return await self.apply_safely(batch)
        finally:
            self._gate.finished(priority)

    async def apply_safely(self, batch: list[Delivered]) -> list[str]:
        """Apply a batch and return the sessions it finalized; a result Postgres refuses is
        found and dead-lettered, and a batch interrupted otherwise (the broker gone mid-ack)
        is handed back, never lost."""
        try:
            return await self._apply(batch)
        except asyncpg.PostgresError as exc:
            if len(batch) == 1:
                await self._dead_letter_refused(batch[0][0], f"refused by postgres: {exc}")
                return []
            return [s for item in batch for s in await self.apply_safely([item])]
        except Exception as exc:
            log.error("batch interrupted", error=repr(exc), size=len(batch))
            await hand_back(d for d, _ in batch)
            return []

    async def _dead_letter_refused(self, delivery: Delivery, reason: str) -> None:
        """Dead-letter a refused result, or hand it back while the DLQ cannot be reached: it
        is refused again when it returns, and dead-lettered once the broker takes letters."""
        try:
            await self.dead_letter(delivery, reason)
        except Exception as exc:
            log.error("refused result not dead-lettered, handed back", error=repr(exc))
            await hand_back([delivery])

    async def _apply(self, batch: list[Delivered]) -> list[str]:
        results = [result for _, result in batch]
        # The table transport's rows are completed in the fan-in's transaction (those of
        # unknown sessions are left for the dead-letter path below); a broker's are acked
        # after it.
        rows = Completion(delivery for delivery, _ in batch)

        async def complete_known(conn: asyncpg.Connection, known: set[str]) -> None:
            await rows.within(conn, [d for d, result in batch if result.session_id in known])

        while True:
            try:
                applied = await record_results(
                    self.storage.pool,
                    results,
                    self.settings.verdict_weights,
                    self._explain,
                    self.settings.review_policy,
                    within=complete_known if rows else None,
                )
                rows.committed()
                break
            except _DB_DOWN as exc:  # hold the batch unacked until Postgres is back
                log.warning("postgres unavailable, holding results", error=repr(exc))
                await asyncio.sleep(DB_RETRY_S)
        metrics.RESULTS.labels("applied").inc(len(results) - len(applied.unknown))
        await self._announce(applied.sessions)
        unknown = {id(result) for result in applied.unknown}
        for delivery, result in batch:
            if id(result) in unknown:
                await self._dead_letter_unknown(delivery, result)
        await ack_all(delivery for delivery, result in batch if id(result) not in unknown)
        return [r.session_id for r in applied.sessions if r.verdict is not None]

    async def _dead_letter_unknown(self, delivery: Delivery, result: Result) -> None:
        """A result no recorded session awaits goes to the DLQ for an operator, never only to
        the log: it may be the work of a dispatcher that records sessions elsewhere."""
        metrics.RESULTS.labels("unknown_session").inc()
        reason = (
            f"result for an unknown or withdrawn session {result.session_id} "
            f"(component {result.component})"
        )
        try:
            await self.dead_letter(delivery, reason, kind="unknown_session")
        except Exception as exc:  # back to its queue: dead-lettered when it returns
            log.error("unknown-session result not dead-lettered, handed back", error=repr(exc))
            await hand_back([delivery])

    async def _end_urgent(self, session_ids: list[str]) -> None:
        """Urgent sessions are final: lower tiers everywhere need not wait for them now."""
        try:
            signals = UrgentSignals(self.storage.house.channels, self.settings.key_prefix)
            await signals.end(session_ids)
        except Exception as exc:  # their holds lapse by themselves
            log.warning("urgent session ends not announced", error=repr(exc))

    async def ends_announced(self, timeout_s: float) -> None:
        """Wait (at most `timeout_s`) for the ends of urgent sessions being announced."""
        if self._ending:
            await asyncio.wait(self._ending, timeout=timeout_s)

    async def _announce(self, sessions: list[Recorded]) -> None:
        """Live state for pollers; Postgres already holds the truth, so Redis may fail."""
        try:
            await self._live.publish_states(live_states(sessions))
        except Exception as exc:
            log.warning("live state not updated", error=repr(exc))
        for recorded in sessions:
            if recorded.verdict is None:
                continue
            if recorded.took_s is not None:
                metrics.SESSION_SECONDS.observe(recorded.took_s)
            log.info(
                "session finalized",
                session_id=recorded.session_id,
                status=recorded.verdict.session_status,
                label=recorded.verdict.label,
            )
            if self.settings.llm_url:  # in the background: a slow gateway must not hold results
                self._spawn(self._rewrite_explanation(recorded), self._background)

    async def _rewrite_explanation(self, recorded: Recorded) -> None:
        """Replace the template with the LLM's explanation, outside the fan-in transaction."""
        assert recorded.verdict is not None
        text = await explain_by_llm(
            self.storage.http, self.settings, recorded.verdict, recorded.results
        )
        try:
            await store_explanation(self.storage.pool, recorded.session_id, text)
        except _DB_DOWN as exc:  # the template explanation already stands
            log.warning("llm explanation not stored", error=repr(exc))

    async def dead_letter(
        self, delivery: Delivery, reason: str, kind: DeadLetterKind = "refused"
    ) -> None:
        """To the DLQ; a full DLQ parks it in the longest retry tier, from which it returns
        to the results queue it came from."""
        await send_to_dlq(
            self.storage.publisher,
            delivery,
            reason,
            source="aggregator",
            kind=kind,
            park_ms=max(self.settings.retry_delays_ms()),
            parking_key=self._parking_key,
            returns_to=home_key(self.names, delivery.routing_key or ""),
        )

    async def janitor(self, stop: asyncio.Event) -> None:
        """Every session ends: finalize those past their deadline from what they have.

        A failed pass never ends the loop: it is logged with its traceback, counted, and the
        next pass waits longer while failures persist; only the stop (or a cancel) ends it.
        """
        failures = 0
        while not stop.is_set():
            try:
                finished = await finalize_overdue(
                    self.storage.pool,
                    self.settings.verdict_weights,
                    self._explain,
                    review=self.settings.review_policy,
                )
                for recorded in finished:
                    log.warning("session finalized at its deadline", session_id=recorded.session_id)
                await self._announce(finished)
                failures = 0
            except _DB_DOWN as exc:
                log.warning("janitor: postgres unavailable", error=repr(exc))
            except Exception:
                failures += 1
                metrics.JANITOR_ERRORS.inc()
                log.exception("janitor pass failed", failures=failures)
            delay = janitor_delay_s(self.settings.janitor_interval_s, failures)
            with contextlib.suppress(asyncio.TimeoutError):
                async with asyncio.timeout(delay):
                    await stop.wait()

    async def keep_partitions_ahead(self, stop: asyncio.Event) -> None:
        """Keep the day partitions of the next PARTITION_DAYS_AHEAD days ready, so inserts
        never meet a missing one even when nobody runs `verdict db prune`."""
        while not stop.is_set():
            delay = PARTITION_CHECK_S
            try:
                made = await make_ahead(self.storage.pool, self.settings.partition_days_ahead)
                if made:
                    log.info("day partitions created", partitions=made)
            except Exception:
                delay = PARTITION_RETRY_S
                log.exception("making day partitions failed")
            with contextlib.suppress(asyncio.TimeoutError):
                async with asyncio.timeout(delay):
                    await stop.wait()

    async def prune_jobs(self, stop: asyncio.Event) -> None:
        """The postgres transport: completed rows are kept JOB_KEEP_COMPLETED_S for
        inspection, then deleted in batches, so the queue table stays small (on RabbitMQ
        there is nothing to do); without Redis, expired ephemera go too."""
        if self.settings.transport != "postgres":
            return
        while not stop.is_set():
            delay = JOB_PRUNE_S
            try:
                gone = await _in_batches(self._prune_completed)
                if gone:
                    log.info("completed job rows deleted", rows=gone)
                ephemera = self.storage.house.ephemera
                if ephemera is not None:
                    await _in_batches(functools.partial(ephemera.prune, JOB_PRUNE_BATCH))
            except Exception:
                delay = PARTITION_RETRY_S
                log.exception("deleting completed job rows failed")
            with contextlib.suppress(asyncio.TimeoutError):
                async with asyncio.timeout(delay):
                    await stop.wait()

    async def _prune_completed(self) -> int:
        keep_s = self.settings.job_keep_completed_s
        return await prune_completed(self.storage.pool, keep_s, JOB_PRUNE_BATCH)

    async def close(self) -> None:
        """Cancel what still runs in the background (explanations, urgent ends)."""
        pending = [*self._background, *self._ending]
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)

    @staticmethod
    def _spawn(work: Awaitable[None], into: set[asyncio.Task[None]]) -> None:
        task: asyncio.Task[None] = asyncio.ensure_future(work)
        into.add(task)
        task.add_done_callback(into.discard)


async def ack_all(deliveries: Iterable[Delivery]) -> None:
    """Ack a batch's deliveries together: their frames leave in one go instead of one
    flushed write awaited after another (the table transport's rows: one statement). The
    first failure is raised once all have ended (the caller hands the batch back; a
    delivery already acked is passed over then)."""
    try:
        brokers = await ack_together(list(deliveries))
    except Exception as exc:
        raise SettlementFailed(f"acknowledgement failed: {exc!r}") from exc
    outcomes = await asyncio.gather(*(d.ack() for d in brokers), return_exceptions=True)
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            # Not a refusal of the results (they are recorded): on the postgres transport an
            # ack is a statement, and its failure must not dead-letter what was applied.
            raise SettlementFailed(f"acknowledgement failed: {outcome!r}") from outcome


async def hand_back(deliveries: Iterable[Delivery]) -> None:
    """Nack each delivery back to its queue; one already settled, or on a channel gone (the
    broker then requeues it by itself), is passed over."""
    for delivery in deliveries:
        with contextlib.suppress(Exception):
            await delivery.nack(requeue=True)


def home_key(names: Names, routing_key: str) -> str:
    """A routing key that brings a parked result back to a results queue: its own when it
    matches a results binding (`{results}.*`, `{results}.urgent.*`), else the shared one."""
    if routing_key.rpartition(".")[0] in (names.results, names.urgent_results):
        return routing_key
    return names.result_key("returned")


def janitor_delay_s(interval_s: float, failures: int) -> float:
    """The wait before the next janitor pass: the interval, doubled per failure in a row."""
    return min(interval_s * 2 ** min(failures, 16), max(interval_s, JANITOR_MAX_DELAY_S))


async def _in_batches(delete: Callable[[], Awaitable[int]]) -> int:
    """Run a batched delete until a batch comes back short; the rows deleted in all."""
    total = 0
    while True:
        gone = await delete()
        total += gone
        if gone < JOB_PRUNE_BATCH:
            return total
