"""The PostgreSQL transport (TRANSPORT=postgres): the queues are rows of one table.

Every message RabbitMQ carries in the other mode is a row of `job_queue` (migration 010) in
a queue of the same name, so the rest of the code does not change with the transport:

- `TablePublisher` has the broker publisher's methods (task, result, retry, dead_letter);
  a task is signed as before, a retry is a row not claimable before its backoff ends, a dead
  letter is a row in status `error`.
- `TableConsumer` claims ready rows of its queues with `FOR UPDATE SKIP LOCKED`, highest
  plan priority first with the worker scheduler's aging (a row gains `aging_per_s` priority
  per second it waited, as in `workers.scheduling.effective_priority`), and hands each to
  the same callback a broker consumer would, as a `ClaimedRow` with a delivery's attributes
  and its ack/nack/reject. It wakes on `NOTIFY job_queue` (a trigger sends the queue's name
  when a row becomes ready; heard on the process's one listening connection,
  shared/listener.py) and polls slowly besides, for retries whose backoff ended,
  leases that lapsed and a lost listener.
- A claimed row is leased: the consumer renews the leases of the rows it holds, so the rows
  of a consumer that crashed become claimable again once `lease_s` has passed, and are then
  seen as redelivered.
- What a worker publishes while it handles a row (its results, a retry's copy, a dead
  letter, a media task's follow-ups) is held back and written in the transaction that
  settles the row, guarded by the lease (`deferring_writes`): a task's results exist if and
  only if its row was settled by the consumer that held it. So a task runs once without a
  Redis lock: the lease is the lock (`Lease`), and a holder whose lease lapsed commits
  nothing.
- A task settled with its result is `answered`, not yet completed: it completes in the
  aggregator's transaction that records the result and settles the result row (a trigger,
  migration 015), so a task, its result and the session's progress commit together.

The rest is the same code on both transports: dedupe and the fan-in make a duplicate task
or result harmless, as they do for a broker redelivery.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import math
import time
from collections.abc import Awaitable, Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import aio_pika
import asyncpg
import structlog
from nacl.signing import SigningKey

from shared.broker import result_message, task_message
from shared.constants import TENANT_HEADER
from shared.db import UNAVAILABLE
from shared.deadletters import dead_letter_headers
from shared.errors import QueueFull
from shared.listener import Listener
from shared.messages import Result, Task
from shared.names import Names
from shared.settings import Settings
from shared.signing import sign_task
from shared.transport import Delivery

log = structlog.get_logger(__name__)

NOTIFY_CHANNEL = "job_queue"

_COLUMNS = (
    "id, queue, routing_key, priority, body, headers, message_id, correlation_id, content_type,"
    " deliveries"
)

_CLAIM = f"""
WITH given_up AS (
    -- Dead letters where they are, as RabbitMQ makes them: rows waiting longer than the
    -- message TTL ($6, task queues only), and rows whose holder died with them $7 times
    -- (a delivery limit: a task that kills its worker is not claimed forever).
    UPDATE job_queue
    SET status = 'error', claimed_by = NULL, lease_until = NULL,
        reason = CASE WHEN status = 'running' THEN 'delivery_limit' ELSE 'expired' END,
        finished_at = clock_timestamp()
    WHERE id IN (
        SELECT id FROM job_queue
        WHERE queue = ANY($1::text[])
          AND ((status IN ('pending', 'retry') AND $6::float8 IS NOT NULL
                AND enqueued_at < clock_timestamp() - make_interval(secs => $6::float8))
               OR (status = 'running' AND lease_until < clock_timestamp()
                   AND deliveries >= $7))
        FOR UPDATE SKIP LOCKED
    )
), next AS (
    SELECT id FROM job_queue
    WHERE queue = ANY($1::text[])
      AND ((status IN ('pending', 'retry') AND scheduled_for <= clock_timestamp()
            AND ($6::float8 IS NULL
                 OR enqueued_at >= clock_timestamp() - make_interval(secs => $6::float8)))
           OR (status = 'running' AND lease_until < clock_timestamp() AND deliveries < $7))
    ORDER BY priority + extract(epoch FROM clock_timestamp() - scheduled_for) * $4 DESC, id
    LIMIT $2
    FOR UPDATE SKIP LOCKED
)
UPDATE job_queue j
SET status = 'running', deliveries = j.deliveries + 1, claimed_by = $3,
    lease_until = clock_timestamp() + make_interval(secs => $5)
FROM next WHERE j.id = next.id
RETURNING {", ".join("j." + c.strip() for c in _COLUMNS.split(","))}
"""

# Rows claimed under this consumer's id that it does not hold: a claim whose answer a lost
# connection never brought back. Back to their queues at once, not when their lease lapses.
_RELEASE_UNHELD = """
UPDATE job_queue
SET status = 'pending', claimed_by = NULL, lease_until = NULL,
    scheduled_for = clock_timestamp()
WHERE claimed_by = $1 AND status = 'running' AND NOT (id = ANY($2::bigint[]))
"""

_INSERT = """
INSERT INTO job_queue (queue, routing_key, status, priority, body, headers, message_id,
                       correlation_id, content_type, scheduled_for, reason, finished_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9,
        clock_timestamp() + make_interval(secs => $10), $11,
        CASE WHEN $3 = 'error' THEN clock_timestamp() END)
"""


# The first of the queues in which `$2` rows wait already (each count stops at `$2`): a
# full queue, whose tasks are refused. Two submissions at once may each find room for one.
_FIRST_FULL = """
SELECT q FROM unnest($1::text[]) AS q
WHERE (SELECT count(*) FROM (
         SELECT 1 FROM job_queue j WHERE j.queue = q AND j.status IN ('pending', 'retry')
         LIMIT $2) AS waiting) >= $2
LIMIT 1
"""


def queue_of(names: Names, routing_key: str) -> str:
    """The queue a routing key leads to: a result's key to its results queue, a task's key
    (which is its queue's name) to itself."""
    for results in (names.urgent_results, names.results):
        if routing_key.startswith(results + "."):
            return results
    return routing_key


def plain_headers(headers: Mapping[str, Any] | None) -> dict[str, Any]:
    """A header table as JSON can hold it: AMQP's bytes and timestamps become text."""
    return dict(json.loads(json.dumps(dict(headers or {}), default=str)))


def _row(
    queue: str,
    routing_key: str,
    message: aio_pika.Message,
    status: str = "pending",
    delay_s: float = 0.0,
    reason: str | None = None,
) -> Insert:
    """One row's values, as _INSERT takes them."""
    return (
        queue,
        routing_key,
        status,
        message.priority or 0,
        message.body,
        plain_headers(message.headers),
        message.message_id,
        message.correlation_id,
        message.content_type,
        delay_s,
        reason,
    )


# The row whose handling is under way in this task (and the tasks it starts): what is
# published meanwhile waits for its settlement.
_HANDLING: contextvars.ContextVar[ClaimedRow | None] = contextvars.ContextVar(
    "job_queue_handling", default=None
)

# One insert's arguments, as _INSERT takes them.
Insert = tuple[Any, ...]


@contextlib.contextmanager
def deferring_writes(delivery: object) -> Iterator[None]:
    """While a claimed row is handled, what the process publishes is written with the row's
    completion, in one transaction (a broker delivery: nothing changes)."""
    if not isinstance(delivery, ClaimedRow):
        yield
        return
    token = _HANDLING.set(delivery)
    try:
        yield
    finally:
        _HANDLING.reset(token)


# How long a consumer starting waits for its process's listener before it claims anyway.
LISTEN_WAIT_S = 5.0

# What a consumer of the table adds to its process's pool: its claims, its lease renewals
# and settlements (each one short statement; more settlements at once wait their turn for a
# moment rather than each holding a connection of the server's few).
TABLE_CONNECTIONS = 3


def pool_size(own: int, transport: str) -> int:
    """A process's pool: the `own` connections it needs on either transport, and on the
    table transport the consumer's besides."""
    return own + (TABLE_CONNECTIONS if transport == "postgres" else 0)


@dataclass
class TablePublisher:
    """Publishes to `job_queue` what `shared.broker.Publisher` publishes to RabbitMQ; given
    a connection instead of a pool, inside that connection's transaction."""

    pool: asyncpg.Pool | asyncpg.Connection
    names: Names
    urgent_priority: int | None = None
    task_signer: SigningKey | None = None
    # The API's QUEUE_MAX_LENGTH: `tasks` refuses to add to a queue that many rows wait in
    # (as the broker's x-max-length with reject-publish does).
    max_length: int | None = None
    # DLQ_MAX_LENGTH and DLQ_MAX_BYTES: `dead_letter` refuses a letter past them, as the
    # broker's capped DLQ does (migration 014).
    dlq_caps: tuple[int, int] | None = None

    async def open(self) -> TablePublisher:
        return self

    async def close(self) -> None:
        """Nothing of its own to close: the pool is its owner's."""

    async def _insert(
        self,
        queue: str,
        routing_key: str,
        message: aio_pika.Message,
        *,
        status: str = "pending",
        delay_s: float = 0.0,
        reason: str | None = None,
    ) -> None:
        insert = _row(queue, routing_key, message, status, delay_s, reason)
        handling = _HANDLING.get()
        if handling is not None:
            # Written when the row is completed; never for a row settled or lost already
            # (a stopped run's retry would be a second copy of the task).
            if not (handling.settled or handling.lease_lost):
                handling.pending.append(insert)
            return
        await self.pool.execute(_INSERT, *insert)

    async def tasks(self, tasks: Sequence[Task], tenant: str | None = None) -> None:
        """Several tasks in one statement, at once (a session's first tasks, with its row)."""
        messages = [self._task_message(task, tenant) for task in tasks]
        if self.max_length is not None:
            full = await self.pool.fetchval(
                _FIRST_FULL, [queue for queue, _ in messages], self.max_length
            )
            if full is not None:
                raise QueueFull(f"{full} holds {self.max_length} tasks waiting (QUEUE_MAX_LENGTH)")
        rows = [_row(queue, queue, message) for queue, message in messages]
        await self.pool.execute(_INSERT_MANY, *columns_of(rows))

    def _task_message(
        self, task: Task, tenant: str | None, attempt: int = 1
    ) -> tuple[str, aio_pika.Message]:
        """A task's queue and message, signed when this publisher signs (the API and media
        workers do)."""
        if self.task_signer is not None:
            task = sign_task(self.task_signer, task)
        queue = self.names.task_queue(task.component, task.plan_type)
        headers = {TENANT_HEADER: tenant} if tenant else None
        return queue, task_message(task, attempt, headers)

    async def send(self, exchange: str, routing_key: str, message: aio_pika.Message) -> None:
        """A message to the queue its routing key leads to, at once."""
        await self._insert(queue_of(self.names, routing_key), routing_key, message)

    async def task(self, task: Task, attempt: int = 1, tenant: str | None = None) -> None:
        queue, message = self._task_message(task, tenant, attempt)
        await self._insert(queue, queue, message)

    async def result(
        self, result: Result, priority: int = 0, headers: dict[str, Any] | None = None
    ) -> None:
        urgent = self.urgent_priority is not None and priority >= self.urgent_priority
        key = self.names.result_key(result.component, urgent)
        await self._insert(
            queue_of(self.names, key), key, result_message(result, priority, headers)
        )

    async def retry(self, message: aio_pika.Message, routing_key: str, delay_ms: int) -> None:
        """The copy is claimable again once `delay_ms` has passed (the retry tier's wait)."""
        queue = queue_of(self.names, routing_key)
        await self._insert(queue, routing_key, message, status="retry", delay_s=delay_ms / 1000)

    async def dead_letter(
        self,
        body: bytes,
        headers: dict[str, Any],
        reason: str,
        origin: str,
        priority: int | None = None,
    ) -> None:
        """A row in status `error` of the DLQ, with the dead letter's bounded headers;
        QueueFull when the deployment's dead letters reach `dlq_caps` (the caller parks the
        original, as when the broker's DLQ refuses). The room is asked before the row is
        written (inside a handling, when the task settles), so letters in flight are not
        counted and may pass the cap."""
        if self.dlq_caps is not None:
            rows, size = self.dlq_caps
            room = await self.pool.fetchval(
                "SELECT job_queue_dlq_room($1, $2, $3, $4, $5)",
                self.names.dlq,
                self.names.prefix,
                rows,
                size,
                len(body),
            )
            if not room:
                raise QueueFull(f"{self.names.dlq} holds {rows} letters or {size} bytes")
        kept = dead_letter_headers(headers, reason, origin, int(time.time() * 1000))
        message = aio_pika.Message(body, headers=kept, priority=priority)
        await self._insert(self.names.dlq, origin, message, status="error", reason=reason)


def dlq_caps_of(settings: Settings) -> tuple[int, int]:
    """A deployment's DLQ caps, as `TablePublisher.dlq_caps` takes them."""
    return settings.dlq_max_length, settings.dlq_max_bytes


# Rows of one status finished more than $1 s ago, at most $2 of them (through that
# status's partial index).
_PRUNE_OF = """
DELETE FROM job_queue WHERE id IN (
    SELECT id FROM job_queue
    WHERE status = '{status}' AND finished_at < clock_timestamp() - make_interval(secs => $1)
    ORDER BY finished_at LIMIT $2 FOR UPDATE SKIP LOCKED
)
"""


# Completed rows; and answers whose result row was deleted unsettled (by hand), which
# nobody is left to complete: they go when completed rows of their age do.
_PRUNES = tuple(_PRUNE_OF.format(status=status) for status in ("completed", "answered"))


async def prune_completed(pool: asyncpg.Pool, older_than_s: float, batch: int = 5000) -> int:
    """Delete completed rows finished more than `older_than_s` ago, at most `batch` of them,
    and answers left over as old (dead letters stay until replayed or purged); how many
    went."""
    gone = 0
    for statement in _PRUNES:
        done = await pool.execute(statement, older_than_s, batch)
        gone += int(done.split()[-1])
    return gone


def settled_as(status: str, writes: Sequence[Insert], answers: Collection[str]) -> str:
    """The status a settlement stores: a completion that published a row to one of the
    `answers` queues (a task's result) is `answered`, and completes once that result is
    settled (migration 015); any other settlement stores what it says."""
    if status == "completed" and any(write[0] in answers for write in writes):
        return "answered"
    return status


_COUNTS = """
SELECT queue,
       count(*) FILTER (WHERE status IN ('pending', 'retry')) AS waiting,
       count(DISTINCT claimed_by)
           FILTER (WHERE status = 'running' AND lease_until >= clock_timestamp()) AS holders,
       count(*) FILTER (WHERE status = 'error') AS dead
FROM job_queue
WHERE (starts_with(queue, $1 || '.') OR queue = $2)
  -- Not `<> 'completed'`: the partial indexes, not a scan of the hour of completed rows.
  AND status IN ('pending', 'retry', 'running', 'error')
GROUP BY queue
"""


async def queue_counts(pool: asyncpg.Pool, prefix: str, dlq: str) -> dict[str, tuple[int, int]]:
    """Per queue of a deployment: rows waiting (pending, or in a retry's backoff) and the
    consumers holding rows of it now; the DLQ's waiting rows are every dead letter (those
    rejected where they were too)."""
    counts: dict[str, tuple[int, int]] = {}
    dead = 0
    for r in await pool.fetch(_COUNTS, prefix, dlq):
        counts[r["queue"]] = (r["waiting"], r["holders"])
        dead += r["dead"]
    counts[dlq] = (dead, 0)
    return counts


@dataclass(eq=False)
class ClaimedRow:
    """A claimed row, with what the steps read of a broker delivery and its settlements."""

    consumer: TableConsumer
    id: int
    queue: str
    routing_key: str
    priority: int
    body: bytes
    headers: dict[str, Any]
    message_id: str | None
    correlation_id: str | None
    content_type: str | None
    deliveries: int
    settled: bool = field(default=False)
    lease_lost: bool = field(default=False)
    # Publishes made while it was handled, written when it is completed (deferring_writes).
    pending: list[Insert] = field(default_factory=list)
    # Set when the lease was found lost: the run stops (the Watchdog step waits on it).
    lost: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def channel(self) -> ClaimedRow:
        """What carries the row: its lease (see `is_closed`)."""
        return self

    @property
    def is_closed(self) -> bool:
        """The lease lapsed and another consumer may hold the row now: it is not ours to
        run (as a delivery whose channel closed returns to its queue by itself)."""
        return self.lease_lost

    @property
    def redelivered(self) -> bool:
        """Claimed before: its earlier consumer stopped or crashed without settling it."""
        return self.deliveries > 1

    async def ack(self, multiple: bool = False) -> None:
        await self.consumer.settle(self, "completed")

    async def nack(self, multiple: bool = False, requeue: bool = True) -> None:
        await self.consumer.settle(self, "pending" if requeue else "error")

    async def reject(self, requeue: bool = False) -> None:
        await self.consumer.settle(self, "pending" if requeue else "error", "rejected")


_SETTLE = """
UPDATE job_queue
SET status = $2, reason = coalesce($3, reason), claimed_by = NULL, lease_until = NULL,
    scheduled_for = CASE WHEN $2 = 'pending' THEN clock_timestamp() ELSE scheduled_for END,
    finished_at = CASE WHEN $2 IN ('completed', 'error') THEN clock_timestamp() END
WHERE id = $1 AND claimed_by = $4 AND deliveries = $5 AND status = 'running'
"""


# Completes many rows held by one consumer in one statement, each fenced as `_SETTLE` is.
_COMPLETE_MANY = """
UPDATE job_queue AS j
SET status = 'completed', claimed_by = NULL, lease_until = NULL,
    finished_at = clock_timestamp()
FROM unnest($1::bigint[], $2::integer[]) AS f(id, deliveries)
WHERE j.id = f.id AND j.deliveries = f.deliveries AND j.claimed_by = $3
  AND j.status = 'running'
RETURNING j.id
"""


# The types of an Insert's values, in its order (headers travel as JSON text).
_COLUMN_TYPES = (
    *("text", "text", "text", "smallint", "bytea", "text", "text", "text", "text"),
    *("float8", "text"),
)


def _rows_from_arrays(first: int) -> str:
    """The SELECT of rows given as one array per column, from parameter `$first` on (see
    `columns_of`); an `error` row is finished when written."""
    arrays = ", ".join(f"${first + i}::{kind}[]" for i, kind in enumerate(_COLUMN_TYPES))
    return f"""
    SELECT w.queue, w.routing_key, w.status, w.priority, w.body, w.headers::jsonb,
           w.message_id, w.correlation_id, w.content_type,
           clock_timestamp() + make_interval(secs => w.delay_s), w.reason,
           CASE WHEN w.status = 'error' THEN clock_timestamp() END
    FROM unnest({arrays})
         AS w(queue, routing_key, status, priority, body, headers, message_id,
              correlation_id, content_type, delay_s, reason)"""


_INTO = """INSERT INTO job_queue (queue, routing_key, status, priority, body, headers, message_id,
                       correlation_id, content_type, scheduled_for, reason, finished_at)"""

_INSERT_MANY = _INTO + _rows_from_arrays(1)

# The settlement and the rows published meanwhile, in one statement (one round trip, one
# commit): the rows are written only when the row was still this consumer's.
_SETTLE_WITH_WRITES = f"""
WITH done AS (
    UPDATE job_queue
    SET status = $2, reason = coalesce($3, reason), claimed_by = NULL, lease_until = NULL,
        finished_at = clock_timestamp()
    WHERE id = $1 AND claimed_by = $4 AND deliveries = $5 AND status = 'running'
    RETURNING id
), written AS (
    {_INTO}{_rows_from_arrays(6)}
    WHERE EXISTS (SELECT 1 FROM done)
    RETURNING 1
)
SELECT count(*) FROM done
"""


def columns_of(writes: Sequence[Insert]) -> list[list[Any]]:
    """Inserts as one array per column, for `_SETTLE_WITH_WRITES` (headers as JSON text)."""
    columns: list[list[Any]] = [list(column) for column in zip(*writes, strict=True)]
    columns[5] = [json.dumps(headers) for headers in columns[5]]
    return columns


_NEXT_DUE = """
SELECT extract(epoch FROM min(scheduled_for) - clock_timestamp()) FROM job_queue
WHERE queue = ANY($1::text[]) AND status IN ('pending', 'retry')
  AND scheduled_for > clock_timestamp()
"""

# A claim is fenced by its delivery count as well as its consumer: the same consumer may
# claim a row again after its own lease lapsed (PostgreSQL away longer than the lease), and
# only the newer claim may then renew or settle it.
_RENEW = """
UPDATE job_queue j SET lease_until = clock_timestamp() + make_interval(secs => $4)
FROM unnest($1::bigint[], $2::int[]) AS held(id, deliveries)
WHERE j.id = held.id AND j.deliveries = held.deliveries AND j.claimed_by = $3
  AND j.status = 'running'
RETURNING j.id
"""


# Queues claimed together and how many of their rows a consumer holds at most (a broker
# consumer's prefetch per queue, here per group, so a full group never starves another).
QueueGroup = tuple[Sequence[str], int]


class TableConsumer:
    """Claims rows of its queue groups for `on_delivery`, each group up to its capacity."""

    def __init__(
        self,
        pool: asyncpg.Pool,
        listener: Listener,
        groups: Sequence[QueueGroup],
        on_delivery: Callable[[ClaimedRow], Awaitable[None]],
        *,
        consumer_id: str,
        lease_s: float,
        poll_s: float,
        aging_per_s: float,
        ttl_s: float | None = None,
        delivery_limit: int = 10,
        answers: Collection[str] = (),
    ) -> None:
        """`ttl_s`: rows waiting longer are dead letters, not claimed (task queues);
        `delivery_limit`: a row whose holders died with it this often is one too;
        `answers`: the queues of the rows' results (a worker's: the results queues), whose
        rows leave a completed row `answered` (`settled_as`)."""
        self._pool = pool
        self._listener = listener
        self._groups = [(list(queues), capacity) for queues, capacity in groups]
        self._queues = [queue for queues, _ in self._groups for queue in queues]
        self._on_delivery = on_delivery
        self.consumer_id = consumer_id
        self._lease_s = lease_s
        self._poll_s = poll_s
        self._aging = aging_per_s
        self._ttl_s = ttl_s
        self._delivery_limit = delivery_limit
        self._answers = frozenset(answers)
        self._held: dict[int, ClaimedRow] = {}
        # A claim failed mid-way (its rows may be claimed, unknown to us): release them first.
        self._claim_unanswered = False
        # The group of each queue, and the groups to claim from at the next wake: those a
        # NOTIFY named or a settlement made room in (every group after a timed wait).
        self._group_of = {q: i for i, (queues, _) in enumerate(self._groups) for q in queues}
        self._due: set[int] = set(range(len(self._groups)))
        self._wake = asyncio.Event()
        self._stopped = asyncio.Event()
        self._claiming = True
        self._claims: asyncio.Task[None] | None = None
        self._renewals: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Claim from now on, in the background, until `stop`; woken by the NOTIFY of a row
        ready in its queues (on the process's listener; the poll serves while it is away)."""
        await self._listener.follow(NOTIFY_CHANNEL, self._wake_for, on_gap=self._claim_everywhere)
        # Listening before claiming, so a consumer that says it is ready is woken by the next
        # row at once; a listener that cannot connect by then leaves the poll to serve.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(LISTEN_WAIT_S):
                await self._listener.connected.wait()
        self._claims = asyncio.create_task(self._claim_loop(), name="job queue claims")
        self._renewals = asyncio.create_task(self._renew_loop(), name="job queue leases")

    async def stop_claiming(self) -> None:
        """Claim no more rows, once a claim under way has handed its rows on (a stopping
        worker then hands back what never started); those held are still renewed and
        settled, so running tasks end."""
        self._claiming = False
        self._wake.set()
        if self._claims is not None:
            await asyncio.wait({self._claims})

    async def stop(self) -> None:
        """Claim and renew no more; rows still held stay leased until the lease lapses."""
        self._claiming = False
        self._stopped.set()
        self._wake.set()
        for task in (self._claims, self._renewals):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        await self._listener.unfollow(NOTIFY_CHANNEL, self._wake_for)

    @property
    def held(self) -> int:
        return len(self._held)

    def _let_go(self, row: ClaimedRow) -> None:
        """No longer held (nor renewed): only this claim of the row, not a newer one."""
        if self._held.get(row.id) is row:
            del self._held[row.id]
        self._wake_for(row.queue)

    def _wake_for(self, queue: str) -> None:
        """Claim from `queue`'s group at the next round (a row ready there, or room)."""
        group = self._group_of.get(queue)
        if group is not None:
            self._due.add(group)
            self._wake.set()

    async def settle(self, row: ClaimedRow, status: str, reason: str | None = None) -> None:
        """Complete (or leave answered: `settled_as`), re-queue or dead-letter a held row; a
        second settlement does nothing (as a second ack of a delivery would fail, quietly
        here).

        A completion writes what was published while the row was handled in the same
        statement, and only while the row is still this claim's: a holder whose lease lapsed
        (another claim may run the task now) writes nothing. A row handed back or
        dead-lettered drops them: the task is run again, or not at all."""
        if row.settled:
            return
        writes = row.pending if status == "completed" else []
        stored = settled_as(status, writes, self._answers)
        fence = (row.id, stored, reason, self.consumer_id, row.deliveries)
        ours = False
        try:
            if row.lease_lost:
                pass  # a newer claim owns the row now
            elif writes:
                ours = await self._pool.fetchval(_SETTLE_WITH_WRITES, *fence, *columns_of(writes))
                ours = ours == 1
            else:
                ours = await self._pool.execute(_SETTLE, *fence) == "UPDATE 1"
        finally:
            # Settled or not (PostgreSQL away), the row is let go: no longer renewed, an
            # unsettled one returns to its queue once its lease lapses, and is run again.
            row.settled = True
            row.pending = []
            self._let_go(row)
        if not ours:
            log.warning("job queue row no longer ours: settled by nobody", row=row.id)

    async def complete_all(self, rows: Sequence[ClaimedRow]) -> None:
        """Complete held rows that published nothing while handled (an aggregator's batch of
        results), in one statement; each is fenced as by `settle`, and a row no longer this
        claim's is left to its new holder."""
        mine = [r for r in rows if not r.settled and not r.lease_lost and not r.pending]
        batched = {id(r) for r in mine}
        others = [r for r in rows if id(r) not in batched]
        if mine:
            await self._complete_together(mine)
        for row in others:
            await self.settle(row, "completed")

    async def _complete_together(self, mine: Sequence[ClaimedRow]) -> None:
        try:
            done = await self._pool.fetch(
                _COMPLETE_MANY,
                [r.id for r in mine],
                [r.deliveries for r in mine],
                self.consumer_id,
            )
        finally:
            for row in mine:  # as `settle` does: let go, settled or not
                row.settled = True
                self._let_go(row)
        lost = len(mine) - len(done)
        if lost:
            log.warning("job queue rows no longer ours: settled by nobody", rows=lost)

    async def _claim_loop(self) -> None:
        while self._claiming:
            # Taken before the claims: a row notified while they run wakes the next round.
            self._wake.clear()
            due, self._due = self._due, set()
            wait_s = self._poll_s
            try:
                found_none = False
                for group in sorted(due):
                    queues, capacity = self._groups[group]
                    free = capacity - sum(r.queue in queues for r in self._held.values())
                    if free <= 0:
                        continue  # a settlement makes room, and names the group again
                    claimed = await self._claim(queues, free)
                    if claimed == free:
                        self._due.add(group)  # more may be ready: again once there is room
                    found_none = found_none or claimed == 0
                if self._due:
                    continue
                if found_none:  # named but nothing claimable: maybe a retry in its backoff
                    wait_s = min(wait_s, await self._next_due_s())
            except UNAVAILABLE as exc:
                log.warning("job queue unreachable, claiming later", error=repr(exc))
            except Exception:  # never the end of claiming: logged, tried again later
                log.exception("claiming from the job queue failed")
            if not await self._woken(wait_s):
                self._due = set(range(len(self._groups)))  # the poll: every group

    async def _woken(self, wait_s: float) -> bool:
        """Wait for a wake-up, at most `wait_s`; whether one came."""
        try:
            async with asyncio.timeout(wait_s):
                await self._wake.wait()
        except TimeoutError:
            return False
        return True

    async def _next_due_s(self) -> float:
        """Seconds until the earliest row of its queues not yet claimable (a retry in its
        backoff) becomes so; infinity when there is none."""
        due = await self._pool.fetchval(_NEXT_DUE, self._queues)
        return math.inf if due is None else max(0.0, float(due))

    async def _claim(self, queues: list[str], limit: int) -> int:
        if self._claim_unanswered:
            released = await self._pool.execute(_RELEASE_UNHELD, self.consumer_id, list(self._held))
            self._claim_unanswered = False
            if released != "UPDATE 0":
                log.warning("job queue rows of an unanswered claim released", status=released)
        try:
            rows = await self._pool.fetch(
                _CLAIM,
                queues,
                limit,
                self.consumer_id,
                self._aging,
                self._lease_s,
                self._ttl_s,
                self._delivery_limit,
            )
        except UNAVAILABLE:
            # It may have committed: its rows are this consumer's until their lease lapses,
            # unless the next claim round releases them first.
            self._claim_unanswered = True
            raise
        claimed = [ClaimedRow(self, **dict(record)) for record in rows]
        for row in claimed:  # held (and renewed) before any is handed on
            earlier = self._held.get(row.id)
            if earlier is not None:  # its own lapsed claim, claimed again: that one stops
                self._lose(earlier)
            self._held[row.id] = row
        if self._claiming:
            for row in claimed:
                await self._on_delivery(row)
        else:  # stopped meanwhile: back to the queue at once, not at the lease's end
            for row in claimed:
                await row.nack(requeue=True)
        return len(claimed)

    def _lose(self, row: ClaimedRow) -> None:
        log.warning("job queue lease lost", row=row.id, queue=row.queue)
        row.lease_lost = True
        row.lost.set()
        self._let_go(row)

    async def _renew_loop(self) -> None:
        """Leases held are renewed at a third of their length: one lost renewal is no loss,
        and no failure ends the loop (a lease not renewed lapses, its task runs again)."""
        while not self._stopped.is_set():
            await asyncio.sleep(self._lease_s / 3)
            if self._held:
                try:
                    await self._renew()
                except UNAVAILABLE as exc:
                    log.warning("job queue leases not renewed", error=repr(exc))
                except Exception:
                    log.exception("renewing job queue leases failed")

    async def _renew(self) -> None:
        """Renew every lease held; a claim no longer current (its lease lapsed meanwhile and
        the row was claimed again) is let go, and its run stops."""
        held = list(self._held.values())
        renewed = {
            r["id"]
            for r in await self._pool.fetch(
                _RENEW,
                [row.id for row in held],
                [row.deliveries for row in held],
                self.consumer_id,
                self._lease_s,
            )
        }
        for row in held:
            if row.id not in renewed and not row.settled:
                self._lose(row)

    def _claim_everywhere(self) -> None:
        """Listening (again): a NOTIFY may have been missed meanwhile, so every group is due."""
        self._due = set(range(len(self._groups)))
        self._wake.set()


@dataclass
class Lease:
    """The lock of a task on the table transport: its row's lease (workers' `Lock`). The
    claim took it and the consumer renews it, so there is nothing to acquire, renew or
    release here; `lost` is set when a renewal finds the row gone to another consumer."""

    row: ClaimedRow
    ttl_ms: int
    lost: asyncio.Event = field(init=False)

    def __post_init__(self) -> None:
        self.lost = self.row.lost

    async def acquire(self) -> bool:
        return not self.row.lease_lost

    async def still_held(self) -> bool:
        return not self.row.lease_lost

    async def finish(self) -> None:
        """Done is the row's completion, written with its results."""

    async def release(self) -> None:
        """Released by the row's settlement."""

    def watchdog(self) -> contextlib.AbstractAsyncContextManager[None]:
        return contextlib.nullcontext()


class Completion:
    """The table transport's rows among a batch of deliveries, completed in the caller's own
    transaction: an aggregator records the results they carry and completes them in one
    commit, so a result row is completed exactly when its result is applied (on RabbitMQ
    the batch holds no row and its deliveries are acked after the commit, as before).

    `within(conn, rows)` completes the rows given (each fenced by its claim, as `settle`
    does) on the caller's connection, inside its transaction; `committed()`, called once that
    transaction committed, lets them go. A transaction rolled back leaves them held: they are
    handed back or settled otherwise, as any held row is."""

    def __init__(self, deliveries: Iterable[Delivery]) -> None:
        self._rows = [
            d
            for d in deliveries
            if isinstance(d, ClaimedRow) and not d.settled and not d.lease_lost and not d.pending
        ]
        self._completed: list[ClaimedRow] = []

    def __bool__(self) -> bool:
        return bool(self._rows)

    async def within(self, conn: asyncpg.Connection, rows: Sequence[Delivery]) -> None:
        """Complete `rows` (those of this batch it holds) on `conn`, one statement per
        consumer; a row no longer its claim's is left to its new holder (and logged)."""
        chosen = [row for row in self._rows if any(row is d for d in rows)]
        by_consumer: dict[int, list[ClaimedRow]] = {}
        for row in chosen:
            by_consumer.setdefault(id(row.consumer), []).append(row)
        done = 0
        for mine in by_consumer.values():
            completed = await conn.fetch(
                _COMPLETE_MANY,
                [r.id for r in mine],
                [r.deliveries for r in mine],
                mine[0].consumer.consumer_id,
            )
            done += len(completed)
        if done < len(chosen):
            log.warning("job queue rows no longer ours: settled by nobody", rows=len(chosen) - done)
        self._completed = chosen

    def committed(self) -> None:
        """The transaction that completed them committed: they are settled, and let go."""
        for row in self._completed:
            row.settled = True
            row.consumer._let_go(row)
        self._completed = []


async def ack_together(deliveries: Sequence[Delivery]) -> list[Delivery]:
    """Complete the table transport's rows among `deliveries` with one statement per
    consumer; the other deliveries (a broker's) are returned, for the caller to ack."""
    others: list[Delivery] = []
    by_consumer: dict[int, list[ClaimedRow]] = {}
    for delivery in deliveries:
        if isinstance(delivery, ClaimedRow):
            by_consumer.setdefault(id(delivery.consumer), []).append(delivery)
        else:
            others.append(delivery)
    for rows in by_consumer.values():
        await rows[0].consumer.complete_all(rows)
    return others
