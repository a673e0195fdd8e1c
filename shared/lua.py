"""Lua scripts run by SHA (EVALSHA), so a script's text crosses the wire once per client."""

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
