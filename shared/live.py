"""Live session state and progress events: in Redis, or over NOTIFY without it (`Live`).
Postgres stays the record."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from redis.asyncio import Redis

from shared.constants import LIVE_STATE_TTL_S
from shared.keys import Keys
from shared.redis_batches import RedisBatches, Scripted, send

if TYPE_CHECKING:
    from shared.house import House


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


class Live:
    """A session's live news through the process's house (shared/house.py). With Redis the
    state is cached there too (read before PostgreSQL) and announced on the session's
    channel; without it the record is the only state, and each change is announced over
    NOTIFY, so event streams still wake at once instead of at their next poll."""

    def __init__(self, house: House, prefix: str) -> None:
        self.house = house
        self.prefix = prefix

    async def publish_states(self, states: list[tuple[str, dict[str, Any]]]) -> None:
        if self.house.redis is not None:
            await publish_states(self.house.batches or self.house.redis, self.prefix, states)
            return
        await self.house.channels.publish_many(
            (events_channel(self.prefix, sid), _news(state)) for sid, state in states
        )

    async def read_state(self, session_id: str) -> dict[str, Any] | None:
        """The cached state, or None (then the record says)."""
        if self.house.redis is None:
            return None
        return await read_state(self.house.redis, self.prefix, session_id)

    async def forget(self, session_id: str) -> None:
        """Drop the cached state (a session submitted again under its id)."""
        if self.house.redis is not None:
            await self.house.redis.delete(state_key(self.prefix, session_id))

    async def announce_review(self, session_id: str, review: dict[str, Any]) -> None:
        """Tell the session's event streams it was reviewed (they re-read the record). Over
        NOTIFY the decision itself is not sent: any role that may connect may LISTEN."""
        said = {"review": review} if self.house.redis is not None else {"review": "decided"}
        await self.house.channels.publish_many(
            [(events_channel(self.prefix, session_id), json.dumps(said))]
        )

    def subscription(self) -> Any:
        """A subscription for one event stream (subscribe to `events_channel` on it)."""
        return self.house.channels.pubsub(ignore_subscribe_messages=True)


def _news(state: dict[str, Any]) -> str:
    """What a NOTIFY says of a new state: its status and progress, which the worker role may
    read in the record anyway, and nothing else (readers re-read the record)."""
    return json.dumps({"status": state["status"], "progress": state["progress"]})
