"""A worker's attempts reach Redis without holding its tasks up, and none is lost on the way."""

from __future__ import annotations

import uuid

from redis.asyncio import Redis

from shared import attempts
from shared.attempts import Attempt, AttemptLog
from shared.house import RedisShelf
from shared.keys import Keys
from shared.redis_batches import RedisBatches


def tried(n: int) -> Attempt:
    return Attempt(n, "w1", 1000.0 + n, 1000.5 + n, "ok" if n % 2 else "retry")


async def test_attempts_added_while_a_write_is_on_its_way_are_all_written_in_order(
    redis: Redis,
):
    """Added in one burst (as a busy worker settles tasks): every entry is written, each
    component's in the order added, and flush returns once they are."""
    keys = Keys(f"t{uuid.uuid4().hex[:8]}")
    sid = str(uuid.uuid4())
    batches = RedisBatches(redis)
    log = AttemptLog(RedisShelf(redis, batches), keys)
    for n in range(1, 8):
        log.add(sid, "claims", tried(n))
        log.add(sid, "domain", tried(n))
    await batches.flush()
    recorded = await attempts.read(RedisShelf(redis, batches), keys, sid, ["claims", "domain"])
    assert recorded == {c: [tried(n) for n in range(1, 8)] for c in ("claims", "domain")}


async def test_an_attempt_redis_cannot_take_is_dropped_without_failing_anything():
    """Best effort: with Redis away the entry is given up, and flush still returns."""
    unreachable = Redis(host="127.0.0.1", port=1, socket_connect_timeout=0.2)
    try:
        batches = RedisBatches(unreachable)
        AttemptLog(RedisShelf(unreachable, batches), Keys("t")).add(
            str(uuid.uuid4()), "claims", tried(1)
        )
        await batches.flush()
    finally:
        await unreachable.aclose()
