"""The DLQ library (shared/dead_letter_queue.py) on the real broker: browsing leaves letters in
place and in order; replay sends them home at their priority and counts; a loop is refused."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import aio_pika
import pytest
from aio_pika.abc import AbstractRobustConnection

from aggregator.service import Aggregator
from dispatcher.submit import first_tasks
from shared import sessions
from shared.broker import connect
from shared.constants import ANALYSIS_COMPONENTS, REPLAYS_HEADER, TENANT_HEADER
from shared.dead_letter_queue import (
    LetterFilter,
    letter,
    list_letters,
    purge,
    replay,
)
from shared.messages import priority_of
from shared.names import Names
from shared.sessions import NewSession
from shared.settings import Settings
from tests.integration.conftest import eventually, publisher_for, queue_depths, running
from tests.integration.test_api import API, OTHER_TENANT, client_for
from tests.integration.test_worker_flow import broken_claims, explain, final_view, scored
from workers.runtime import Worker, WorkerOptions

pytestmark = pytest.mark.integration

EVERYTHING = LetterFilter()


@contextlib.asynccontextmanager
async def dlq_of(settings: Settings) -> AsyncIterator[tuple[AbstractRobustConnection, Names]]:
    """A connection as the tools get it (the caller's own) and the world's names."""
    connection = await connect(settings.amqp_url, "test-dlq-tools")
    try:
        yield connection, Names(settings.topology_prefix)
    finally:
        await connection.close()


async def dead_letters(settings: Settings, *letters: tuple[str, str, int]) -> None:
    """Dead-letter (reason, origin, priority) letters as a worker would."""
    async with publisher_for(settings) as publisher:
        for n, (reason, origin, priority) in enumerate(letters):
            body = f'{{"n": {n}}}'.encode()
            await publisher.dead_letter(body, {}, reason, origin, priority)


async def depth(settings: Settings, queue: str) -> int:
    return (await queue_depths(settings))[queue]


async def expired_session(settings: Settings, pool, plan: int, tenant: str) -> NewSession:
    """A session whose four tasks expire into the DLQ (no worker runs), tenant in headers."""
    new = NewSession(sessions.new_session_id(), tenant, plan, "text", {"content": "x" * 40}, 120)
    await sessions.create(pool, new)
    async with publisher_for(settings) as publisher:
        for task in first_tasks(new, None):
            await publisher.task(task, tenant=tenant)
    dlq = Names(settings.topology_prefix).dlq

    async def four_dead() -> bool:
        return await depth(settings, dlq) == 4

    await eventually(four_dead, timeout=15)
    return new


async def consumed(connection: AbstractRobustConnection, queue: str) -> bool:
    channel = await connection.channel()
    try:
        declared = await channel.declare_queue(queue, passive=True)
        return bool(declared.declaration_result.consumer_count)
    finally:
        await channel.close()


async def workers_consume(connection: AbstractRobustConnection, names: Names, plan: int) -> None:
    """Wait until each analysis component's queue of `plan` has a consumer: the queues' TTL
    is short, and tasks replayed before that would expire again. (Slow on a busy machine.)"""
    for component in ANALYSIS_COMPONENTS:
        queue = names.task_queue(component, plan)
        await eventually(lambda queue=queue: consumed(connection, queue), timeout=60)


async def test_expired_tasks_are_listed_by_tenant_and_replayed_to_a_verdict(world, pool):
    """Tasks expire into the DLQ; listing shows origin, reason, tenant and the plan's priority
    without removing anything; a replay of the tenant's letters finishes the session."""
    settings = await world(queue_message_ttl_ms=1000, session_deadline_s=120)
    new = await expired_session(settings, pool, plan=5, tenant="tenant-a")
    async with dlq_of(settings) as (connection, names):
        listing = await list_letters(connection, names, LetterFilter(tenant="tenant-a"))
        assert await list_letters(connection, names, LetterFilter(tenant="tenant-b")) == (
            type(listing)([], 4, 4)
        )
        assert (listing.scanned, listing.depth) == (4, 4)
        assert sorted(x.origin for x in listing.letters) == sorted(
            names.task_queue(c, 5) for c in ANALYSIS_COMPONENTS
        )
        assert all(x.reason == f"expired in {x.origin}" for x in listing.letters)
        assert {x.priority for x in listing.letters} == {priority_of(5)}
        assert await depth(settings, names.dlq) == 4  # listing removed nothing

        workers = [
            Worker(settings, WorkerOptions(c, 1, 1), scored).run for c in ANALYSIS_COMPONENTS
        ]
        async with running(*workers, Aggregator(settings, explain=explain).run):
            await workers_consume(connection, names, 5)
            outcome = await replay(connection, names, LetterFilter(tenant="tenant-a"), 100, 3)
            assert sorted(outcome.replayed) == sorted(x.id for x in listing.letters)
            view = await final_view(pool, new.id)
    assert view.status == "completed"
    assert await depth(settings, names.dlq) == 0


async def test_browsing_keeps_letters_in_order_and_ids_stable_and_is_bounded(world):
    """Two listings give the same letters, same ids, same order; a scan of 2 looks at 2 of 5
    and says so; viewing one returns its body; all five are still there afterwards."""
    settings = await world()
    async with dlq_of(settings) as (connection, names):
        origin = names.task_queue("claims", 1)
        await dead_letters(settings, *[(f"reason {n}", origin, 1) for n in range(5)])
        first = await list_letters(connection, names, EVERYTHING)
        again = await list_letters(connection, names, EVERYTHING)
        assert [x.reason for x in first.letters] == [f"reason {n}" for n in range(5)]
        assert [x.id for x in again.letters] == [x.id for x in first.letters]
        bounded = await list_letters(connection, names, EVERYTHING, scan=2)
        assert (len(bounded.letters), bounded.scanned, bounded.depth) == (2, 2, 5)
        third = await letter(connection, names, first.letters[2].id)
        assert third is not None and third.body == b'{"n": 2}' and third.reason == "reason 2"
        assert await letter(connection, names, "0" * 16) is None
        after = await list_letters(connection, names, EVERYTHING)
        assert [x.id for x in after.letters] == [x.id for x in first.letters]


async def test_a_quorum_dlq_keeps_its_letters_however_often_it_is_browsed(world):
    """QUEUE_TYPE=quorum: a listing gets each letter and requeues it, which a quorum queue
    counts as a delivery; browsing more often than the delivery limit loses no letter (a
    limit on the DLQ dropped every letter after that many looks)."""
    settings = await world(queue_type="quorum", queue_delivery_limit=2)
    async with dlq_of(settings) as (connection, names):
        origin = names.task_queue("claims", 1)
        await dead_letters(settings, *[(f"reason {n}", origin, 1) for n in range(3)])
        for _ in range(5):
            listed = await list_letters(connection, names, EVERYTHING)
            assert [x.reason for x in listed.letters] == [f"reason {n}" for n in range(3)]
    assert await depth(settings, names.dlq) == 3


async def test_replay_of_one_goes_to_its_origin_at_its_priority_the_rest_keep_their_order(
    world,
):
    """Replaying the middle letter by id puts it in its origin queue with its priority and a
    replay counted; the others stay, in order."""
    settings = await world()
    async with dlq_of(settings) as (connection, names):
        claims, domain = names.task_queue("claims", 1), names.task_queue("domain", 4)
        await dead_letters(
            settings, ("invalid task: a", claims, 1), ("gave up", domain, 7), ("c", claims, 1)
        )
        before = (await list_letters(connection, names, EVERYTHING)).letters
        chosen = LetterFilter(ids=frozenset({before[1].id}))
        outcome = await replay(connection, names, chosen, 10, 3)
        assert outcome.replayed == [before[1].id]
        left = (await list_letters(connection, names, EVERYTHING)).letters
        assert [x.id for x in left] == [before[0].id, before[2].id]
        channel = await connection.channel()
        home = await (await channel.get_queue(domain)).get(no_ack=True)
        assert home.priority == 7 and home.body == b'{"n": 1}'
        assert home.headers[REPLAYS_HEADER] == 1


async def test_replay_and_purge_by_filter(world):
    """A reason filter replays only its letters; a letter with no queue for its origin is
    left and reported; a purge by filter removes only what it matches."""
    settings = await world()
    async with dlq_of(settings) as (connection, names):
        await dead_letters(
            settings,
            ("invalid task: broken", names.task_queue("claims", 1), 1),
            ("gave up after 3 attempts", names.task_queue("domain", 2), 2),
            ("gave up after 3 attempts", "nowhere.at.all", 2),
        )
        outcome = await replay(connection, names, LetterFilter(reason="GAVE UP"), 10, 3)
        assert (len(outcome.replayed), len(outcome.unroutable)) == (1, 1)
        depths = await queue_depths(settings)
        assert depths[names.dlq] == 2 and depths[names.task_queue("domain", 2)] == 1
        assert await purge(connection, names, LetterFilter(reason="invalid")) == 1
        left = (await list_letters(connection, names, EVERYTHING)).letters
        assert [x.origin for x in left] == ["nowhere.at.all"]


async def test_a_poison_task_replayed_until_it_is_refused_as_a_loop(world):
    """A real worker dead-letters the poison each time, keeping the count and the priority;
    at DLQ_MAX_REPLAYS the replay refuses it and leaves it in place; --force sends it anyway."""
    settings = await world(dlq_max_replays=2)
    names = Names(settings.topology_prefix)
    worker = Worker(settings, WorkerOptions("claims", 1, 1), scored).run
    async with dlq_of(settings) as (connection, _), running(worker):
        async with publisher_for(settings) as publisher:
            poison = aio_pika.Message(b'{"not": "a task"}', priority=6)
            await publisher.send(names.exchange, names.task_queue("claims", 3), poison)

        async def dead(replays: int):
            found = (await list_letters(connection, names, EVERYTHING)).letters
            return found if [x.replays for x in found] == [replays] else None

        for count in range(settings.dlq_max_replays):
            (poisoned,) = await eventually(lambda count=count: dead(count))
            assert poisoned.priority == 6 and poisoned.reason.startswith("invalid task")
            outcome = await replay(connection, names, EVERYTHING, 10, settings.dlq_max_replays)
            assert outcome.replayed == [poisoned.id]
        (looping,) = await eventually(lambda: dead(settings.dlq_max_replays))
        refused = await replay(connection, names, EVERYTHING, 10, settings.dlq_max_replays)
        assert (refused.replayed, refused.refused_loops) == ([], [looping.id])
        assert await depth(settings, names.dlq) == 1
        forced = await replay(
            connection, names, EVERYTHING, 10, settings.dlq_max_replays, force=True
        )
        assert forced.replayed == [looping.id]
        await eventually(lambda: dead(settings.dlq_max_replays + 1))


async def test_the_count_survives_the_retries_of_a_replayed_task(world, pool):
    """A task that gave up is replayed; it is retried and gives up again: the letter that
    comes back has its tenant and one replay counted (not lost with the retry)."""
    settings = await world(max_attempts=2, retry_base_ms=100)
    names = Names(settings.topology_prefix)
    new = NewSession(sessions.new_session_id(), "tenant-r", 2, "text", {"content": "x"}, 120)
    await sessions.create(pool, new)
    worker = Worker(settings, WorkerOptions("claims", 1, 1), broken_claims).run
    async with dlq_of(settings) as (connection, _), running(worker):
        async with publisher_for(settings) as publisher:
            claims = next(t for t in first_tasks(new, None) if t.component == "claims")
            await publisher.task(claims, tenant="tenant-r")

        async def gave_up(replays: int):
            found = (await list_letters(connection, names, LetterFilter(reason="gave up"))).letters
            return found if [x.replays for x in found] == [replays] else None

        (first,) = await eventually(lambda: gave_up(0))
        assert first.tenant == "tenant-r" and first.attempt == 2
        await replay(connection, names, EVERYTHING, 10, 3)
        (again,) = await eventually(lambda: gave_up(1))
    assert again.tenant == "tenant-r" and again.headers[TENANT_HEADER] == "tenant-r"


async def test_tasks_the_api_accepts_carry_the_callers_tenant_into_the_dlq(world):
    """POSTed through the API and expired unread, a session's four tasks are found by the
    tenant of the key that sent them, and by no other."""
    settings = await world(queue_message_ttl_ms=1000)
    async with client_for(settings) as api:
        response = await api.post(
            f"{API}/analyze-async", json={"content": "a" * 50}, headers=OTHER_TENANT
        )
        assert response.status_code == 202, response.text
    names = Names(settings.topology_prefix)

    async def four_dead() -> bool:
        return await depth(settings, names.dlq) == 4

    await eventually(four_dead, timeout=15)
    async with dlq_of(settings) as (connection, _):
        ours = await list_letters(connection, names, LetterFilter(tenant="tenant-b"))
        others = await list_letters(connection, names, LetterFilter(tenant="tenant-a"))
    assert len(ours.letters) == 4 and others.letters == []
    assert {x.session_id for x in ours.letters} == {response.json()["session_id"]}
