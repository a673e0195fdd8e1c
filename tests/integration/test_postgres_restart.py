"""A real PostgreSQL restart while results stream in: the aggregator holds them, loses none."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest
from postgres_node import owned_postgres

from aggregator.service import Aggregator
from shared import db as database
from shared.constants import ANALYSIS_COMPONENTS
from tests.integration.conftest import eventually, publisher_for, queue_depths, running
from tests.integration.test_worker_flow import explain, final_view, submit
from workers.executor import Analysis
from workers.runtime import Worker, WorkerOptions

pytestmark = pytest.mark.integration

SESSIONS = 24


async def steady(task, ctx):
    """A little work per task, so results keep arriving across the restart."""
    await asyncio.sleep(0.05)
    return Analysis(20)


async def test_a_postgres_restart_mid_stream_loses_no_result(world):
    """Postgres is shut down (fast: every session ends with 57P01) and started again while
    results arrive: the aggregator holds them, every session completes, nothing is
    dead-lettered."""
    with owned_postgres() as pg:
        await database.migrate(pg.url)
        settings = (await world()).model_copy(update={"database_url": pg.url})
        pool = await database.create_pool(pg.url, max_size=4)
        dlq = f"{settings.topology_prefix}_dlq"
        services = [
            Worker(settings, WorkerOptions(c, 2, 2), steady).run for c in ANALYSIS_COMPONENTS
        ]
        # Batches of one: a refusal of a lone result is dead-lettered, so 57P01 must not be one.
        services.append(Aggregator(settings, prefetch=1, explain=explain).run)
        try:
            async with publisher_for(settings) as publisher, running(*services):
                # Hold the fan-in on a table lock, so the aggregator has a statement in
                # flight when the server shuts down, and let results pile up behind it.
                blocker = await asyncpg.connect(pg.url)
                await blocker.execute("BEGIN; LOCK TABLE component_results IN EXCLUSIVE MODE")
                sids = [await submit(pool, publisher, plan=1 + i % 6) for i in range(SESSIONS)]

                async def results_waiting() -> bool:
                    depths = await queue_depths(settings)
                    return depths[f"{settings.topology_prefix}.results"] > 0

                await eventually(results_waiting, timeout=30)
                await asyncio.to_thread(pg.stop, "fast")
                await asyncio.to_thread(pg.start)
                blocker.terminate()  # its session ended with the shutdown

                async def settled() -> bool:
                    # Final, or given up on: a dead-lettered result would leave its session
                    # processing until the deadline, so the DLQ ends the wait as well.
                    done = await pool.fetchval(
                        "SELECT count(*) FROM sessions WHERE status <> 'processing'"
                    )
                    return done == SESSIONS or (await queue_depths(settings))[dlq] > 0

                await eventually(settled, timeout=60)
                dead = (await queue_depths(settings))[dlq]
                views = [await final_view(pool, s, timeout=5) for s in sids] if not dead else []
        finally:
            await pool.close()
        assert dead == 0, f"{dead} result(s) dead-lettered across the restart"
        assert [v.status for v in views] == ["completed"] * SESSIONS


CONNECTIONS = 8


async def test_a_postgres_out_of_connections_holds_results_until_one_is_free(world):
    """Every connection slot is taken (53300 too_many_connections) while results arrive: the
    aggregator holds them and completes every session once a slot is free; none is
    dead-lettered."""
    options = f"-c max_connections={CONNECTIONS} -c superuser_reserved_connections=0"
    with owned_postgres(options) as pg:
        await database.migrate(pg.url)
        settings = (await world()).model_copy(update={"database_url": pg.url})
        dlq = f"{settings.topology_prefix}_dlq"
        pool = await database.create_pool(pg.url, min_size=2, max_size=2)
        hogs = [await asyncpg.connect(pg.url) for _ in range(CONNECTIONS - 2)]
        services = [
            Worker(settings, WorkerOptions(c, 2, 2), steady).run for c in ANALYSIS_COMPONENTS
        ]
        services.append(Aggregator(settings, prefetch=1, explain=explain).run)
        try:
            async with publisher_for(settings) as publisher, running(*services):
                sids = [await submit(pool, publisher, plan=1 + i % 6) for i in range(6)]

                async def results_waiting() -> bool:
                    depths = await queue_depths(settings)
                    return depths[f"{settings.topology_prefix}.results"] > 2

                await eventually(results_waiting, timeout=30)
                await asyncio.sleep(1.0)  # the aggregator meets the full server meanwhile
                for hog in hogs:
                    await hog.close()
                hogs = []

                async def settled() -> bool:
                    done = await pool.fetchval(
                        "SELECT count(*) FROM sessions WHERE status <> 'processing'"
                    )
                    return done == len(sids) or (await queue_depths(settings))[dlq] > 0

                await eventually(settled, timeout=60)
                dead = (await queue_depths(settings))[dlq]
                views = [await final_view(pool, s, timeout=5) for s in sids] if not dead else []
        finally:
            for hog in hogs:
                hog.terminate()
            await pool.close()
        assert dead == 0, f"{dead} result(s) dead-lettered while the server was full"
        assert [v.status for v in views] == ["completed"] * len(sids)
