"""A process's Redis commands in batches: replies to their callers, errors to theirs, a lock
finished off the task's path, scripts Redis forgot."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError

from shared.locks import ComponentLock
from shared.redis_batches import RedisBatches, Scripted, send_all

_SET_IF_EMPTY = """
if redis.call('exists', KEYS[1]) == 0 then return redis.call('set', KEYS[1], ARGV[1]) end
return 0
"""


async def test_commands_issued_together_each_get_their_own_reply(redis: Redis):
    """Twenty callers at once, each taking a key of its own or one they all want: each gets
    its own reply, and exactly one of them the shared key."""
    batches = RedisBatches(redis)
    shared_key = f"t:b:{uuid.uuid4().hex}"
    own = [f"t:b:{uuid.uuid4().hex}" for _ in range(20)]
    took_own = await asyncio.gather(*(batches.call(("SET", k, "v", "NX")) for k in own))
    took_shared = await asyncio.gather(
        *(batches.call(("SET", shared_key, str(i), "NX")) for i in range(20))
    )
    assert all(took_own)
    assert sum(1 for t in took_shared if t) == 1
    await redis.delete(shared_key, *own)


async def test_a_refused_command_fails_its_caller_only(redis: Redis):
    """A command Redis refuses raises for its caller; the others in its batch are answered."""
    batches = RedisBatches(redis)
    key = f"t:b:{uuid.uuid4().hex}"
    await redis.set(key, "not a list")
    wrong, right = await asyncio.gather(
        batches.call(("RPUSH", key, "x")), batches.call(("GET", key)), return_exceptions=True
    )
    assert isinstance(wrong, ResponseError) and right == b"not a list"
    await redis.delete(key)


async def test_with_redis_away_callers_learn_it_and_writes_are_given_up():
    unreachable = Redis(host="127.0.0.1", port=1, socket_connect_timeout=0.2)
    try:
        batches = RedisBatches(unreachable)
        batches.add(("SET", "t:b:x", "1"))
        with pytest.raises(RedisConnectionError):
            await batches.call(("GET", "t:b:x"))
        await batches.flush()
    finally:
        await unreachable.aclose()


async def test_a_lock_finished_later_keeps_duplicates_out_before_and_after_its_marker(
    redis: Redis,
):
    """finish() returns before the `done` marker is written; the key keeps the token until
    then and `done` for one TTL afterwards, and a duplicate cannot take the lock either way."""
    key = f"t:lock:{uuid.uuid4().hex}"
    batches = RedisBatches(redis)
    lock = ComponentLock(redis, key, 5_000, batches)
    assert await lock.acquire()
    assert await redis.get(key) == lock.token.encode()
    await lock.finish()
    assert await redis.get(key) == lock.token.encode()  # the marker is still on its way
    assert not await ComponentLock(redis, key, 5_000, batches).acquire()
    await batches.flush()
    assert await redis.get(key) == b"done"
    assert 0 < await redis.pttl(key) <= 5_000
    await lock.release()  # a finished lock is no longer ours to delete
    assert await redis.get(key) == b"done"
    assert not await ComponentLock(redis, key, 5_000).acquire()
    await redis.delete(key)


async def test_commands_of_a_script_redis_does_not_know_are_sent_again_once_it_is_loaded(
    redis: Redis,
):
    """After SCRIPT FLUSH (as after a Redis restart) EVALSHA answers NOSCRIPT: the script is
    loaded and only its commands are sent again; every reply lands in its place."""
    key, other = f"t:w:{uuid.uuid4().hex}", f"t:w:{uuid.uuid4().hex}"
    await redis.script_flush()
    replies = await send_all(
        redis,
        [("RPUSH", other, "a"), Scripted(_SET_IF_EMPTY, (key,), ("v",)), ("RPUSH", other, "b")],
    )
    assert replies == [1, b"OK", 2]
    assert await redis.get(key) == b"v"
    assert await redis.lrange(other, 0, -1) == [b"a", b"b"]
    await redis.delete(key, other)
