"""Lua scripts run by SHA (EVALSHA), so a script's text crosses the wire once per client."""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

from redis.asyncio import Redis
from redis.commands.core import AsyncScript
from redis.exceptions import NoScriptError

_REGISTERED: weakref.WeakKeyDictionary[Redis, dict[str, AsyncScript]] = weakref.WeakKeyDictionary()


def script(redis: Redis, source: str) -> AsyncScript:
    """The script `source` registered on `redis` (once; later calls reuse it)."""
    scripts = _REGISTERED.setdefault(redis, {})
    if source not in scripts:
        scripts[source] = redis.register_script(source)
    return scripts[source]


async def evalsha_many(
    redis: Redis, source: str, calls: Sequence[tuple[Sequence[str], Sequence[Any]]]
) -> list[Any]:
    """Run the script `source` once per (keys, args) in one round trip; their replies.

    redis-py's own scripts in a pipeline send SCRIPT EXISTS before every execution, one more
    round trip each time. Here the pipeline holds bare EVALSHAs, and the script is loaded
    only when Redis answers that it does not know it (the first use, or after a restart).
    """
    sha = script(redis, source).sha
    for last_try in (False, True):
        async with redis.pipeline(transaction=False) as pipe:
            for keys, args in calls:
                pipe.evalsha(sha, len(keys), *keys, *args)
            try:
                return list(await pipe.execute())
            except NoScriptError:
                if last_try:
                    raise
        await redis.script_load(source)
    raise AssertionError("unreachable")
