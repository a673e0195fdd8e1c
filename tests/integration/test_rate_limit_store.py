"""The rate limits' store on the real Redis: a slow answer or a busy process does not switch
the limits off (they fail open only when the store is away)."""

from __future__ import annotations

import asyncio
import time

import pytest
from redis.asyncio import Redis

from dispatcher.quotas import WindowCounts
from dispatcher.ratelimits import parse_limits
from shared.house import redis_house
from tests import services as svc
from tests.conftest import make_settings

pytestmark = pytest.mark.integration


async def test_a_pause_of_the_event_loop_does_not_let_a_request_past_its_limit(
    services, database_url
) -> None:
    """A timeout counts the loop's own lag: a process busy for half a second while a check
    was in flight once let that request through unchecked (0.25 s timeout on a loaded CI)."""
    prefix = svc.unique("slow")
    redis = Redis.from_url(services.redis_url)
    try:
        settings = make_settings(services, database_url, prefix)
        counts = WindowCounts(settings, redis_house(redis))
        limit = parse_limits("2/minute")
        assert await counts.charge("submit", limit, "key") is not None  # connection warm
        checking = asyncio.create_task(counts.charge("submit", limit, "key"))
        await asyncio.sleep(0)  # the check is under way, its timeout running
        time.sleep(0.5)  # noqa: ASYNC251 -- the point: the process busy elsewhere
        second = await checking
        third = await counts.charge("submit", limit, "key")
        assert second is not None and [u.remaining for u in second] == [0]
        assert third is not None and third[0].count == 3  # over: refused
    finally:
        await svc.delete_redis_keys(services.redis_url, prefix)
        await redis.aclose()
