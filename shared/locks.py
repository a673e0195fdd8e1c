"""Redis component locks: random token, TTL, watchdog renewal, compare-and-delete release."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import AsyncIterator

from redis.asyncio import Redis

from shared.background import in_background, raise_if_cancelled
from shared.keys import Keys
from shared.lua import script
from shared.redis_batches import RedisBatches, Scripted

# Extend only while we still own the lock: the token is the fence.
_RENEW = """
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0
"""
# Keep the key, as "done", for a while after success: a duplicate delivery arriving before the
# aggregator has recorded the result then waits instead of running the task a second time.
_FINISH = """
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('set', KEYS[1], 'done', 'PX', ARGV[2])
end
return 0
"""
_RELEASE = """
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
end
return 0
"""


def lock_key(prefix: str, session_id: str, component: str) -> str:
    """The lock of one component of one session."""
    return Keys(prefix).lock(session_id, component)


class ComponentLock:
    """One worker's claim on one (session, component); lost when another worker could take it."""

    def __init__(
        self, redis: Redis, key: str, ttl_ms: int, batches: RedisBatches | None = None
    ) -> None:
        """`batches`: acquire and finish with the process's other Redis commands (one round
        trip for many under load), the finish off the task's path (see `finish`)."""
        self._redis = redis
        self._batches = batches
        self.key = key
        self.ttl_ms = ttl_ms
        self.token = secrets.token_hex(16)
        self.lost = asyncio.Event()
        self._finished = False

    async def acquire(self) -> bool:
        if self._batches is not None:
            taken = ("SET", self.key, self.token, "NX", "PX", self.ttl_ms)
            return bool(await self._batches.call(taken))
        return bool(await self._redis.set(self.key, self.token, nx=True, px=self.ttl_ms))

    async def renew(self) -> bool:
        return bool(
            await script(self._redis, _RENEW)(keys=[self.key], args=[self.token, self.ttl_ms])
        )

    async def still_held(self) -> bool:
        return (await self._redis.get(self.key)) == self.token.encode()

    async def finish(self) -> None:
        """Mark the task done: the key stays for one TTL so duplicates wait, then expires.

        With batches the marker goes with the next of them and this returns at once:
        until it lands the key still holds this lock's token, which duplicates wait on just
        the same, and a marker never written leaves the token to expire by the same TTL."""
        self._finished = True
        if self._batches is not None:
            self._batches.add(Scripted(_FINISH, (self.key,), (self.token, self.ttl_ms)))
            return
        await script(self._redis, _FINISH)(keys=[self.key], args=[self.token, self.ttl_ms])

    async def release(self) -> None:
        """Give the lock up at once (nothing to do once finished: the key is no longer ours)."""
        if self._finished:
            return
        await script(self._redis, _RELEASE)(keys=[self.key], args=[self.token])

    @contextlib.asynccontextmanager
    async def watchdog(self) -> AsyncIterator[None]:
        """Renew every third of the TTL while the body runs; set `lost` if renewal fails."""
        async with in_background(self._keep_alive(), f"watchdog {self.key}"):
            yield

    async def _keep_alive(self) -> None:
        while True:
            await asyncio.sleep(self.ttl_ms / 3000)
            try:
                renewed = await self.renew()
            except Exception as exc:  # Redis away for a moment: try again next period
                raise_if_cancelled(exc)
                continue
            if not renewed:
                self.lost.set()
                return
