"""Operators' view of the DLQ: list leaves letters in place, replay sends them home."""

import pytest

from aggregator.service import Aggregator
from dispatcher.submit import first_tasks
from ops.dlq import inspect, replay
from shared import sessions
from shared.constants import ANALYSIS_COMPONENTS
from shared.names import Names
from shared.sessions import NewSession
from tests.integration.conftest import eventually, publisher_for, queue_depths, running
from tests.integration.test_worker_flow import explain, final_view, scored
from workers.runtime import Worker, WorkerOptions

pytestmark = pytest.mark.integration


async def test_expired_tasks_are_listed_with_their_reason_and_replayed_to_completion(world, pool):
    """Tasks expire into the DLQ; `list` shows why without removing them; `replay` finishes them."""
    settings = await world(queue_message_ttl_ms=1000, session_deadline_s=120)
    dlq = f"{settings.topology_prefix}_dlq"
    async with publisher_for(settings) as publisher:
        new = NewSession(
            sessions.new_session_id(), "tenant-a", 5, "text", {"content": "x" * 40}, 120
        )
        await sessions.create(pool, new)
        for task in first_tasks(new, None):
            await publisher.task(task)

    async def four_dead():
        return (await queue_depths(settings))[dlq] == 4

    await eventually(four_dead, timeout=15)
    letters = await inspect(settings, 10)
    assert (await queue_depths(settings))[dlq] == 4  # listing removed nothing
    assert sorted(letter.origin for letter in letters) == sorted(
        f"{settings.topology_prefix}.{c}.5" for c in ANALYSIS_COMPONENTS
    )
    assert all(letter.reason.startswith("expired in ") for letter in letters)

    workers = [Worker(settings, WorkerOptions(c, 1, 1), scored).run for c in ANALYSIS_COMPONENTS]
    async with running(*workers, Aggregator(settings, explain=explain).run):
        assert await replay(settings, 100) == 4
        view = await final_view(pool, new.id)
    assert view.status == "completed"
    assert (await queue_depths(settings))[dlq] == 0


async def test_replay_can_be_limited_to_a_reason(world, pool):
    """Only letters whose reason matches are replayed; the rest stay for inspection."""
    settings = await world()
    names = Names(settings.topology_prefix)
    async with publisher_for(settings) as publisher:
        await publisher.dead_letter(
            b"{}", {}, "invalid task: broken", names.task_queue("claims", 1)
        )
        await publisher.dead_letter(
            b"{}", {}, "gave up after 3 attempts", names.task_queue("domain", 2)
        )
    assert await replay(settings, 10, reason_contains="gave up") == 1
    depths = await queue_depths(settings)
    assert depths[names.dlq] == 1 and depths[names.task_queue("domain", 2)] == 1
