"""The aggregator process: apply results exactly once, finalize overdue sessions."""

from __future__ import annotations

import asyncio
import contextlib
import uuid

import asyncpg
import httpx
import structlog
from aio_pika.abc import AbstractIncomingMessage
from redis.asyncio import Redis

from aggregator.explanation import explain, explain_by_llm
from aggregator.fanin import Explain, Recorded, finalize_overdue, live_states, record_results
from shared import db as database
from shared import live, metrics
from shared.broker import Publisher, connect, reject_oversize, send_to_dlq
from shared.deadletters import DeadLetterKind, oversize
from shared.errors import InvalidMessage
from shared.heartbeat import Heartbeat, worker_id
from shared.messages import MAX_MESSAGE_BYTES, Result, decode_result
from shared.names import Names
from shared.settings import Settings
from shared.urgency import UrgentSignals, follow_precedence, gate_for

log = structlog.get_logger(__name__)

_DB_DOWN = database.UNAVAILABLE
# Back-off while Postgres is away; the result stays unacked meanwhile, so nothing is lost.
DB_RETRY_S = 1.0
# How long a stopping aggregator waits for the ends of urgent sessions to be announced.
ENDS_GRACE_S = 2.0


class Lane:
    """Deliveries waiting to be applied, handed out as one batch."""

    def __init__(self) -> None:
        self._items: list[tuple[AbstractIncomingMessage, Result]] = []
        self._ready = asyncio.Event()

    def put(self, delivery: AbstractIncomingMessage, result: Result) -> None:
        self._items.append((delivery, result))
        self._ready.set()

    async def take(self) -> list[tuple[AbstractIncomingMessage, Result]]:
        await self._ready.wait()
        self._ready.clear()
        batch, self._items = self._items, []
        return batch


class Aggregator:
    def __init__(self, settings: Settings, prefetch: int = 10, explain: Explain = explain) -> None:
        self.settings = settings
        self.prefetch = prefetch
        self.explain = explain
        # Two lanes: urgent (top-tier) results are applied at once, beside the batch of
        # lower tiers in progress; new lower-tier batches wait while urgent ones are applied.
        self._lanes = {urgent: Lane() for urgent in (True, False)}
        # With the scheduler off no result is urgent: one lane, in arrival order.
        self._gate = gate_for(settings)
        self._follows_signals = settings.urgent_threshold is not None
        self._unacked = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._background: set[asyncio.Task[None]] = set()
        self._ending: set[asyncio.Task[None]] = set()  # urgent-session ends being announced
        self.names = Names(settings.topology_prefix)

    async def run(self, stop: asyncio.Event) -> None:
        connection = await connect(self.settings.amqp_url, "aggregator")
        self.redis = Redis.from_url(self.settings.redis_url)
        self.pool = await database.create_pool(
            self.settings.database_url, max_size=self.prefetch + 2
        )
        self.http = httpx.AsyncClient(timeout=httpx.Timeout(30.0, connect=5.0))
        heartbeat = Heartbeat(
            self.redis, self.settings.key_prefix, worker_id(), "aggregator", self.prefetch
        )
        try:
            self.publisher = await Publisher(
                connection, self.names, self.settings.publish_timeout_s
            ).open()
            # Before any consumer starts: an urgent batch announces its sessions' ends here.
            self.signals = UrgentSignals(self.redis, self.settings.key_prefix)
            channel = await connection.channel()
            await channel.set_qos(prefetch_count=self.prefetch)
            appliers = [asyncio.create_task(self._apply_lane(u)) for u in self._lanes]
            # One consumer per results queue, each with its own prefetch: urgent results are
            # delivered even while lower-tier ones fill the other buffer. A passive declare
            # registers the queue, so the consumer is restored after a reconnect.
            consumers = []
            for name in (self.names.urgent_results, self.names.results):
                queue = await channel.declare_queue(name, passive=True)
                consumers.append((queue, await queue.consume(self._on_result)))
            janitor = asyncio.create_task(self._janitor(stop))
            if self._follows_signals:  # urgent sessions anywhere hold lower-tier batches back
                self._background.update(follow_precedence(self._gate, self.signals))
            log.info("aggregator ready", prefetch=self.prefetch)
            async with heartbeat.running():
                await stop.wait()
            for queue, tag in consumers:
                await queue.cancel(tag)
            await self._idle.wait()  # what was delivered before the cancel still gets applied
            if self._ending:  # holds lapse by themselves: a slow Redis need not delay the exit
                await asyncio.wait(self._ending, timeout=ENDS_GRACE_S)
            for task in (*appliers, janitor, *self._background):
                task.cancel()
            await asyncio.gather(*appliers, janitor, *self._background, return_exceptions=True)
        finally:
            await self.http.aclose()
            await self.pool.close()
            await self.redis.aclose()
            await connection.close()
        log.info("aggregator stopped")

    async def _on_result(self, delivery: AbstractIncomingMessage) -> None:
        too_big = oversize(
            delivery.body, delivery.headers, MAX_MESSAGE_BYTES, self.settings.max_header_bytes
        )
        if too_big:  # unread, and never republished by us: the broker dead-letters it
            await reject_oversize(delivery, too_big, "aggregator")
            return
        try:
            result = decode_result(delivery.body)
            uuid.UUID(result.session_id)
        except (InvalidMessage, ValueError) as exc:
            await self._dead_letter(delivery, str(exc), "poison")
            return
        self._unacked += 1
        self._idle.clear()
        self._lanes[self._gate.urgent(delivery.priority or 0)].put(delivery, result)

    async def _apply_lane(self, urgent: bool) -> None:
        """Apply whatever a lane received meanwhile as one batch, for as long as it comes."""
        lane = self._lanes[urgent]
        priority = self._gate.threshold if urgent else 0
        while True:
            batch = await lane.take()
            await self._gate.admit(lambda: priority)
            self._gate.started(priority)
            try:
                finished = await self._apply_safely(batch)
            finally:
                self._gate.finished(priority)
            if urgent and finished:  # in the background: the next batch need not wait for it
                ending = asyncio.create_task(self._end_urgent(finished))
                self._ending.add(ending)
                ending.add_done_callback(self._ending.discard)
            self._unacked -= len(batch)
            if not self._unacked:
                self._idle.set()

    async def _apply_safely(self, batch: list[tuple[AbstractIncomingMessage, Result]]) -> list[str]:
        """Apply a batch and return the sessions it finalized; a result Postgres refuses is
        found and dead-lettered, and a batch interrupted otherwise (the broker gone mid-ack)
        is handed back, never lost."""
        try:
            return await self._apply(batch)
        except asyncpg.PostgresError as exc:
            if len(batch) == 1:
                await self._dead_letter(batch[0][0], f"refused by postgres: {exc}")
                return []
            return [s for item in batch for s in await self._apply_safely([item])]
        except Exception as exc:
            log.error("batch interrupted", error=repr(exc), size=len(batch))
            for delivery, _ in batch:
                with contextlib.suppress(Exception):
                    await delivery.nack(requeue=True)
            return []

    async def _end_urgent(self, session_ids: list[str]) -> None:
        """Urgent sessions are final: lower tiers everywhere need not wait for them now."""
        try:
            await self.signals.end(session_ids)
        except Exception as exc:  # their holds lapse by themselves
            log.warning("urgent session ends not announced", error=repr(exc))

    async def _apply(self, batch: list[tuple[AbstractIncomingMessage, Result]]) -> list[str]:
        results = [result for _, result in batch]
        while True:
            try:
                applied = await record_results(
                    self.pool, results, self.settings.verdict_weights, self.explain
                )
                break
            except _DB_DOWN as exc:  # hold the batch unacked until Postgres is back
                log.warning("postgres unavailable, holding results", error=repr(exc))
                await asyncio.sleep(DB_RETRY_S)
        for result in applied.unknown:
            log.warning(
                "result for an unknown or withdrawn session dropped",
                session_id=result.session_id,
                component=result.component,
            )
        metrics.RESULTS.labels("applied").inc(len(results) - len(applied.unknown))
        await self._announce(applied.sessions)
        for delivery, _ in batch:
            await delivery.ack()
        return [r.session_id for r in applied.sessions if r.verdict is not None]

    async def _announce(self, sessions: list[Recorded]) -> None:
        """Live state for pollers; Postgres already holds the truth, so Redis may fail."""
        try:
            await live.publish_states(self.redis, self.settings.key_prefix, live_states(sessions))
        except Exception as exc:
            log.warning("live state not updated", error=repr(exc))
        for recorded in sessions:
            if recorded.verdict is None:
                continue
            log.info(
                "session finalized",
                session_id=recorded.session_id,
                status=recorded.verdict.session_status,
                label=recorded.verdict.label,
            )
            if self.settings.llm_url:  # in the background: a slow gateway must not hold results
                task = asyncio.create_task(self._rewrite_explanation(recorded))
                self._background.add(task)
                task.add_done_callback(self._background.discard)

    async def _rewrite_explanation(self, recorded: Recorded) -> None:
        """Replace the template with the LLM's explanation, outside the fan-in transaction."""
        assert recorded.verdict is not None
        text = await explain_by_llm(self.http, self.settings, recorded.verdict, recorded.results)
        try:
            await self.pool.execute(
                "UPDATE verdicts SET explanation = $2 WHERE session_id = $1::uuid",
                recorded.session_id,
                text,
            )
        except _DB_DOWN as exc:  # the template explanation already stands
            log.warning("llm explanation not stored", error=repr(exc))

    async def _dead_letter(
        self, delivery: AbstractIncomingMessage, reason: str, kind: DeadLetterKind = "refused"
    ) -> None:
        """To the DLQ with bounded headers; a full DLQ parks it in the longest retry tier,
        from which it returns to the results queue it came from."""
        parking = (self._home_key(delivery), max(self.settings.retry_delays_ms()))
        await send_to_dlq(
            self.publisher, delivery, reason, source="aggregator", kind=kind, parking=parking
        )

    def _home_key(self, delivery: AbstractIncomingMessage) -> str:
        """A routing key that brings a parked result back to a results queue: its own when it
        matches a results binding (`{results}.*`, `{results}.urgent.*`), else the shared one."""
        key = delivery.routing_key or ""
        if key.rpartition(".")[0] in (self.names.results, self.names.urgent_results):
            return key
        return self.names.result_key("returned")

    async def _janitor(self, stop: asyncio.Event) -> None:
        """Every session ends: finalize those past their deadline from what they have.

        A failed pass never ends the loop: it is logged with its traceback, counted, and the
        next pass waits longer while failures persist; only cancellation stops it.
        """
        failures = 0
        while not stop.is_set():
            try:
                finished = await finalize_overdue(
                    self.pool, self.settings.verdict_weights, self.explain
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
                await asyncio.wait_for(stop.wait(), delay)


# A janitor failing pass after pass waits at most this long between passes.
JANITOR_MAX_DELAY_S = 60.0


def janitor_delay_s(interval_s: float, failures: int) -> float:
    """The wait before the next janitor pass: the interval, doubled per failure in a row."""
    return min(interval_s * 2 ** min(failures, 16), max(interval_s, JANITOR_MAX_DELAY_S))
