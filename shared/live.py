"""Live session state and progress events in Redis. Postgres stays the record."""

from __future__ import annotations

import json
from typing import Any

from redis.asyncio import Redis

from shared.constants import LIVE_STATE_TTL_S
from shared.keys import Keys
from shared.redis_batches import RedisBatches, Scripted, send


def state_key(prefix: str, session_id: str) -> str:
    return Keys(prefix).session_state(session_id)


def events_channel(prefix: str, session_id: str) -> str:
    return Keys(prefix).session_events(session_id)


# Two aggregators may finish their writes out of order: never let an older state (less
# progress, or still processing) overwrite a newer one.
_NEWER_WINS = """
local cur = redis.call('get', KEYS[1])
if cur then
  local old = cjson.decode(cur)
  if old['status'] ~= 'processing' then return 0 end
  if ARGV[2] == 'processing' and tonumber(old['progress']) > tonumber(ARGV[3]) then return 0 end
end
redis.call('set', KEYS[1], ARGV[1], 'EX', ARGV[4])
redis.call('publish', KEYS[2], ARGV[1])
return 1
"""


async def publish_state(
    redis: Redis | RedisBatches, prefix: str, session_id: str, state: dict[str, Any]
) -> None:
    """Store the live state (24 h TTL) and announce it, unless a newer state is already there."""
    await publish_states(redis, prefix, [(session_id, state)])


async def publish_states(
    redis: Redis | RedisBatches, prefix: str, states: list[tuple[str, dict[str, Any]]]
) -> None:
    """`publish_state` for many sessions in one round trip."""
    if not states:
        return
    await send(
        redis,
        [
            Scripted(
                _NEWER_WINS,
                (state_key(prefix, session_id), events_channel(prefix, session_id)),
                (
                    json.dumps(state, default=str),
                    state["status"],
                    state["progress"],
                    LIVE_STATE_TTL_S,
                ),
            )
            for session_id, state in states
        ],
    )


async def read_state(redis: Redis, prefix: str, session_id: str) -> dict[str, Any] | None:
    raw = await redis.get(state_key(prefix, session_id))
    return json.loads(raw) if raw else None


async def announce_review(
    redis: Redis, prefix: str, session_id: str, review: dict[str, Any]
) -> None:
    """Tell the session's event streams that its verdict was reviewed (they re-read it)."""
    await redis.publish(events_channel(prefix, session_id), json.dumps({"review": review}))
