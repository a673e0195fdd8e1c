"""The attempts workers make at a session's components, kept in Redis for a day so the
console's timeline shows when each started and how it ended (retried, dead-lettered) — the
record in Postgres keeps only the attempt whose result was applied.

Best effort: an attempt not written (Redis away) is only missing from a timeline.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Literal

from redis.asyncio import Redis

from shared.constants import LIVE_STATE_TTL_S
from shared.keys import Keys

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
    await record_many(redis, keys, [(session_id, component, a)])


async def record_many(
    redis: Redis, keys: Keys, entries: Sequence[tuple[str, str, Attempt]]
) -> None:
    """`record` for many attempts (session, component, attempt) in one round trip."""
    async with redis.pipeline(transaction=False) as pipe:
        for session_id, component, a in entries:
            key = keys.attempts(session_id, component)
            pipe.rpush(key, json.dumps(asdict(a)))
            pipe.ltrim(key, -MAX_KEPT, -1)
            pipe.pexpire(key, LIVE_STATE_TTL_S * 1000)
        await pipe.execute()


class AttemptLog:
    """Writes attempts off the tasks' path: whatever was added while a write was on its way
    goes in the next one, so a busy worker writes many attempts per round trip and a task
    never waits for its own entry. Best effort, like the record itself."""

    def __init__(self, redis: Redis, keys: Keys) -> None:
        self._redis = redis
        self._keys = keys
        self._pending: list[tuple[str, str, Attempt]] = []
        self._writing: asyncio.Future[None] | None = None

    def add(self, session_id: str, component: str, attempt: Attempt) -> None:
        self._pending.append((session_id, component, attempt))
        if self._writing is None or self._writing.done():
            self._writing = asyncio.ensure_future(self._write())

    async def _write(self) -> None:
        while self._pending:
            batch, self._pending = self._pending, []
            with contextlib.suppress(Exception):  # Redis away: only a timeline entry missing
                await record_many(self._redis, self._keys, batch)

    async def flush(self) -> None:
        """Return once everything added so far is written (or given up)."""
        if self._writing is not None:
            await asyncio.shield(self._writing)


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
