"""The PostgreSQL transport (TRANSPORT=postgres): tasks and results as rows of job_queue,
through the same workers, steps and aggregator as on RabbitMQ."""

import asyncio
import itertools
import json
import uuid
from functools import partial
from typing import Any

import aio_pika
import asyncpg
import pytest
from postgres_node import owned_postgres

from aggregator.applier import ack_all
from aggregator.service import Aggregator
from dispatcher.submit import first_tasks
from shared import db as database
from shared import job_queue, resources, sessions
from shared.constants import (
    ANALYSIS_COMPONENTS,
    ATTEMPT_HEADER,
    REASON_HEADER,
    REPLAYS_HEADER,
    TENANT_HEADER,
)
from shared.errors import RetryableAnalysisError
from shared.job_queue import ClaimedRow, TableConsumer, TablePublisher, deferring_writes
from shared.listener import Listener
from shared.messages import MAX_MESSAGE_BYTES
from shared.names import Names
from shared.sessions import NewSession
from shared.signing import task_signer
from tests.cli import verdict
from tests.integration.conftest import eventually, running
from tests.integration.test_api import API, ENTERPRISE, client_for
from tests.integration.test_worker_flow import explain, final_view, scored, submit, workers_for
from workers.executor import Analysis
from workers.group import WorkerGroup, worker_options

pytestmark = pytest.mark.integration


async def on_table(world, **overrides):
    return await world(**{"transport": "postgres", "job_poll_s": 0.5, **overrides})


def publisher_of(settings, pool):
    return TablePublisher(pool, Names(settings.topology_prefix), task_signer=task_signer(settings))


async def rows(pool, settings, *statuses):
    """job_queue rows of this world, by queue and status."""
    found = await pool.fetch(
        "SELECT queue, status, headers, reason, deliveries, scheduled_for, enqueued_at"
        " FROM job_queue WHERE queue LIKE $1 || '%' AND (cardinality($2::text[]) = 0"
        " OR status = ANY($2::text[])) ORDER BY id",
        settings.topology_prefix,
        list(statuses),
    )
    return [dict(r) for r in found]


# The listeners of a test's consumers, closed after it (a process has one; these tests stand
# for several processes).
LISTENERS: list[Listener] = []


@pytest.fixture(autouse=True)
async def _listeners_closed():
    yield
    while LISTENERS:
        await LISTENERS.pop().close()


def listener_for(settings) -> Listener:
    LISTENERS.append(Listener(settings.database_url))
    return LISTENERS[-1]


def consumer(pool, settings, queues, into, capacity=10, **overrides):
    """A consumer of `queues` (one group of `capacity`) that collects what it claims."""
    options = {
        "consumer_id": f"test:{uuid.uuid4().hex[:8]}",
        "lease_s": 30.0,
        "poll_s": 30.0,
        "aging_per_s": 0.0,
        **overrides,
    }

    async def take(row: ClaimedRow) -> None:
        into.append(row)

    return TableConsumer(pool, listener_for(settings), [(queues, capacity)], take, **options)


async def test_sessions_on_three_plans_complete_through_the_table(world, pool):
    """The API's tasks, the workers' results and every settlement go through job_queue: the
    sessions end as on RabbitMQ, and every row of the world ends completed."""
    settings = await on_table(world)
    publisher = publisher_of(settings, pool)
    async with running(*workers_for(settings), Aggregator(settings, explain=explain).run):
        sids = [await submit(pool, publisher, plan=p, content="x" * (10 * p)) for p in (1, 4, 6)]
        views = [await final_view(pool, sid) for sid in sids]
    verdicts = {1: "low_risk", 4: "high_risk", 6: "critical_risk"}
    for plan, view in zip((1, 4, 6), views, strict=True):
        assert view.status == "completed"
        assert view.results["techniques"]["score"] == 10 * plan
        assert view.verdict["label"] == verdicts[plan]
    states = await rows(pool, settings)
    assert {r["status"] for r in states} == {"completed"}
    # Three sessions: four tasks each, and four results each; the top plan's are urgent.
    assert len(states) == 24
    names = Names(settings.topology_prefix)
    assert sum(r["queue"] == names.results for r in states) == 8
    assert sum(r["queue"] == names.urgent_results for r in states) == 4


async def test_poison_rows_become_error_rows_and_the_worker_keeps_going(world, pool):
    """Garbage and a task that is not signed are dead letters (status error, with a reason);
    the session after them completes."""
    settings = await on_table(world)
    publisher = publisher_of(settings, pool)
    queue = f"{settings.topology_prefix}.claims.2"
    forged = {
        "sessionId": str(uuid.uuid4()),
        "component": "claims",
        "planType": 2,
        "priority": 2,
        "input": {"content": "x", "inputType": "text"},
        "timestamp": 1,
    }
    for body in (b"\x00not json", json.dumps(forged).encode()):
        await publisher.send(settings.topology_prefix, queue, aio_pika.Message(body))
    async with running(*workers_for(settings), Aggregator(settings, explain=explain).run):
        sid = await submit(pool, publisher, plan=2)
        assert (await final_view(pool, sid)).status == "completed"
        dead = await eventually(lambda: _at_least(rows(pool, settings, "error"), 2))
    assert {r["queue"] for r in dead} == {f"{settings.topology_prefix}_dlq"}
    reasons = sorted(r["headers"][REASON_HEADER] for r in dead)
    assert any("invalid task" in r for r in reasons), reasons
    assert "unauthenticated task" in reasons
    assert not await rows(pool, settings, "pending", "retry", "running")


async def test_oversize_rows_are_dead_letters_where_they_are_and_nobody_stops(world, pool):
    """A task row with a body over MAX_MESSAGE_BYTES and one whose headers pass
    MAX_HEADER_BYTES, and a result row as big: each is claimed once and rejected unread
    (status error where it is, reason `rejected`); the worker and the aggregator go on, and
    the session after them completes."""
    settings = await on_table(world)
    publisher = publisher_of(settings, pool)
    names = Names(settings.topology_prefix)
    queue = names.task_queue("claims", 2)
    big_body = aio_pika.Message(b"x" * (MAX_MESSAGE_BYTES + 1), message_id="body")
    big_headers = aio_pika.Message(
        b"{}", message_id="headers", headers={"pad": "x" * (settings.max_header_bytes + 1)}
    )
    for message in (big_body, big_headers):
        await publisher.send(names.exchange, queue, message)
    big_result = aio_pika.Message(b"x" * (MAX_MESSAGE_BYTES + 1), message_id="result")
    await publisher.send(names.exchange, names.result_key("claims"), big_result)
    async with running(*workers_for(settings), Aggregator(settings, explain=explain).run):
        dead = await eventually(lambda: _at_least(rows(pool, settings, "error"), 3))
        sid = await submit(pool, publisher, plan=2)
        assert (await final_view(pool, sid)).status == "completed"
    where = sorted((r["queue"], r["reason"], r["deliveries"]) for r in dead)
    assert where == sorted(
        [(queue, "rejected", 1), (queue, "rejected", 1), (names.results, "rejected", 1)]
    )
    assert not await rows(pool, settings, "pending", "retry", "running")


async def _at_least(found, count):
    got = await found
    return got if len(got) >= count else None


async def test_retries_wait_their_backoff_on_the_table(world, pool):
    """A failure that may pass is published again not claimable before base × 2^(n-1), and
    claimed when that ends, not at the next poll (30 s here); the third attempt succeeds."""
    settings = await on_table(world, retry_base_ms=300, max_attempts=3, job_poll_s=30)
    started_at: list[float] = []

    async def flaky(task, ctx):
        if task.component == "claims":
            started_at.append(asyncio.get_running_loop().time())
            if task.retry_count < 2:
                raise RetryableAnalysisError("upstream 503")
        return Analysis(10)

    publisher = publisher_of(settings, pool)
    async with running(*workers_for(settings, flaky), Aggregator(settings, explain=explain).run):
        view = await final_view(pool, await submit(pool, publisher))
    assert view.status == "completed"
    assert view.results["claims"]["attempt"] == 3
    gaps = [later - earlier for earlier, later in itertools.pairwise(started_at)]
    assert gaps[0] >= 0.3 - 0.03 and gaps[1] >= 0.6 - 0.03, gaps
    assert gaps[0] < 0.3 + 2 and gaps[1] < 0.6 + 2, gaps  # not the 30 s poll
    retried = [r for r in await rows(pool, settings) if r["headers"].get(ATTEMPT_HEADER, 1) > 1]
    assert len(retried) == 2
    for row in retried:  # held back in the row itself, not in a process's timer
        assert row["scheduled_for"] > row["enqueued_at"]


async def test_exhausted_retries_end_partial_with_an_error_row(world, pool):
    settings = await on_table(world, retry_base_ms=50, max_attempts=2)

    async def broken(task, ctx):
        if task.component == "claims":
            raise RetryableAnalysisError("still down")
        return Analysis(30)

    publisher = publisher_of(settings, pool)
    async with running(*workers_for(settings, broken), Aggregator(settings, explain=explain).run):
        view = await final_view(pool, await submit(pool, publisher))
        dead = await eventually(lambda: rows(pool, settings, "error"))
    assert view.status == "partial"
    assert len(dead) == 1
    assert dead[0]["headers"][ATTEMPT_HEADER] == 2
    assert "still down" in dead[0]["reason"]


async def test_a_crashed_consumers_rows_return_once_the_lease_lapses(world, pool):
    """Claimed and never settled nor renewed (the process died): claimable again after the
    lease, and seen as redelivered; a late ack by the first holder changes nothing."""
    settings = await on_table(world)
    publisher = publisher_of(settings, pool)
    queue = f"{settings.topology_prefix}.claims.3"
    await publisher.send(settings.topology_prefix, queue, aio_pika.Message(b"one"))
    first: list[ClaimedRow] = []
    crashed = consumer(pool, settings, [queue], first, lease_s=1.0)
    crashed._renew_loop = _never  # type: ignore[method-assign]  # a dead process renews nothing
    await crashed.start()
    await eventually(lambda: _truthy(first))
    await crashed.stop()
    second: list[ClaimedRow] = []
    heir = consumer(pool, settings, [queue], second, poll_s=0.2)
    await heir.start()
    try:
        await asyncio.sleep(0.5)
        assert not second  # the lease still runs
        await eventually(lambda: _truthy(second), timeout=5)
        assert second[0].redelivered and not first[0].redelivered
        await first[0].ack()  # the first holder's late ack: not its row any more
        assert (await rows(pool, settings))[0]["status"] == "running"
        await second[0].ack()
        assert (await rows(pool, settings))[0]["status"] == "completed"
    finally:
        await heir.stop()


async def _never():
    await asyncio.Event().wait()


async def _truthy(items):
    return bool(items)


async def test_claims_take_higher_plans_first_and_never_the_same_row_twice(world, pool):
    """Two consumers at once share the rows without overlap, each claim highest priority
    first."""
    settings = await on_table(world)
    publisher = publisher_of(settings, pool)
    names = Names(settings.topology_prefix)
    queues = [names.task_queue("claims", plan) for plan in (1, 6)]
    for i in range(20):
        plan = 6 if i % 2 else 1
        message = aio_pika.Message(str(i).encode(), priority=10 if plan == 6 else 1)
        await publisher.send(names.exchange, queues[plan == 6], message)
    a: list[ClaimedRow] = []
    b: list[ClaimedRow] = []
    first, second = (consumer(pool, settings, queues, into, capacity=5) for into in (a, b))
    await asyncio.gather(first.start(), second.start())
    try:
        await eventually(lambda: _truthy(len(a) == 5 and len(b) == 5))
        taken = [r.body for r in a + b]
        assert len(set(taken)) == 10
        assert {r.priority for r in a + b} == {10}  # every plan-6 row before any plan-1 row
        for row in list(a):
            await row.ack()  # room again: the next five (plan 1 now) come at once
        await eventually(lambda: _truthy(len(a) == 10), timeout=2)
        assert {r.priority for r in a[5:]} == {1}
    finally:
        await asyncio.gather(first.stop(), second.stop())


async def test_a_row_that_waited_long_ages_past_a_fresh_higher_plan(world, pool):
    """The claim ages as the worker scheduler does: priority + aging × seconds waited. A
    freemium row (1) that waited a minute at 0.2/s ranks 13, above a fresh enterprise row."""
    settings = await on_table(world)
    publisher = publisher_of(settings, pool)
    names = Names(settings.topology_prefix)
    low, high = names.task_queue("claims", 1), names.task_queue("claims", 6)
    await publisher.send(names.exchange, low, aio_pika.Message(b"old", priority=1))
    await pool.execute(
        "UPDATE job_queue SET scheduled_for = scheduled_for - interval '60 seconds'"
        " WHERE queue = $1",
        low,
    )
    await publisher.send(names.exchange, high, aio_pika.Message(b"new", priority=10))
    taken: list[ClaimedRow] = []
    one = consumer(pool, settings, [low, high], taken, capacity=1, aging_per_s=0.2)
    await one.start()
    try:
        await eventually(lambda: _truthy(taken))
        assert taken[0].body == b"old"
    finally:
        await one.stop()
    taken.clear()
    plain = consumer(pool, settings, [low, high], taken, capacity=1, aging_per_s=0.0)
    await pool.execute("UPDATE job_queue SET status = 'pending' WHERE queue = $1", low)
    await plain.start()
    try:  # without aging the plan decides
        await eventually(lambda: _truthy(taken))
        assert taken[0].body == b"new"
    finally:
        await plain.stop()


async def test_a_row_published_wakes_an_idle_consumer_long_before_its_poll(world, pool):
    settings = await on_table(world)
    queue = Names(settings.topology_prefix).task_queue("domain", 2)
    taken: list[ClaimedRow] = []
    idle = consumer(pool, settings, [queue], taken, poll_s=60.0)
    await idle.start()
    try:
        await asyncio.sleep(0.3)  # claimed nothing, now waits for a NOTIFY or its poll
        await publisher_of(settings, pool).send("", queue, aio_pika.Message(b"wake"))
        await eventually(lambda: _truthy(taken), timeout=3)
    finally:
        await idle.stop()


@pytest.mark.parametrize("component", ANALYSIS_COMPONENTS[:1])
async def test_a_stopping_worker_hands_back_what_it_never_started(world, pool, component):
    """Rows claimed into the worker's buffer but not started go back to pending at its stop,
    and another worker completes them."""
    settings = await on_table(world)
    publisher = publisher_of(settings, pool)
    gate = asyncio.Event()

    async def slow(task, ctx):
        await gate.wait()
        return Analysis(1)

    async with running(*workers_for(settings, slow, components=[component])) as stop:
        sids = [await submit(pool, publisher) for _ in range(6)]
        await asyncio.sleep(0.5)
        gate.set()
        stop.set()
    async with running(*workers_for(settings, scored), Aggregator(settings, explain=explain).run):
        for sid in sids:
            assert (await final_view(pool, sid)).status == "completed"
    assert not await rows(pool, settings, "pending", "retry", "running")


async def test_what_a_handled_row_publishes_is_written_with_its_completion(world, pool):
    """Published while a row is handled: invisible until the row completes, then written in
    the same transaction; dropped when the row is handed back instead."""
    settings = await on_table(world)
    publisher = publisher_of(settings, pool)
    names = Names(settings.topology_prefix)
    queue = names.task_queue("claims", 3)
    for body in (b"done", b"handed back"):
        await publisher.send(names.exchange, queue, aio_pika.Message(body))
    taken: list[ClaimedRow] = []
    holder = consumer(pool, settings, [queue], taken)
    await holder.start()
    try:
        await eventually(lambda: _truthy(len(taken) == 2))
        done, back = sorted(taken, key=lambda r: r.body)
        for row in (done, back):
            with deferring_writes(row):
                await publisher.send(names.exchange, names.result_key("claims"), row_copy(row))
        assert await rows(pool, settings, "pending") == []  # nothing visible yet
        await holder.stop_claiming()  # the row handed back stays pending to be looked at
        await done.ack()
        await back.nack(requeue=True)
        results = [r for r in await rows(pool, settings) if r["queue"] == names.results]
        assert len(results) == 1
        states = {r["status"] for r in await rows(pool, settings) if r["queue"] == queue}
        assert states == {"completed", "pending"}
    finally:
        await holder.stop()


async def task_rows(pool, settings, sid):
    """The statuses of a session's task rows (its result rows apart), by component."""
    found = await pool.fetch(
        "SELECT message_id, status FROM job_queue WHERE queue LIKE $1 || '%'"
        " AND queue !~ '\\.results' AND correlation_id = $2",
        settings.topology_prefix,
        sid,
    )
    return {r["message_id"].split(":")[1]: r["status"] for r in found}


async def test_a_task_completes_in_the_commit_that_records_its_result_and_progress(world, pool):
    """A worker leaves its task `answered` with its result row written: nothing recorded,
    the session's progress at 0, the task not claimable again. The aggregator's commit then
    records each result (the progress), completes its result row and completes its task:
    afterwards every row is completed and every result recorded once."""
    settings = await on_table(world)
    publisher = publisher_of(settings, pool)
    names = Names(settings.topology_prefix)
    async with running(*workers_for(settings)):
        sid = await submit(pool, publisher)

        async def all_answered():
            statuses = await task_rows(pool, settings, sid)
            return statuses if set(statuses.values()) == {"answered"} else None

        assert set(await eventually(all_answered)) == set(ANALYSIS_COMPONENTS)
        await asyncio.sleep(0.3)  # a worker that would claim an answered task again
    assert set((await task_rows(pool, settings, sid)).values()) == {"answered"}
    waiting = await rows(pool, settings, "pending")
    assert [r["queue"] for r in waiting] == [names.results] * 4
    view = await sessions.load(pool, sid)
    assert view.progress()["progress"] == 0 and not view.results
    async with running(Aggregator(settings, explain=explain).run):
        view = await final_view(pool, sid)
    assert view.status == "completed" and view.progress()["progress"] == 100
    assert set((await task_rows(pool, settings, sid)).values()) == {"completed"}
    assert {r["status"] for r in await rows(pool, settings)} == {"completed"}


async def test_a_result_dead_lettered_completes_its_answered_task(world, pool):
    """Results of a session withdrawn meanwhile are dead letters; their tasks, answered,
    are completed by that settlement (nothing is left open)."""
    settings = await on_table(world)
    publisher = publisher_of(settings, pool)
    async with running(*workers_for(settings)):
        sid = await submit(pool, publisher)

        async def all_answered():
            return set((await task_rows(pool, settings, sid)).values()) == {"answered"}

        await eventually(all_answered)
    await pool.execute("DELETE FROM sessions WHERE id = $1", uuid.UUID(sid))
    async with running(Aggregator(settings, explain=explain).run):

        async def all_completed():
            return set((await task_rows(pool, settings, sid)).values()) == {"completed"}

        await eventually(all_completed)
    letters = await rows(pool, settings, "error")
    assert len(letters) == 4
    assert not await rows(pool, settings, "pending", "retry", "running", "answered")


async def test_answers_left_over_are_pruned_with_completed_rows_of_their_age(world, pool):
    """An answer whose result row nobody will settle (deleted by hand) goes when
    completed rows finished as long ago do; a recent answer stays."""
    settings = await on_table(world)
    queue = Names(settings.topology_prefix).task_queue("claims", 3)
    for age_s in (7200, 1):
        await pool.execute(
            "INSERT INTO job_queue (queue, routing_key, status, body, message_id, finished_at)"
            " VALUES ($1, $1, 'answered', 'x', $2, clock_timestamp() - make_interval(secs => $3))",
            queue,
            f"{uuid.uuid4()}:claims",
            float(age_s),
        )
    assert await job_queue.prune_completed(pool, 3600) == 1
    assert [r["status"] for r in await rows(pool, settings)] == ["answered"]


def row_copy(row: ClaimedRow) -> aio_pika.Message:
    return aio_pika.Message(b"result of " + row.body)


async def test_a_worker_whose_lease_is_lost_stops_and_writes_nothing(world, pool, redis):
    """Another consumer took the row (the lease lapsed while this worker was stalled): the
    next renewal finds it gone, the run is cancelled, and neither its result nor a retry is
    written; the rows of the other tasks complete with no Redis lock taken."""
    settings = await on_table(world, job_lease_s=1)
    publisher = publisher_of(settings, pool)
    started, cancelled = asyncio.Event(), asyncio.Event()

    async def stalls_on_claims(task, ctx):
        if task.component != "claims":
            return Analysis(5)
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return Analysis(5)

    queue = f"{settings.topology_prefix}.claims.3"
    async with running(*workers_for(settings, stalls_on_claims)):
        sid = await submit(pool, publisher)
        await asyncio.wait_for(started.wait(), 10)
        await pool.execute(
            "UPDATE job_queue SET claimed_by = 'thief' WHERE queue = $1 AND status = 'running'",
            queue,
        )
        await asyncio.wait_for(cancelled.wait(), 5)
        await asyncio.sleep(0.3)  # what the stopped run would write, had it been let
    claims = [r for r in await rows(pool, settings) if r["queue"] == queue]
    assert [r["status"] for r in claims] == ["running"]  # the thief's, untouched
    results = [r for r in await rows(pool, settings) if ".results" in r["queue"]]
    assert len(results) == 3  # the other three components', not claims'
    assert not [k async for k in redis.scan_iter(match=f"{settings.key_prefix}*lock*")]
    assert sid


async def test_verdict_dlq_lists_shows_replays_and_purges_the_error_rows(world, pool):
    """`verdict dlq` on the postgres transport: DLQ rows and a row rejected where it was are
    letters with the broker DLQ's fields and filters; a replay puts a first attempt back in
    its origin queue (a loop is refused), a purge deletes."""
    settings = await on_table(world, dlq_max_replays=2)
    names = Names(settings.topology_prefix)
    publisher = publisher_of(settings, pool)
    await publisher.dead_letter(
        b'{"n": 0}',
        {TENANT_HEADER: "acme"},
        "invalid task: broken",
        names.task_queue("claims", 1),
        1,
    )
    await publisher.dead_letter(
        b'{"n": 1}', {TENANT_HEADER: "zeta"}, "gave up", names.task_queue("domain", 4), 6
    )
    await publisher.dead_letter(
        b'{"n": 2}', {REPLAYS_HEADER: 2}, "gave up again", names.task_queue("claims", 2), 2
    )
    big = names.task_queue("techniques", 3)
    await publisher.send(names.exchange, big, aio_pika.Message(b"x" * 100))
    taken: list[ClaimedRow] = []
    rejecting = consumer(pool, settings, [big], taken)
    await rejecting.start()
    await eventually(lambda: _truthy(taken))
    await taken[0].reject(requeue=False)
    await rejecting.stop()

    async def dlq(*args: str) -> Any:
        done = await asyncio.to_thread(verdict, settings, "dlq", *args)
        assert done.returncode == 0, done.stderr
        return done

    listed = json.loads((await dlq("list", "--json")).stdout)
    assert [(x["origin"], x["reason"]) for x in listed] == [
        (names.task_queue("claims", 1), "invalid task: broken"),
        (names.task_queue("domain", 4), "gave up"),
        (names.task_queue("claims", 2), "gave up again"),
        (big, f"rejected in {big}"),
    ]
    assert [x["tenant"] for x in listed[:2]] == ["acme", "zeta"]
    only = json.loads((await dlq("list", "--json", "--component", "domain")).stdout)
    assert [x["priority"] for x in only] == [6]
    shown = json.loads((await dlq("show", listed[0]["id"])).stdout)
    assert shown["body"] == '{"n": 0}'

    replayed = await dlq("replay", "--component", "claims")
    assert "replayed 1 dead letter(s)" in replayed.stdout
    assert "refused 1 loop(s)" in replayed.stdout
    home = [r for r in await rows(pool, settings, "pending") if r["queue"] == listed[0]["origin"]]
    assert len(home) == 1
    assert home[0]["headers"][ATTEMPT_HEADER] == 1 and home[0]["headers"][REPLAYS_HEADER] == 1

    await dlq("purge", "--tenant", "zeta", "--yes")
    left = json.loads((await dlq("list", "--json")).stdout)
    assert [x["origin"] for x in left] == [names.task_queue("claims", 2), big]


async def test_a_postgres_restart_on_the_table_transport_loses_no_session(world):
    """The database that holds the queue restarts (immediate: a crash) while tasks and
    results flow: the consumers reconnect, their listeners come back, rows claimed before
    the crash return when their lease lapses, and every session completes once, with no
    error row."""
    with owned_postgres() as pg:
        await database.migrate(pg.url)
        settings = (await on_table(world, job_lease_s=2)).model_copy(
            update={"database_url": pg.url}
        )
        pool = await database.create_pool(pg.url, max_size=4)

        async def steady(task, ctx):
            await asyncio.sleep(0.05)
            return Analysis(20)

        try:
            async with running(
                *workers_for(settings, steady), Aggregator(settings, explain=explain).run
            ):
                publisher = publisher_of(settings, pool)
                sids = [await submit(pool, publisher, plan=1 + i % 6) for i in range(24)]
                await eventually(lambda: _finished(pool, at_least=1), timeout=30)
                await asyncio.to_thread(pg.stop, "immediate")
                await asyncio.sleep(0.5)
                await asyncio.to_thread(pg.start)
                await eventually(lambda: _finished(pool, at_least=24), timeout=90)
                views = [await final_view(pool, sid, timeout=5) for sid in sids]
                states = await rows(pool, settings)
        finally:
            await pool.close()
    assert [v.status for v in views] == ["completed"] * 24
    assert {r["status"] for r in states} == {"completed"}


async def _finished(pool, at_least: int) -> bool:
    try:
        done = await pool.fetchval("SELECT count(*) FROM sessions WHERE status <> 'processing'")
    except (*database.UNAVAILABLE, asyncpg.PostgresError):
        return False
    return done >= at_least


async def test_the_api_records_a_session_with_its_tasks_or_answers_503(world):
    """On the postgres transport a 202 means the session and its four task rows committed
    together; a replayed idempotency key writes nothing; with PostgreSQL down the answer is
    503 with Retry-After (nothing half-recorded), and once it is back a POST is accepted."""
    with owned_postgres() as pg:
        await database.migrate(pg.url)
        settings = (await on_table(world)).model_copy(update={"database_url": pg.url})
        pool = await database.create_pool(pg.url, max_size=2)
        key = {**ENTERPRISE, "Idempotency-Key": f"k-{uuid.uuid4()}"}
        try:
            async with client_for(settings) as api:
                first = await api.post(f"{API}/analyze-async", json={"text": "one"}, headers=key)
                again = await api.post(f"{API}/analyze-async", json={"text": "one"}, headers=key)
                await asyncio.to_thread(pg.stop, "fast")
                refused = await api.post(
                    f"{API}/analyze-async", json={"text": "two"}, headers=ENTERPRISE
                )
                await asyncio.to_thread(pg.start)

                async def accepted():
                    r = await api.post(
                        f"{API}/analyze-async", json={"text": "three"}, headers=ENTERPRISE
                    )
                    return r if r.status_code == 202 else None

                later = await eventually(accepted, timeout=20)
            tasks = await pool.fetch(
                "SELECT correlation_id, count(*) AS n FROM job_queue GROUP BY correlation_id"
            )
            recorded = await pool.fetchval("SELECT count(*) FROM sessions")
        finally:
            await pool.close()
    assert first.status_code == again.status_code == 202
    assert first.json()["session_id"] == again.json()["session_id"]
    assert refused.status_code == 503 and int(refused.headers["Retry-After"]) > 0
    assert "try again" in refused.json()["detail"]
    sids = {first.json()["session_id"], later.json()["session_id"]}
    assert {r["correlation_id"]: r["n"] for r in tasks} == dict.fromkeys(sids, 4)
    assert recorded == 2


async def test_completed_rows_are_deleted_after_their_keep_and_dead_letters_stay(world, pool):
    """The aggregators delete completed rows once JOB_KEEP_COMPLETED_S has passed; rows not
    completed (a dead letter here) are never touched."""
    settings = await on_table(world, job_keep_completed_s=0.5)
    publisher = publisher_of(settings, pool)
    async with running(*workers_for(settings), Aggregator(settings, explain=explain).run):
        await final_view(pool, await submit(pool, publisher))
        await publisher.dead_letter(b"d", {}, "poison", f"{settings.topology_prefix}.claims.1")
        # The aggregator's loop ran once at its start; a second aggregator's first pass now.
        await asyncio.sleep(0.6)
        async with running(Aggregator(settings, explain=explain).run):
            left = await eventually(lambda: _only_dead(pool, settings), timeout=10)
    assert [r["status"] for r in left] == ["error"]


async def test_a_full_dlq_parks_poison_in_a_retry_tier_until_there_is_room(world, pool):
    """The DLQ's caps hold on the table as on the broker: with DLQ_MAX_LENGTH dead letters
    already, a poison task is refused there, counted and parked as a retry row, comes back
    and tries again; once a letter is purged it lands. Nothing is dropped."""
    from prometheus_client import REGISTRY

    def refusals() -> float:
        labels = {"source": "techniques"}
        return REGISTRY.get_sample_value("verdict_dlq_full_total", labels) or 0.0

    settings = await on_table(world, dlq_max_length=1)
    names = Names(settings.topology_prefix)
    publisher = publisher_of(settings, pool)
    before = refusals()
    await publisher.dead_letter(b"{}", {}, "filler", names.task_queue("claims", 1))
    poison = json.dumps({"sessionId": "x"}).encode()
    await publisher.send(
        names.exchange, names.task_queue("techniques", 5), aio_pika.Message(poison)
    )

    async def letters():
        return await pool.fetch(
            "SELECT body, reason FROM job_queue WHERE status = 'error' AND queue = $1 ORDER BY id",
            names.dlq,
        )

    async def refused_twice():
        return refusals() - before >= 2

    async with running(*workers_for(settings, components=("techniques",))):
        await eventually(refused_twice)
        assert [r["reason"] for r in await letters()] == ["filler"]
        await pool.execute(
            "DELETE FROM job_queue WHERE queue = $1 AND reason = 'filler'", names.dlq
        )

        async def landed():
            found = await letters()
            return found if found else None

        [letter] = await eventually(landed)
    assert bytes(letter["body"]) == poison
    assert "invalid task" in letter["reason"]


async def _only_dead(pool, settings):
    found = await rows(pool, settings)
    return found if [r["status"] for r in found] == ["error"] else None


async def test_one_worker_process_serves_every_component_on_the_table(world, pool, monkeypatch):
    """`verdict worker --components a,b,…` on the postgres transport: one WorkerGroup claims
    the rows of all four components, woken through one LISTEN connection for them all."""
    settings = await on_table(world)
    publisher = publisher_of(settings, pool)
    listeners: list[Listener] = []

    class Counted(Listener):
        def __init__(self, url: str) -> None:
            super().__init__(url)
            listeners.append(self)

    monkeypatch.setattr(resources, "Listener", Counted)
    group = WorkerGroup(
        settings,
        worker_options(ANALYSIS_COMPONENTS, 2, 2),
        dict.fromkeys(ANALYSIS_COMPONENTS, scored),
    )
    async with running(group.run, Aggregator(settings, explain=explain).run):
        views = [await final_view(pool, await submit(pool, publisher, plan=p)) for p in (2, 5)]
        # The group's, which its four components follow, and the aggregator's.
        assert len(listeners) == 2 and all(each.connected.is_set() for each in listeners)
    assert [v.status for v in views] == ["completed", "completed"]


async def test_the_queue_watch_reads_depths_from_the_table(world, pool, monkeypatch):
    """On the postgres transport the API's depth gauge and console figures come from
    job_queue: rows waiting per queue, and every dead letter as the DLQ's depth."""
    from prometheus_client import REGISTRY

    from dispatcher import queue_watch
    from topology.spec import from_settings

    settings = await on_table(world)
    names = Names(settings.topology_prefix)
    publisher = publisher_of(settings, pool)
    for _ in range(3):
        await publisher.send(names.exchange, names.task_queue("claims", 2), aio_pika.Message(b"t"))
    await publisher.dead_letter(b"d", {}, "poison", names.task_queue("domain", 1))
    monkeypatch.setattr(queue_watch, "QUEUE_WATCH_S", 0.05)
    history = queue_watch.QueueHistory()
    reader = queue_watch.table_readings(pool, names, from_settings(settings))
    watching = asyncio.create_task(queue_watch.watch(reader, history))

    def depth(queue):
        return REGISTRY.get_sample_value("verdict_queue_depth", {"queue": queue})

    try:
        await eventually(lambda: _truthy(depth(names.task_queue("claims", 2)) == 3), timeout=5)
    finally:
        watching.cancel()
    assert depth(names.dlq) == 1 and depth(names.task_queue("claims", 1)) == 0
    assert history.latest[names.task_queue("claims", 2)].ready == 3


async def test_rows_past_the_message_ttl_are_dead_letters_not_runs(world, pool):
    """QUEUE_MESSAGE_TTL_MS holds on the table as on the broker's task queues: tasks that
    waited longer are dead-lettered (reason expired) by the next claim instead of run, and
    the janitor ends their session."""
    settings = await on_table(world, queue_message_ttl_ms=1000)
    publisher = publisher_of(settings, pool)
    new = NewSession(sessions.new_session_id(), "tenant-a", 2, "text", {"content": "x"}, 2)
    await sessions.create(pool, new)
    for task in first_tasks(new, None):
        await publisher.task(task)
    sid = new.id
    await asyncio.sleep(1.2)
    ran: list[str] = []

    async def record(task, ctx):
        ran.append(task.component)
        return Analysis(5)

    async with running(*workers_for(settings, record), Aggregator(settings, explain=explain).run):
        view = await final_view(pool, sid, timeout=15)
        fresh = await submit(pool, publisher, plan=2)  # within its TTL: runs
        assert (await final_view(pool, fresh)).status == "completed"
    dead = await rows(pool, settings, "error")
    assert len(dead) == 4 and {r["reason"] for r in dead} == {"expired"}
    assert len(ran) == 4  # the fresh session's four tasks only
    assert view.status == "failed"
    assert {r["status"] for r in view.results.values()} == {"timeout"}


async def one_waiting_row(world, pool, body: bytes):
    """A world on the table with one row `body` waiting in a claims queue: its settings,
    publisher, names and that queue."""
    settings = await on_table(world)
    publisher = publisher_of(settings, pool)
    names = Names(settings.topology_prefix)
    queue = names.task_queue("claims", 3)
    await publisher.send(names.exchange, queue, aio_pika.Message(body))
    return settings, publisher, names, queue


async def test_a_consumer_that_claims_its_own_lapsed_row_again_stops_the_first_claim(world, pool):
    """PostgreSQL away longer than a lease: the same consumer may claim the row again. Only
    the newer claim counts: the first is marked lost (its run stops) and its completion
    writes nothing; the newer one completes the row with its writes."""
    settings, publisher, names, queue = await one_waiting_row(world, pool, b"one")
    taken: list[ClaimedRow] = []
    same = consumer(pool, settings, [queue], taken, lease_s=1.0, poll_s=0.2)
    same._renew_loop = _never  # type: ignore[method-assign]  # as if every renewal failed
    await same.start()
    try:
        await eventually(lambda: _truthy(len(taken) == 2), timeout=5)
        first, again = taken
        assert first.lost.is_set() and not again.lost.is_set()
        assert (first.deliveries, again.deliveries) == (1, 2)
        for row in (first, again):
            with deferring_writes(row):
                await publisher.send(names.exchange, names.result_key("claims"), row_copy(row))
        await first.ack()
        assert [r["status"] for r in await rows(pool, settings)] == ["running"]
        await again.ack()
        states = [(r["queue"], r["status"]) for r in await rows(pool, settings)]
        assert states == [(queue, "completed"), (names.results, "pending")]
    finally:
        await same.stop()


async def test_a_full_group_of_lower_plans_does_not_hold_back_an_urgent_row(world, pool):
    """Claim groups have capacities of their own, as a broker consumer's prefetch per queue:
    with the lower plans' group full, an urgent row is still claimed at once."""
    settings = await on_table(world)
    publisher = publisher_of(settings, pool)
    names = Names(settings.topology_prefix)
    low, high = names.task_queue("claims", 1), names.task_queue("claims", 6)
    for i in range(3):
        await publisher.send(names.exchange, low, aio_pika.Message(b"low%d" % i, priority=1))
    taken: list[ClaimedRow] = []

    async def take(row: ClaimedRow) -> None:
        taken.append(row)

    groups = TableConsumer(
        pool,
        listener_for(settings),
        [([low], 2), ([high], 1)],
        take,
        consumer_id="groups",
        lease_s=30,
        poll_s=30,
        aging_per_s=0,
    )
    await groups.start()
    try:
        await eventually(lambda: _truthy(len(taken) == 2))
        await publisher.send(names.exchange, high, aio_pika.Message(b"urgent", priority=10))
        await eventually(lambda: _truthy(len(taken) == 3), timeout=3)
        assert taken[2].body == b"urgent"
    finally:
        await groups.stop()


async def test_a_row_that_kills_its_holders_is_dead_lettered_at_the_delivery_limit(world, pool):
    """QUEUE_DELIVERY_LIMIT on the table: a row whose lease lapsed in the hands of that many
    holders (each died with it) is a dead letter, reason delivery_limit, not claimed again."""
    settings = await on_table(world)
    publisher = publisher_of(settings, pool)
    queue = Names(settings.topology_prefix).task_queue("claims", 2)
    await publisher.send("", queue, aio_pika.Message(b"deadly"))
    for holder in range(2):  # two holders die with it
        held: list[ClaimedRow] = []
        dies = consumer(pool, settings, [queue], held, lease_s=1.0, poll_s=0.2, delivery_limit=2)
        dies._renew_loop = _never  # type: ignore[method-assign]
        await dies.start()
        await eventually(partial(_truthy, held), timeout=5)
        await dies.stop()
        assert held[0].deliveries == holder + 1
    taken: list[ClaimedRow] = []
    third = consumer(pool, settings, [queue], taken, poll_s=0.2, delivery_limit=2)
    await third.start()
    try:
        dead = await eventually(lambda: rows(pool, settings, "error"), timeout=5)
    finally:
        await third.stop()
    assert taken == [] and [r["reason"] for r in dead] == ["delivery_limit"]


async def test_an_aggregator_completes_its_batch_in_one_statement_each_row_still_fenced(
    world, pool
):
    """`ack_all` of three claimed rows (one UPDATE), one of which another consumer took
    meanwhile: the two still held are completed, the taken one stays its new holder's."""
    settings = await on_table(world)
    publisher = publisher_of(settings, pool)
    names = Names(settings.topology_prefix)
    for body in (b"a", b"b", b"c"):
        await publisher.send(names.exchange, names.result_key("claims"), aio_pika.Message(body))
    taken: list[ClaimedRow] = []
    results = consumer(pool, settings, [names.results], taken, poll_s=0.2)
    await results.start()
    try:
        await eventually(lambda: _truthy(len(taken) == 3), timeout=5)
        await pool.execute(
            "UPDATE job_queue SET claimed_by = 'someone-else' WHERE id = $1", taken[1].id
        )
        await ack_all(taken)
        states = [r["status"] for r in await rows(pool, settings)]
    finally:
        await results.stop()
    assert states == ["completed", "running", "completed"]
    assert all(row.settled for row in taken)


async def test_an_aggregator_cut_off_while_completing_result_rows_recorded_none_of_them(
    world, pool, monkeypatch
):
    """An aggregator records a batch's results and completes the rows that carried them in
    one transaction: its connection cut at the first completion (a trigger ends its own
    backend, once) leaves no result of the batch recorded and none of their tasks
    completed; applied again once the connection
    is back, every session ends once, with one result per component, and every row
    completed."""
    from aggregator import applier

    monkeypatch.setattr(applier, "DB_RETRY_S", 3.0)  # time to look before the batch returns
    settings = await on_table(world)
    names = Names(settings.topology_prefix)
    tag = uuid.uuid4().hex[:12]
    cut, once = f"cut_completion_{tag}", f"cut_once_{tag}"
    await pool.execute(f"CREATE SEQUENCE {once}")
    await pool.execute(
        f"""CREATE FUNCTION {cut}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF NEW.queue IN ('{names.results}', '{names.urgent_results}')
                    AND nextval('{once}') = 1 THEN
                PERFORM pg_terminate_backend(pg_backend_pid());
                PERFORM pg_sleep(10);  -- ended at its first interrupt check
            END IF;
            RETURN NEW;
        END $$"""
    )
    await pool.execute(
        f"CREATE TRIGGER {cut} BEFORE UPDATE ON job_queue FOR EACH ROW"
        f" WHEN (OLD.status = 'running' AND NEW.status = 'completed') EXECUTE FUNCTION {cut}()"
    )
    publisher = publisher_of(settings, pool)
    try:
        async with running(*workers_for(settings), Aggregator(settings, explain=explain).run):
            sids = [await submit(pool, publisher, plan=2) for _ in range(3)]
            ids = [uuid.UUID(sid) for sid in sids]

            async def cut_made() -> bool:
                return await pool.fetchval(f"SELECT is_called FROM {once}")

            await eventually(cut_made, timeout=20)
            recorded = await pool.fetchval(
                "SELECT count(*) FROM component_results WHERE session_id = ANY($1::uuid[])", ids
            )
            tasks_then = [await task_rows(pool, settings, sid) for sid in sids]
            views = [await final_view(pool, sid) for sid in sids]
    finally:
        await pool.execute(f"DROP TRIGGER IF EXISTS {cut} ON job_queue")
        await pool.execute(f"DROP FUNCTION IF EXISTS {cut}()")
        await pool.execute(f"DROP SEQUENCE IF EXISTS {once}")
    assert recorded == 0  # the batch cut at its completion recorded nothing
    # ... and completed none of their tasks: a task completes with its result's recording.
    assert "completed" not in {status for tasks in tasks_then for status in tasks.values()}
    assert [v.status for v in views] == ["completed"] * 3
    per_component = await pool.fetch(
        "SELECT count(*) AS n FROM component_results WHERE session_id = ANY($1::uuid[])"
        " GROUP BY session_id, component",
        ids,
    )
    assert [r["n"] for r in per_component] == [1] * 12
    assert {r["status"] for r in await rows(pool, settings)} == {"completed"}


async def test_rows_of_a_claim_whose_answer_was_lost_return_at_the_next_claim_not_the_lease(
    world, pool
):
    """A claim that committed while its connection was cut (the answer never came back)
    leaves rows running under this consumer's id that it does not hold: its next claim round
    releases them, so they run within the poll, not once their 30 s lease lapses."""
    settings, _, _, queue = await one_waiting_row(world, pool, b"orphan")
    taken: list[ClaimedRow] = []
    claims = consumer(pool, settings, [queue], taken, lease_s=30.0, poll_s=0.2)
    await pool.execute(  # as the lost claim left it
        "UPDATE job_queue SET status = 'running', deliveries = 1, claimed_by = $1,"
        " lease_until = now() + interval '30 seconds' WHERE queue = $2",
        claims.consumer_id,
        queue,
    )
    claims._claim_unanswered = True  # what the failed claim statement set
    await claims.start()
    try:
        await eventually(lambda: _truthy(taken), timeout=5)
    finally:
        await claims.stop()
    assert [(row.body, row.deliveries) for row in taken] == [(b"orphan", 2)]
