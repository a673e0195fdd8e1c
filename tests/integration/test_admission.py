"""Admission over HTTP against the real API and PostgreSQL: past the pipeline's limit of
sessions processing a request waits for room, is admitted when a session finishes, and is
refused with 503 and Retry-After when none does; lower plans stop at their share."""

import asyncio
import time
import uuid

import asyncpg
import pytest

from shared.api_keys import hashed
from tests.integration.conftest import on_both_transports
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


async def pipeline(world, own_database, keys, limit=4):
    return await world(
        database_url=own_database,
        api_keys=hashed(
            {
                keys["lower"]["X-API-Key"]: {"tenant": "t-lower", "plan": 2},
                keys["top"]["X-API-Key"]: {"tenant": "t-top", "plan": 6},
            }
        ),
        admission_limit=limit,
        admission_wait_s=WAIT_S,
        admission_recheck_s=0.02,
        # Rate limits and per-tenant caps are quotas of their own (test_quotas.py).
        quotas_enabled=False,
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
    settings = await pipeline(world, own_database, keys, limit=2)
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
    assert 0.3 <= took < WAIT_S
    assert await processing(own_database) == 2
