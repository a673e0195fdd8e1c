"""Plan tiers on the real broker: enterprise work overtakes a freemium backlog (issue 4).

One component (techniques), one worker slot, a freemium backlog queued before the worker
starts, enterprise tasks published while it is being worked. Only the techniques task of
each session is published and no aggregator runs, so every task is still needed when its
turn comes and the executor's call order is exactly the worker's scheduling order.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import pytest

from aggregator.service import Aggregator
from shared import sessions
from shared.broker import Publisher
from shared.constants import ANALYSIS_COMPONENTS as ALL
from shared.house import House, open_house
from shared.messages import Task, TaskInput, now_ms, priority_of
from shared.names import Names
from shared.resources import Resources
from shared.sessions import NewSession
from shared.settings import Settings
from shared.urgency import UrgentSignals, gate_for, precedence_followed
from tests.integration.conftest import (
    POSTGRES_ALONE,
    eventually,
    publisher_for,
    queue_depths,
    running,
)
from tests.integration.test_api import API, client_for
from tests.integration.test_api import ENTERPRISE as ENTERPRISE_KEY
from workers.executor import Analysis
from workers.runtime import Worker, WorkerOptions

pytestmark = pytest.mark.integration

COMPONENT = "techniques"
FREEMIUM, ENTERPRISE = 1, 6
BACKLOG = 150  # freemium tasks queued first: ~4 s at one slot, twice what the test gets through
ENTERPRISE_TASKS = 6
ENTERPRISE_EVERY_S = 0.15
PREFETCH = 5  # per plan queue: up to 4 freemium deliveries wait in the worker's buffer
WORK_S = 0.02  # long enough that no second freemium task can start while one publish lands


@dataclass
class Recorder:
    """A no-op executor that notes the order in which the worker runs tasks."""

    ran: list[Task] = field(default_factory=list)

    async def __call__(self, task: Task, ctx: object) -> Analysis:
        self.ran.append(task)
        await asyncio.sleep(WORK_S)
        return Analysis(50.0)

    def position(self, session_id: str) -> int | None:
        return next((i for i, t in enumerate(self.ran) if t.session_id == session_id), None)


async def new_task(pool, plan: int, priority: int | None = None) -> Task:
    """A session in Postgres and the one task of it this test publishes."""
    sid = sessions.new_session_id()
    await sessions.create(pool, NewSession(sid, "tenant-a", plan, "text", {"content": "x"}, 120))
    return Task(
        session_id=sid,
        component=COMPONENT,
        plan_type=plan,
        priority=priority_of(plan) if priority is None else priority,
        input=TaskInput(content="x"),
        timestamp=now_ms(),
    )


@dataclass(frozen=True)
class Overtaking:
    """Where each enterprise task ran relative to the moment it was published."""

    freemium_started_while_waiting: list[int]  # per enterprise task
    freemium_left_after_last_enterprise: int


async def enterprise_under_backlog(settings: Settings, pool, publisher: Publisher) -> Overtaking:
    """Queue the freemium backlog, start the worker, trickle enterprise tasks in meanwhile."""
    for _ in range(BACKLOG):
        await publisher.task(await new_task(pool, FREEMIUM))
    enterprise = [await new_task(pool, ENTERPRISE) for _ in range(ENTERPRISE_TASKS)]
    recorder = Recorder()
    worker = Worker(settings, WorkerOptions(COMPONENT, concurrency=1, prefetch=PREFETCH), recorder)
    published_at: list[int] = []
    async with running(worker.run):
        await eventually(lambda: _true(len(recorder.ran) >= 10), timeout=10, every=0.01)
        for task in enterprise:
            published_at.append(len(recorder.ran))  # before publishing: it may start at once
            await publisher.task(task)
            await asyncio.sleep(ENTERPRISE_EVERY_S)
        await eventually(
            lambda: _true(all(recorder.position(t.session_id) is not None for t in enterprise)),
            timeout=10,
        )
    positions = [recorder.position(t.session_id) for t in enterprise]
    assert None not in positions
    waits = [
        sum(t.plan_type == FREEMIUM for t in recorder.ran[start:pos])
        for start, pos in zip(published_at, positions, strict=True)
    ]
    freemium_done = sum(t.plan_type == FREEMIUM for t in recorder.ran[: max(positions) + 1])
    return Overtaking(waits, BACKLOG - freemium_done)


async def _true(value: bool) -> bool:
    return value


# Each plan-order test on RabbitMQ's two queue types and on the job_queue table.
QUEUES = [("rabbitmq", "classic"), ("rabbitmq", "quorum"), ("postgres", "classic")]


@pytest.mark.parametrize(("transport", "queue_type"), QUEUES)
async def test_enterprise_tasks_overtake_a_queued_freemium_backlog(world, pool, queue_type):
    """Scheduler on: each enterprise task runs next, before the freemium work buffered before it.

    At most the freemium task already running, plus one whose start raced the enterprise
    delivery, may go first; all enterprise tasks finish while most of the backlog still waits.
    Quorum queues carry no message priority (RabbitMQ < 4.0): precedence across plans holds all
    the same, since it comes from the worker's scheduler over the plan queues; on the table
    the urgent plans are claimed in a group of their own, highest first.
    """
    settings = await world(scheduler_enabled=True, queue_type=queue_type)
    async with publisher_for(settings) as publisher:
        result = await enterprise_under_backlog(settings, pool, publisher)
    assert max(result.freemium_started_while_waiting) <= 1, result
    assert result.freemium_left_after_last_enterprise >= BACKLOG // 3, result


@pytest.mark.parametrize(("transport", "queue_type"), QUEUES)
async def test_without_the_scheduler_enterprise_waits_behind_buffered_freemium(
    world, pool, queue_type
):
    """Scheduler off (arrival order): every enterprise task waits behind the buffered freemium.

    With prefetch 5 per plan queue, four freemium deliveries sit in the worker's buffer when
    an enterprise task arrives; plain consumption runs them first, every time.
    """
    settings = await world(scheduler_enabled=False, queue_type=queue_type)
    async with publisher_for(settings) as publisher:
        result = await enterprise_under_backlog(settings, pool, publisher)
    assert min(result.freemium_started_while_waiting) >= PREFETCH - 2, result


@dataclass
class Blocking:
    """Freemium tasks run until released; every other task returns at once."""

    release: asyncio.Event = field(default_factory=asyncio.Event)
    ran: list[Task] = field(default_factory=list)

    async def __call__(self, task: Task, ctx: object) -> Analysis:
        self.ran.append(task)
        if task.plan_type == FREEMIUM:
            await self.release.wait()
        return Analysis(50.0)


async def enterprise_started_beside_busy_slots(settings: Settings, pool) -> bool:
    """One worker slot, busy with a freemium task: does an enterprise task start meanwhile?"""
    executor = Blocking()
    worker = Worker(settings, WorkerOptions(COMPONENT, concurrency=1, prefetch=PREFETCH), executor)
    freemium, enterprise = await new_task(pool, FREEMIUM), await new_task(pool, ENTERPRISE)
    async with publisher_for(settings) as publisher, running(worker.run):
        await publisher.task(freemium)
        await eventually(lambda: _true(len(executor.ran) == 1), timeout=10, every=0.01)
        await publisher.task(enterprise)
        await asyncio.sleep(0.5)
        started = len(executor.ran) == 2
        executor.release.set()
        await eventually(lambda: _true(len(executor.ran) == 2), timeout=10, every=0.01)
    return started


@pytest.mark.parametrize("transport", ["rabbitmq", "postgres"])
async def test_an_urgent_task_starts_while_lower_tiers_fill_every_slot(world, pool):
    """The slot kept for urgent work takes the enterprise task while the freemium one runs."""
    assert await enterprise_started_beside_busy_slots(await world(urgent_slots=1), pool)


@pytest.mark.parametrize("transport", ["rabbitmq", "postgres"])
async def test_without_a_kept_slot_an_urgent_task_waits_for_a_free_one(world, pool):
    """URGENT_SLOTS=0: the enterprise task starts only once the freemium one is done."""
    assert not await enterprise_started_beside_busy_slots(await world(urgent_slots=0), pool)


@pytest.mark.parametrize("transport", ["rabbitmq", "postgres"])
async def test_message_priority_still_orders_tasks_inside_one_plan_queue(world, pool):
    """x-max-priority: a task re-published at priority 10 runs before older ones on its queue
    (on the table: rows are claimed by priority, then age).

    Prefetch 1 and one slot: the worker holds one delivery per queue at a time, so the order
    is the queue's, not the worker's buffer.
    """
    settings = await world()
    assert await order_inside_one_queue(settings, pool) == [10, 6, 4, 4, 4, 2]


async def test_a_quorum_plan_queue_keeps_arrival_order(world, pool):
    """QUEUE_TYPE=quorum: no priority inside one plan queue (RabbitMQ < 4.0 has none for
    quorum queues), so a priority-10 task published last runs last on its queue: what quorum
    mode gives up is ordering by message priority inside one plan queue, not across plans."""
    settings = await world(queue_type="quorum")
    assert await order_inside_one_queue(settings, pool) == [4, 2, 4, 6, 4, 10]


async def order_inside_one_queue(settings: Settings, pool) -> list[int]:
    """Priorities of tasks in the order one worker ran them: five on one plan queue, then an
    urgent one; FIFO within a level is checked on the way."""
    async with publisher_for(settings) as publisher:
        low = [await new_task(pool, 3, priority) for priority in (4, 2, 4, 6, 4)]
        for task in low:
            await publisher.task(task)
        urgent = await new_task(pool, 3, priority=10)
        await publisher.task(urgent)
    recorder = Recorder()
    worker = Worker(settings, WorkerOptions(COMPONENT, concurrency=1, prefetch=1), recorder)
    async with running(worker.run):
        await eventually(lambda: _true(len(recorder.ran) == len(low) + 1), timeout=10)
    same_priority = [t.session_id for t in recorder.ran if t.priority == 4]
    assert same_priority == [t.session_id for t in low if t.priority == 4]  # FIFO within a level
    assert urgent.session_id in {t.session_id for t in recorder.ran if t.priority == 10}
    return [t.priority for t in recorder.ran]


@pytest.mark.parametrize("transport", ["rabbitmq", "postgres"])
async def test_top_tier_results_travel_in_their_own_queue(world, pool):
    """Enterprise results skip any backlog of lower-tier results: they have a queue of their
    own, which the aggregator consumes with its own prefetch; freemium ones share the other."""
    settings = await world()
    freemium, enterprise = await new_task(pool, FREEMIUM), await new_task(pool, ENTERPRISE)
    worker = Worker(settings, WorkerOptions(COMPONENT, 1, 1), Recorder())
    async with publisher_for(settings) as publisher, running(worker.run):
        for task in (freemium, enterprise):
            await publisher.task(task)
        names = Names(settings.topology_prefix)

        async def both_reported() -> dict[str, int] | None:
            depths = await queue_depths(settings)
            return depths if depths[names.results] + depths[names.urgent_results] == 2 else None

        depths = await eventually(both_reported, timeout=10)
    assert depths[names.results] == depths[names.urgent_results] == 1
    async with running(Aggregator(settings, explain=lambda v, r: {"en": v.label}).run):
        for task in (freemium, enterprise):
            view = await eventually(lambda t=task: _recorded(pool, t.session_id), timeout=10)
            assert view.results[COMPONENT]["status"] == "ok"


async def _recorded(pool, session_id: str):
    view = await sessions.load(pool, session_id)
    return view if view is not None and COMPONENT in view.results else None


@pytest.mark.parametrize("transport", ["rabbitmq", POSTGRES_ALONE])
async def test_an_urgent_session_holds_lower_tiers_everywhere_until_it_is_final(world, redis):
    """The API announces an enterprise session when it accepts it (Redis pub/sub, or NOTIFY
    with PostgreSQL alone), the aggregator its end when it finalizes it; a gate that follows
    the signals, as every worker and aggregator does, holds lower tiers back in between (here
    for up to 10 s: the cap is not under test). A freemium session announces nothing."""
    # The gate and its feeds as every worker and aggregator builds them (signals and the CPU
    # load); URGENT_CPU_BUSY=0 holds whatever the load, so the test does not depend on it.
    settings = await world(urgent_hold_ms=10_000, urgent_cpu_busy=0)
    gate = gate_for(settings)
    async with Resources() as opened:
        pool = await opened.pool(settings.database_url, max_size=2)
        house = await open_house(opened, settings, pool)
        signals = UrgentSignals(house.channels, settings.key_prefix)
        async with precedence_followed(gate, signals):
            await eventually(lambda: _subscribed(house, redis, signals.channel), timeout=5)
            await _an_urgent_session_holds_the_gate(settings, gate)


async def _an_urgent_session_holds_the_gate(settings, gate) -> None:
    """A freemium session leaves the gate clear; an enterprise one closes it until its
    session is final."""
    async with client_for(settings) as api:

        async def submit(plan: int) -> str:
            body = {"content": "x", "plan_type": plan}
            response = await api.post(f"{API}/analyze-async", json=body, headers=ENTERPRISE_KEY)
            assert response.status_code == 202, response.text
            session_id: str = response.json()["session_id"]
            return session_id

        await submit(FREEMIUM)
        await asyncio.sleep(0.2)
        assert gate.is_clear()
        top = await submit(ENTERPRISE)
        await eventually(lambda: _true(not gate.is_clear()), timeout=5)
        services = [Worker(settings, WorkerOptions(c, 1, 1), Recorder()).run for c in ALL]
        aggregator = Aggregator(settings, explain=lambda v, r: {"en": v.label})
        async with running(*services, aggregator.run):
            await eventually(lambda: _true(gate.is_clear()), timeout=10)
            result = await api.get(f"{API}/{top}/result", headers=ENTERPRISE_KEY)
    assert result.status_code == 200 and result.json()["status"] == "completed"


async def _subscribed(house: House, redis, channel: str) -> bool:
    if house.redis is None:  # NOTIFY: subscribed once the process's listener is connected
        return house.channels.connected.is_set()  # type: ignore[attr-defined]
    return dict(await redis.pubsub_numsub(channel)).get(channel.encode(), 0) > 0
