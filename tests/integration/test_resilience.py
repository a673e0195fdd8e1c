"""Nothing lost, every session ends: TTL expiry, lock watchdog, lost locks, shutdown, outages."""

import asyncio
from urllib.parse import urlsplit, urlunsplit

import pytest

from aggregator.service import Aggregator
from dispatcher.submit import first_tasks
from shared import live, sessions
from shared.constants import ANALYSIS_COMPONENTS
from shared.heartbeat import Heartbeat
from shared.locks import lock_key
from shared.sessions import NewSession
from tests.integration.conftest import (
    eventually,
    on_both_transports,
    only_on_rabbitmq,
    only_with_redis,
    publisher_for,
    queue_depths,
    running,
)
from tests.integration.test_worker_flow import dlq_messages, explain, final_view, submit
from tests.proxy import Proxy
from workers.executor import Analysis
from workers.runtime import Worker, WorkerOptions

pytestmark = [pytest.mark.integration, on_both_transports]


# The table transport's lock is the claimed row's lease, renewed by its consumer:
# test_table_transport tests a lapsed lease, a lost one, and a row claimed twice.
LEASE_NOT_LOCK = "a Redis lock's TTL; on the table transport the lease is the lock"


async def quick(task, ctx):
    return Analysis(20)


async def test_expired_tasks_reach_the_dlq_and_the_session_still_ends(world, pool, publisher):
    """Tasks nobody consumed within their TTL are dead-lettered; the janitor ends the session."""
    settings = await world(queue_message_ttl_ms=1000, session_deadline_s=2)
    only_on_rabbitmq(
        settings,
        "on the table transport a row past its TTL is dead-lettered by the next claim of its "
        "queue, not by a broker: test_table_transport covers it",
    )

    async with publisher_for(settings) as own:
        new = NewSession(sessions.new_session_id(), "tenant-a", 2, "text", {"content": "x"}, 2)
        await sessions.create(pool, new)
        for task in first_tasks(new, None):
            await own.task(task)
    dead: list = []

    async def four_expired():
        dead.extend(await dlq_messages(settings))
        return len(dead) >= 4

    await eventually(four_expired, timeout=15)
    assert {m.headers["x-death"][0]["reason"] for m in dead} == {"expired"}
    async with running(Aggregator(settings, explain=explain).run):
        view = await final_view(pool, new.id, timeout=10)
    assert view.status == "failed"
    assert {r["status"] for r in view.results.values()} == {"timeout"}


async def test_a_task_longer_than_its_lock_ttl_keeps_the_lock_and_runs_once(world, pool):
    """Lock TTL 300 ms, task 1.5 s, a second copy waiting: the watchdog renews, one execution."""
    settings = await world(lock_ttl_ms=300, lock_retry_ms=100)
    only_on_rabbitmq(settings, LEASE_NOT_LOCK)
    runs: list[str] = []

    async def slow(task, ctx):
        runs.append(task.component)
        await asyncio.sleep(1.5 if task.component == "claims" else 0)
        return Analysis(1)

    workers = [Worker(settings, WorkerOptions(c, 2, 2), slow).run for c in ANALYSIS_COMPONENTS]
    async with publisher_for(settings) as publisher:
        async with running(*workers, Aggregator(settings, explain=explain).run):
            new = NewSession(sessions.new_session_id(), "tenant-a", 3, "text", {"content": "x"}, 60)
            await sessions.create(pool, new)
            claims = next(t for t in first_tasks(new, None) if t.component == "claims")
            for task in first_tasks(new, None):
                await publisher.task(task)
            await publisher.task(claims)  # a duplicate delivery of the long task
            view = await final_view(pool, new.id)
            await asyncio.sleep(0.5)
    assert view.status == "completed"
    assert runs.count("claims") == 1


async def test_a_worker_that_lost_its_lock_does_not_report_a_result(world, pool, redis):
    """Lock taken over mid-run: the run is dropped, no result over the new owner's; retried."""
    settings = await world(lock_ttl_ms=300, lock_retry_ms=200)
    only_on_rabbitmq(settings, LEASE_NOT_LOCK)
    started = asyncio.Event()
    runs: list[int] = []

    async def slow(task, ctx):
        runs.append(1)
        started.set()
        await asyncio.sleep(1.0)
        return Analysis(77)

    async with publisher_for(settings) as publisher:
        async with running(Worker(settings, WorkerOptions("domain", 1, 1), slow).run):
            new = NewSession(sessions.new_session_id(), "tenant-a", 3, "text", {"content": "x"}, 60)
            await sessions.create(pool, new)
            await publisher.task(next(t for t in first_tasks(new, None) if t.component == "domain"))
            await asyncio.wait_for(started.wait(), 10)
            key = lock_key(settings.key_prefix, new.id, "domain")
            await redis.set(key, "another-worker", px=1500)  # expired and taken over elsewhere
            # The second run starts only after the first was abandoned and the thief's lock
            # lapsed: by then the first run must have reported nothing.
            await eventually(lambda: _true(len(runs) >= 2), timeout=10)
            results_while_stolen = await queue_depths(settings)
            results = f"{settings.topology_prefix}.results"

            async def second_run_reported():
                return (await queue_depths(settings))[results] >= 1

            await eventually(second_run_reported, timeout=10)
            results_after = await queue_depths(settings)
    assert results_while_stolen[results] == 0
    assert results_after[results] == 1


async def _true(value):
    return value


async def stop_mid_task(settings, pool, queued: int, concurrency: int) -> None:
    """Queue `queued` claims tasks, start a worker on them, stop it as soon as the first
    0.5 s task has started; fail unless the worker has exited within 10 s."""
    started = asyncio.Event()

    async def slow(task, ctx):
        started.set()
        await asyncio.sleep(0.5)
        return Analysis(5)

    async with publisher_for(settings) as publisher:
        for _ in range(queued):
            new = NewSession(sessions.new_session_id(), "tenant-a", 4, "text", {"content": "x"}, 60)
            await sessions.create(pool, new)
            await publisher.task(next(t for t in first_tasks(new, None) if t.component == "claims"))
    stop = asyncio.Event()
    options = WorkerOptions("claims", concurrency, 5)
    worker = asyncio.create_task(Worker(settings, options, slow).run(stop))
    await asyncio.wait_for(started.wait(), 10)
    stop.set()
    await asyncio.wait_for(worker, 10)


async def test_a_stop_lets_running_tasks_finish_and_requeues_the_rest(world, pool):
    """Stop mid-backlog (the event SIGTERM sets; the signal itself is sent to a real worker
    process in tests/e2e/test_crashes.py): the running task reports, buffered deliveries
    return to their queue."""
    settings = await world(shutdown_grace_s=5)
    await stop_mid_task(settings, pool, queued=6, concurrency=1)
    depths = await queue_depths(settings)
    assert depths[f"{settings.topology_prefix}.results"] == 1  # the running task finished
    assert depths[f"{settings.topology_prefix}.claims.4"] == 5  # the rest went back, none lost


async def test_a_stop_is_honoured_before_the_workers_helpers_wind_down(world, pool, monkeypatch):
    """The heartbeat's last write takes 2 s (a loaded machine, a slow store): the stop still
    closes the intake at once, so no buffered task starts while the helpers wind down."""
    write = Heartbeat._write

    async def slow_last_write(self, said, in_flight, stopped_at):
        if stopped_at is not None:
            await asyncio.sleep(2)
        await write(self, said, in_flight, stopped_at)

    monkeypatch.setattr(Heartbeat, "_write", slow_last_write)
    settings = await world(shutdown_grace_s=5)
    await stop_mid_task(settings, pool, queued=6, concurrency=1)
    depths = await queue_depths(settings)
    assert depths[f"{settings.topology_prefix}.results"] == 1
    assert depths[f"{settings.topology_prefix}.claims.4"] == 5


async def test_a_stopped_worker_exits_when_its_last_task_is_done_not_after_the_grace(world, pool):
    """Nothing buffered, one task running at the stop: the worker exits once the task reports,
    long before the 30 s grace period would have run out."""
    settings = await world(shutdown_grace_s=30)
    await stop_mid_task(settings, pool, queued=1, concurrency=2)
    assert (await queue_depths(settings))[f"{settings.topology_prefix}.results"] == 1


async def postgres_through_a_proxy(settings, database_url):
    """A cuttable proxy in front of Postgres, and `settings` whose database URL goes through it."""
    parts = urlsplit(database_url)
    proxy = await Proxy(parts.hostname or "127.0.0.1", parts.port or 5432).start()
    netloc = f"{parts.username}@127.0.0.1:{proxy.port}"
    url = urlunsplit(parts._replace(netloc=netloc))
    return proxy, settings.model_copy(update={"database_url": url})


async def test_a_postgres_outage_holds_results_until_it_returns(
    world, pool, publisher, database_url
):
    """The aggregator loses Postgres for 2 s: results wait unacked, then every session completes."""
    settings = await world()
    proxy, via_proxy = await postgres_through_a_proxy(settings, database_url)
    services = [Worker(settings, WorkerOptions(c, 2, 2), quick).run for c in ANALYSIS_COMPONENTS]
    services.append(Aggregator(via_proxy, explain=explain).run)
    views = await sessions_across_an_outage(pool, settings, proxy, services, plans=(1, 3, 6))
    assert [v.status for v in views] == ["completed"] * 3


async def test_a_connection_cut_mid_statement_holds_the_results_until_postgres_returns(
    world, pool, database_url
):
    """The aggregator's connection is cut while its statement waits inside Postgres (held on a
    table lock): the results stay unacked, nothing is dead-lettered, and every session
    completes once the connection can be made again (on the table transport, a claim whose
    answer the cut lost included: its rows are released at the next claim round)."""
    settings = await world()
    proxy, via_proxy = await postgres_through_a_proxy(settings, database_url)
    services = [Worker(settings, WorkerOptions(c, 2, 2), quick).run for c in ANALYSIS_COMPONENTS]
    services.append(Aggregator(via_proxy, prefetch=1, explain=explain).run)
    blocker = await pool.acquire()
    try:
        async with publisher_for(settings) as own, running(*services):
            tx = blocker.transaction()
            await tx.start()
            await blocker.execute("LOCK TABLE component_results IN EXCLUSIVE MODE")
            sids = [await submit(pool, own, plan=p) for p in (1, 4, 6)]

            async def statement_waiting() -> bool:
                return bool(
                    await pool.fetchval(
                        "SELECT count(*) FROM pg_stat_activity"
                        " WHERE wait_event_type = 'Lock' AND query ILIKE '%record_results%'"
                    )
                )

            await eventually(statement_waiting, timeout=20)
            await proxy.cut()  # mid-statement
            await tx.rollback()
            await asyncio.sleep(1.0)
            await proxy.restore()
            views = [await final_view(pool, s, timeout=30) for s in sids]
    finally:
        await pool.release(blocker)
        await proxy.cut()
    assert [v.status for v in views] == ["completed"] * 3
    assert await dlq_messages(settings) == []


async def test_status_falls_back_to_postgres_when_redis_loses_the_live_state(settings, redis):
    """A session submitted through the API, its Redis keys flushed mid-session (live state,
    locks, urgent holds): it still finishes, and queue-status and result over HTTP answer from
    Postgres."""
    only_with_redis(settings, "without Redis there is no live state to lose")
    from tests.integration.test_api import API, client_for
    from tests.integration.test_api import ENTERPRISE as ENTERPRISE_KEY

    gate = asyncio.Event()

    async def held(task, ctx):
        await gate.wait()
        return Analysis(20)

    workers = [Worker(settings, WorkerOptions(c, 2, 2), held).run for c in ANALYSIS_COMPONENTS]
    async with (
        client_for(settings) as api,
        running(*workers, Aggregator(settings, explain=explain).run),
    ):
        response = await api.post(
            f"{API}/analyze-async", json={"content": "x" * 40}, headers=ENTERPRISE_KEY
        )
        assert response.status_code == 202, response.text
        sid = response.json()["session_id"]
        state = live.state_key(settings.key_prefix, sid)
        await eventually(lambda: redis.exists(state), timeout=10)  # the API wrote it
        flushed = [key async for key in redis.scan_iter(match=f"{settings.key_prefix}:*")]
        await redis.delete(*flushed)
        assert state.encode() in flushed
        polled = await api.get(f"{API}/{sid}/queue-status", headers=ENTERPRISE_KEY)
        assert polled.status_code == 200 and polled.json()["status"] == "processing"
        gate.set()

        async def finished():
            result = await api.get(f"{API}/{sid}/result", headers=ENTERPRISE_KEY)
            return result if result.status_code == 200 else None

        result = await eventually(finished, timeout=30)
        assert result.json()["status"] == "completed"
        await redis.delete(state)  # the aggregator's write: answer from Postgres again
        status = await api.get(f"{API}/{sid}/queue-status", headers=ENTERPRISE_KEY)
    assert status.status_code == 200
    assert status.json()["status"] == "completed" and status.json()["progress"] == 100


async def test_a_redis_outage_delays_sessions_but_loses_none(world, pool, publisher, services):
    """Redis unreachable for 2 s: locks cannot be taken, tasks wait in the short tier, and every
    session completes once Redis is back."""
    parts = urlsplit(services.redis_url)
    proxy = await Proxy(parts.hostname or "127.0.0.1", parts.port or 6379).start()
    settings = await world(lock_retry_ms=200)
    only_on_rabbitmq(
        settings,
        "on the table transport no task waits for Redis (the lease is the lock): sessions "
        "complete through a Redis outage, and test_without_redis runs with none at all",
    )
    via_proxy = settings.model_copy(
        update={"redis_url": urlunsplit(parts._replace(netloc=f"127.0.0.1:{proxy.port}"))}
    )
    services = [Worker(via_proxy, WorkerOptions(c, 2, 2), quick).run for c in ANALYSIS_COMPONENTS]
    services.append(Aggregator(via_proxy, explain=explain).run)
    views = await sessions_across_an_outage(pool, settings, proxy, services, plans=(2, 4, 6))
    assert [v.status for v in views] == ["completed"] * 3


async def sessions_across_an_outage(pool, settings, proxy, services, plans):
    """Run `services`, cut `proxy`, submit a session per plan, check none ends during the 2 s
    outage, restore, and return the sessions once final."""
    try:
        async with publisher_for(settings) as own, running(*services):
            await proxy.cut()
            sids = [await submit(pool, own, plan=p) for p in plans]
            await asyncio.sleep(2.0)
            held = [await sessions.load(pool, s) for s in sids]
            assert not any(v.final for v in held)
            await proxy.restore()
            return [await final_view(pool, s, timeout=30) for s in sids]
    finally:
        await proxy.cut()
