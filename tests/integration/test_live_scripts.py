"""Live state is written with scripts run by SHA in one round trip (or with the process's
other commands), and survives Redis forgetting its scripts (a restart)."""

from __future__ import annotations

import uuid

from redis.asyncio import Redis

from shared import live
from shared.redis_batches import RedisBatches, Scripted, send_all

ECHO = "return {KEYS[1], ARGV[1]}"


async def test_a_batch_of_script_calls_answers_in_order_even_when_redis_forgot_the_script(
    redis: Redis,
):
    """The first use and the first use after SCRIPT FLUSH load the script and run the batch
    again; the replies come back one per call, in order."""
    await redis.script_flush()
    calls = [Scripted(ECHO, (f"k{i}",), (str(i),)) for i in range(5)]
    assert await send_all(redis, calls) == [[f"k{i}".encode(), str(i).encode()] for i in range(5)]
    await redis.script_flush()
    assert await send_all(redis, calls[:1]) == [[b"k0", b"0"]]


async def test_live_states_are_written_and_an_older_state_never_overwrites_a_newer(
    redis: Redis,
):
    """After a flush of scripts too: the newer-wins rule holds and the state is readable."""
    prefix, sid = f"t{uuid.uuid4().hex[:8]}", str(uuid.uuid4())
    await redis.script_flush()
    newer = {"status": "processing", "progress": 75}
    older = {"status": "processing", "progress": 25}
    await live.publish_states(redis, prefix, [(sid, newer)])
    await live.publish_states(redis, prefix, [(sid, older)])
    assert await live.read_state(redis, prefix, sid) == newer
    final = {"status": "completed", "progress": 100}
    await live.publish_states(redis, prefix, [(sid, final), (sid, newer)])
    assert await live.read_state(redis, prefix, sid) == final


async def test_live_states_sent_with_other_commands_keep_the_newer_wins_rule(redis: Redis):
    """Through a process's batches (as the API and the aggregators send them): a final state
    and an older one issued together leave the final one."""
    prefix, sid = f"t{uuid.uuid4().hex[:8]}", str(uuid.uuid4())
    batches = RedisBatches(redis)
    final = {"status": "completed", "progress": 100}
    older = {"status": "processing", "progress": 50}
    await live.publish_states(batches, prefix, [(sid, final), (sid, older)])
    assert await live.read_state(redis, prefix, sid) == final
