"""Lua scripts run by SHA (EVALSHA), so a script's text crosses the wire once per client.

In pipelines (shared.redis_batches) scripts go as bare EVALSHAs, loaded only when Redis
answers NOSCRIPT: redis-py's own scripts in a pipeline send SCRIPT EXISTS before every
execution, one more round trip each time."""

from __future__ import annotations

import weakref

from redis.asyncio import Redis
from redis.commands.core import AsyncScript

_REGISTERED: weakref.WeakKeyDictionary[Redis, dict[str, AsyncScript]] = weakref.WeakKeyDictionary()


def script(redis: Redis, source: str) -> AsyncScript:
    """The script `source` registered on `redis` (once; later calls reuse it)."""
    scripts = _REGISTERED.setdefault(redis, {})
    if source not in scripts:
        scripts[source] = redis.register_script(source)
    return scripts[source]
