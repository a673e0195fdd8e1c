"""The metrics the alerts watch (ops/alerts.yml) that the pipeline itself computes: seconds
from POST to verdict, redelivered tasks."""

from __future__ import annotations

import pytest
from prometheus_client import REGISTRY

from aggregator.service import Aggregator
from shared import db as database
from shared.broker import connect
from shared.names import Names
from tests.integration.conftest import eventually, publisher_for, running
from tests.integration.test_worker_flow import (
    explain,
    final_view,
    scored,
    submit,
    workers_for,
)
from workers.runtime import Worker, WorkerOptions

pytestmark = pytest.mark.integration


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


async def test_the_aggregator_observes_each_session_from_post_to_verdict(world, own_database):
    """One finalized session, one observation of verdict_session_seconds, as long as it took."""
    settings = await world(database_url=own_database)
    count, total = sample("verdict_session_seconds_count"), sample("verdict_session_seconds_sum")
    pool = await database.create_pool(own_database, max_size=5)
    try:
        async with (
            publisher_for(settings) as publisher,
            running(*workers_for(settings), Aggregator(settings, explain=explain).run),
        ):
            sid = await submit(pool, publisher)
            view = await final_view(pool, sid)
            await eventually(lambda: _more(count))
    finally:
        await pool.close()
    took = sample("verdict_session_seconds_sum") - total
    assert view.status == "completed"
    assert sample("verdict_session_seconds_count") == count + 1
    assert 0 < took < 20  # final_view waits at most 20 s


async def _more(count: float) -> bool:
    return sample("verdict_session_seconds_count") > count


async def test_a_task_handed_back_unacked_counts_as_redelivered(settings, pool, publisher):
    """A delivery returned to its queue unacked comes back redelivered: counted per component."""
    before = sample("verdict_redeliveries_total", component="claims")
    await submit(pool, publisher, plan=3)
    connection = await connect(settings.amqp_url, "test-nack")
    try:
        channel = await connection.channel()
        queue = await channel.get_queue(Names(settings.topology_prefix).task_queue("claims", 3))
        taken = await eventually(lambda: queue.get(fail=False))
        await taken.nack(requeue=True)  # as a worker that lost its channel mid-task
    finally:
        await connection.close()
    async with running(Worker(settings, WorkerOptions("claims", 1, 1), scored).run):
        await eventually(lambda: _redelivered(before))
    assert sample("verdict_redeliveries_total", component="claims") == before + 1


async def _redelivered(before: float) -> bool:
    return sample("verdict_redeliveries_total", component="claims") > before
