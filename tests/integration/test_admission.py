"""Admission over HTTP against the real API and PostgreSQL: past the pipeline's limit of
sessions processing a request waits for room, is admitted when a session finishes, and is
refused with 503 and Retry-After when none does; lower plans stop at their share."""

import asyncio
import time
import uuid

import asyncpg
import pytest

from shared import sessions
from shared.api_keys import hashed
from tests.integration.conftest import on_both_transports, only_on_rabbitmq
from tests.integration.test_api import client_for
from tests.integration.test_quotas import client, serving

pytestmark = [pytest.mark.integration, on_both_transports]

SUBMIT = "/api/v3/pipeline/analyze-async"
WAIT_S = 1.0


@pytest.fixture
def keys() -> dict[str, dict[str, str]]:
    run = uuid.uuid4().hex[:8]
    return {
        "lower": {"X-API-Key": f"key-lower-{run}"},  # plan 2: 60 % of the limit
        "top": {"X-API-Key": f"key-top-{run}"},  # plan 6: all of it
    }


async def pipeline(world, own_database, keys, limit=4, **overrides):
    return await world(
        database_url=own_database,
        api_keys=hashed(
            {
                keys["lower"]["X-API-Key"]: {"tenant": "t-lower", "plan": 2},
                keys["top"]["X-API-Key"]: {"tenant": "t-top", "plan": 6},
            }
        ),
        admission_limit=limit,
        # Rate limits and per-tenant caps are quotas of their own (test_quotas.py).
        **{
            "admission_wait_s": WAIT_S,
            "admission_recheck_s": 0.02,
            "quotas_enabled": False,
            **overrides,
        },
    )


async def processing(database_url: str) -> int:
    conn = await asyncpg.connect(database_url)
    try:
        return await conn.fetchval("SELECT count(*) FROM sessions WHERE status = 'processing'")
    finally:
        await conn.close()


async def test_past_the_limit_a_session_is_refused_after_the_wait_and_lower_plans_stop_first(
    world, own_database, keys
):
    """Limit 4: plan 2 is admitted while under 2 processing, plan 6 under 4 (no workers run, so
    nothing finishes). The first refusal comes after the wait, with Retry-After, in user terms;
    an Idempotency-Key replay of an admitted session still answers; nothing refused is kept."""
    settings = await pipeline(world, own_database, keys)
    async with serving(settings) as app, client(app) as api:
        lower = [
            await api.post(
                SUBMIT,
                json={"text": f"lower {i}"},
                headers={**keys["lower"], "Idempotency-Key": f"k{i}"},
            )
            for i in range(2)
        ]
        began = time.monotonic()
        lower_refused = await api.post(SUBMIT, json={"text": "lower 3"}, headers=keys["lower"])
        waited = time.monotonic() - began
        top = [
            await api.post(SUBMIT, json={"text": f"top {i}"}, headers=keys["top"]) for i in range(2)
        ]
        top_refused = await api.post(SUBMIT, json={"text": "top 3"}, headers=keys["top"])
        replay = await api.post(
            SUBMIT, json={"text": "lower 0"}, headers={**keys["lower"], "Idempotency-Key": "k0"}
        )
    assert [r.status_code for r in lower + top] == [202] * 4
    assert lower_refused.status_code == 503 and top_refused.status_code == 503
    assert waited >= WAIT_S
    assert lower_refused.headers["Retry-After"] == "1"
    assert (
        "at capacity (2 sessions processing, 2 allowed for this plan)"
        in (lower_refused.json()["detail"])
    )
    assert "4 allowed" in top_refused.json()["detail"]
    assert replay.status_code == 202
    assert replay.json()["session_id"] == lower[0].json()["session_id"]
    assert await processing(own_database) == 4


async def test_a_waiting_session_is_admitted_as_soon_as_one_finishes(world, own_database, keys):
    """At the limit, a POST waits; a session that finishes meanwhile makes room, and the POST
    answers 202 well before the wait would have run out."""
    settings = await pipeline(world, own_database, keys, limit=2, admission_wait_s=5.0)
    async with serving(settings) as app, client(app) as api:
        first, _ = [
            await api.post(SUBMIT, json={"text": f"top {i}"}, headers=keys["top"]) for i in range(2)
        ]
        began = time.monotonic()
        waiting = asyncio.create_task(api.post(SUBMIT, json={"text": "top 3"}, headers=keys["top"]))
        await asyncio.sleep(0.3)
        assert not waiting.done()
        conn = await asyncpg.connect(own_database)
        try:
            await conn.execute(
                "UPDATE sessions SET status = 'completed', finished_at = now() WHERE id = $1::uuid",
                first.json()["session_id"],
            )
        finally:
            await conn.close()
        admitted = await waiting
        took = time.monotonic() - began
    assert admitted.status_code == 202
    assert 0.3 <= took < 5.0
    assert await processing(own_database) == 2


async def test_a_request_that_waited_is_held_to_its_tenants_cap_as_it_is_then(
    world, own_database, keys
):
    """The tenant's cap is checked before the wait and again after it: a session the tenant
    started meanwhile (through another API process, say) counts, so room in the pipeline
    does not carry it past its cap."""
    settings = await pipeline(
        world,
        own_database,
        keys,
        limit=10,  # plan 2 may fill 6
        admission_wait_s=5.0,
        quotas_enabled=True,
        max_in_flight_by_plan={2: 2},
    )
    async with serving(settings) as app, client(app) as api:
        lower = await api.post(SUBMIT, json={"text": "lower 1"}, headers=keys["lower"])
        top = [
            await api.post(SUBMIT, json={"text": f"top {i}"}, headers=keys["top"]) for i in range(5)
        ]
        waiting = asyncio.create_task(
            api.post(SUBMIT, json={"text": "lower 2"}, headers=keys["lower"])
        )  # 6 processing: plan 2 waits; its tenant has 1 of its 2
        await asyncio.sleep(0.3)
        assert not waiting.done()
        conn = await asyncpg.connect(own_database)
        try:
            ended, moved = (r.json()["session_id"] for r in top[:2])
            # One transaction: room must not come before the tenant's second session does.
            async with conn.transaction():
                await conn.execute(
                    "UPDATE sessions SET tenant = 't-lower' WHERE id = $1::uuid", moved
                )
                await conn.execute(
                    "UPDATE sessions SET status = 'completed', finished_at = now()"
                    " WHERE id = $1::uuid",
                    ended,
                )
        finally:
            await conn.close()
        over_cap = await waiting
    assert lower.status_code == 202 and [r.status_code for r in top] == [202] * 5
    assert over_cap.status_code == 429, over_cap.text
    assert "still processing" in over_cap.json()["detail"]


async def test_with_the_broker_away_sessions_left_processing_do_not_hold_the_api_back(
    world, own_database, keys
):
    """While RabbitMQ is away the API analyses sessions itself; the sessions that were
    processing when it went stay so until it returns, and must not fill admission."""
    settings = await pipeline(world, own_database, keys, limit=1)
    only_on_rabbitmq(settings, "on the postgres transport there is no broker to lose")
    async with serving(settings) as app, client(app) as api:
        stranded = await api.post(SUBMIT, json={"text": "before"}, headers=keys["top"])
    offline = settings.model_copy(update={"amqp_url": "amqp://guest:guest@127.0.0.1:1/"})
    async with client_for(offline) as api:
        analysed = await api.post(SUBMIT, json={"text": "after"}, headers=keys["top"])
    assert stranded.status_code == 202
    assert analysed.status_code == 200, analysed.text
    assert analysed.json()["mode"] == "sync"


async def test_the_pace_reading_counts_sessions_processing_and_those_created_since(
    world, own_database, keys
):
    """One statement, real PostgreSQL: sessions processing (up to a bound), and sessions
    created from a wall-clock millisecond on, found by their ids."""
    settings = await pipeline(world, own_database, keys, limit=0)
    async with serving(settings) as app, client(app) as api:
        before = [
            await api.post(SUBMIT, json={"text": f"a {i}"}, headers=keys["top"]) for i in range(3)
        ]
        await asyncio.sleep(0.01)
        since_ms = time.time_ns() // 1_000_000
        await asyncio.sleep(0.01)
        after = [
            await api.post(SUBMIT, json={"text": f"b {i}"}, headers=keys["top"]) for i in range(4)
        ]
    pool = await asyncpg.create_pool(own_database, min_size=1, max_size=1)
    try:
        await pool.execute(
            "UPDATE sessions SET status = 'completed', finished_at = now()"
            " WHERE id = ANY($1::uuid[])",
            [before[0].json()["session_id"], after[0].json()["session_id"]],
        )
        assert await sessions.processing_and_created(pool, 100, since_ms) == (5, 4)
        assert await sessions.processing_and_created(pool, 2, since_ms) == (2, 4)
        later = time.time_ns() // 1_000_000 + 1000
        assert await sessions.processing_and_created(pool, 100, later) == (5, 0)
    finally:
        await pool.close()


async def test_the_limit_follows_what_the_pipeline_finishes(world, own_database, keys):
    """No workers: the test finishes 40 sessions a second while eight clients submit back to
    back. Aiming at 0.5 s, the limit (at most 60) starts at 10 and rises to about 20 (40 ×
    0.5), and the sessions processing with it."""
    settings = await pipeline(
        world, own_database, keys, limit=60, admission_wait_s=0.5, admission_target_s=0.5
    )
    conn = await asyncpg.connect(own_database)
    stop_at = time.monotonic() + 4.0

    async def finishing() -> None:
        began, finished = time.monotonic(), 0
        while True:
            owed = int(40 * (time.monotonic() - began)) - finished
            if owed > 0:
                done = await conn.execute(
                    "UPDATE sessions SET status = 'completed', finished_at = now() WHERE id IN"
                    " (SELECT id FROM sessions WHERE status = 'processing' ORDER BY id LIMIT $1)",
                    owed,
                )
                finished += int(done.split()[-1])
            await asyncio.sleep(0.02)

    async def submitting(api) -> None:
        while time.monotonic() < stop_at:
            await api.post(SUBMIT, json={"text": "some text"}, headers=keys["top"])

    try:
        async with serving(settings) as app, client(app) as api:
            finisher = asyncio.create_task(finishing())
            try:
                await asyncio.gather(*(submitting(api) for _ in range(8)))
            finally:
                finisher.cancel()
            gate = app.state.pipeline.admission
            assert gate.pace is not None and 25 <= gate.pace <= 60, gate.pace
            assert 13 <= gate.limit <= 30, gate.limit
        assert await processing(own_database) <= 35
    finally:
        await conn.close()
