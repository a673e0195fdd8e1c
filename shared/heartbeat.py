"""Worker heartbeats in Redis: capabilities every 30 s, gone after 90 s of silence."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import time
from collections.abc import AsyncIterator

from redis.asyncio import Redis

from shared.background import in_background
from shared.keys import Keys

HEARTBEAT_EVERY_S = 30
# Three missed beats and the worker counts as offline.
OFFLINE_AFTER_S = 90


def worker_key(prefix: str, worker_id: str) -> str:
    return Keys(prefix).worker(worker_id)


def worker_id() -> str:
    """This process's identity: host (the container, under compose) and pid."""
    return f"{socket.gethostname()}-{os.getpid()}"


class Heartbeat:
    def __init__(
        self, redis: Redis, prefix: str, worker_id: str, component: str, concurrency: int
    ) -> None:
        self._redis = redis
        self._key = worker_key(prefix, worker_id)
        self._info = {"worker_id": worker_id, "component": component, "concurrency": concurrency}

    async def beat(self) -> None:
        body = json.dumps({**self._info, "seen_at": time.time()})
        await self._redis.set(self._key, body, ex=OFFLINE_AFTER_S)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        try:
            async with in_background(self._loop(), "heartbeat"):
                yield
        finally:
            with contextlib.suppress(Exception):  # gone by its TTL otherwise
                await self._redis.delete(self._key)

    async def _loop(self) -> None:
        while True:
            with contextlib.suppress(Exception):  # Redis away: the next beat will do
                await self.beat()
            await asyncio.sleep(HEARTBEAT_EVERY_S)


async def live_workers(redis: Redis, prefix: str) -> list[dict[str, object]]:
    """Every worker that beat within the last OFFLINE_AFTER_S seconds."""
    keys = [k async for k in redis.scan_iter(match=Keys(prefix).workers, count=500)]
    values = await redis.mget(keys) if keys else []
    return [json.loads(v) for v in values if v]
