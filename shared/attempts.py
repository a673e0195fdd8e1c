"""The attempts workers make at a session's components, kept in Redis for a day so the
console's timeline shows when each started and how it ended (retried, dead-lettered) — the
record in Postgres keeps only the attempt whose result was applied.

Best effort: an attempt not written (Redis away) is only missing from a timeline.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Literal

from redis.asyncio import Redis

from shared.constants import LIVE_STATE_TTL_S
from shared.keys import Keys
from shared.redis_batches import Command, RedisBatches, send

# How an attempt ended: its result reported (`ok`, `failed`), nothing to do (`skipped`: the
# session was final or the result recorded), a retry scheduled, or a dead letter.
AttemptEnd = Literal["ok", "failed", "skipped", "retry", "dead_letter"]
# A task is attempted at most MAX_ATTEMPTS (≤ 10) times, plus lock waits; far above that
# something loops, and the list keeps only its newest entries.
MAX_KEPT = 50


@dataclass(frozen=True)
class Attempt:
    """One run of one task by one worker (times are Unix seconds)."""

    attempt: int
    worker_id: str
    started_at: float
    ended_at: float
    end: AttemptEnd
    detail: str = ""  # the retry delay or the dead letter's reason


async def record(redis: Redis, keys: Keys, session_id: str, component: str, a: Attempt) -> None:
    """Append an attempt to the component's list; the list lives LIVE_STATE_TTL_S seconds."""
    await send(redis, writes_of(keys, session_id, component, a))


def writes_of(keys: Keys, session_id: str, component: str, a: Attempt) -> list[Command]:
    """The Redis writes that append one attempt (newest MAX_KEPT kept, the TTL renewed)."""
    key = keys.attempts(session_id, component)
    return [
        ("RPUSH", key, json.dumps(asdict(a))),
        ("LTRIM", key, -MAX_KEPT, -1),
        ("PEXPIRE", key, LIVE_STATE_TTL_S * 1000),
    ]


class AttemptLog:
    """Writes attempts off the tasks' path (shared.redis_batches): a task never waits for
    its own entry, and a busy worker writes many entries per round trip. Best effort, like
    the record itself."""

    def __init__(self, batches: RedisBatches, keys: Keys) -> None:
        self._batches = batches
        self._keys = keys

    def add(self, session_id: str, component: str, attempt: Attempt) -> None:
        self._batches.add(*writes_of(self._keys, session_id, component, attempt))


async def read(
    redis: Redis, keys: Keys, session_id: str, components: Sequence[str]
) -> dict[str, list[Attempt]]:
    """Every component's recorded attempts, oldest first (components with none left out)."""
    async with redis.pipeline(transaction=False) as pipe:
        for component in components:
            pipe.lrange(keys.attempts(session_id, component), 0, -1)
        lists = await pipe.execute()
    return {
        component: [Attempt(**json.loads(raw)) for raw in entries]
        for component, entries in zip(components, lists, strict=True)
        if entries
    }
