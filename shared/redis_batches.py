"""A process's Redis commands sent in batches: whatever was issued while a pipeline was on
its way goes in the next one, so an idle process sends each command at once and a busy one
many per round trip (on loopback TCP each round trip costs both processes a system call that
runs the peer's network stack too: the commands themselves are cheap).

Two kinds of command: `add` for writes nothing waits for, sent off the caller's path and
given up when Redis cannot take them (what relies on one must survive its loss: an attempt
missing from a timeline; a lock's `done` marker that expires by its TTL instead); `call` for
a command whose reply the caller awaits, which raises what the connection or Redis raised.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import structlog
from redis.asyncio import Redis
from redis.exceptions import NoScriptError

from shared.lua import script

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class Scripted:
    """A Lua script's run, sent as EVALSHA (shared.lua)."""

    source: str
    keys: tuple[str, ...]
    args: tuple[Any, ...]


# A plain command (`("RPUSH", key, value)`) or a script's run.
Command = tuple[Any, ...] | Scripted


async def send_all(redis: Redis, commands: Sequence[Command]) -> list[Any]:
    """Every command in one pipeline, their replies in order (a command Redis refused: its
    error, as a value). Commands of a script Redis does not know (first use, or after a
    restart) are sent again once it is loaded. Raises what the connection raised."""
    replies = await _pipelined(redis, commands)
    unknown = [i for i, r in enumerate(replies) if isinstance(r, NoScriptError)]
    if unknown:
        again = [commands[i] for i in unknown]
        for source in {c.source for c in again if isinstance(c, Scripted)}:
            await redis.script_load(source)
        for i, reply in zip(unknown, await _pipelined(redis, again), strict=True):
            replies[i] = reply
    return replies


async def _pipelined(redis: Redis, commands: Iterable[Command]) -> list[Any]:
    async with redis.pipeline(transaction=False) as pipe:
        for command in commands:
            if isinstance(command, Scripted):
                sha = script(redis, command.source).sha
                pipe.evalsha(sha, len(command.keys), *command.keys, *command.args)
            else:
                pipe.execute_command(*command)
        return list(await pipe.execute(raise_on_error=False))


class RedisBatches:
    """Sends what it is given, in order, one pipeline at a time."""

    def __init__(self, redis: Redis) -> None:
        self._redis = redis
        # Each command with the future of its caller (None: nobody waits for it).
        self._pending: list[tuple[Command, asyncio.Future[Any] | None]] = []
        self._sending: asyncio.Future[None] | None = None

    def add(self, *commands: Command) -> None:
        """Send these writes soon; nobody waits for them (best effort)."""
        self._pending.extend((c, None) for c in commands)
        self._send_soon()

    async def call(self, command: Command) -> Any:
        """Send this command with the next batch and return its reply."""
        reply: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending.append((command, reply))
        self._send_soon()
        return await reply

    def _send_soon(self) -> None:
        if self._sending is None or self._sending.done():
            self._sending = asyncio.ensure_future(self._send())

    async def _send(self) -> None:
        while self._pending:
            batch, self._pending = self._pending, []
            try:
                replies = await send_all(self._redis, [c for c, _ in batch])
            except Exception as exc:  # Redis away: callers learn it, writes are given up
                log.debug("redis batch not sent", commands=len(batch), error=repr(exc))
                replies = [exc] * len(batch)
            for (_, waiting), reply in zip(batch, replies, strict=True):
                if waiting is None or waiting.done():  # nobody waits, or the caller left
                    continue
                if isinstance(reply, Exception):
                    waiting.set_exception(reply)
                else:
                    waiting.set_result(reply)

    async def flush(self) -> None:
        """Return once everything given so far is sent (or given up)."""
        if self._sending is not None:
            await asyncio.shield(self._sending)


async def send(to: Redis | RedisBatches, commands: Sequence[Command]) -> list[Any]:
    """`commands`' replies, in one round trip of their own (a client) or with the process's
    other commands (batches); the first command Redis refused is raised."""
    if isinstance(to, RedisBatches):
        return list(await asyncio.gather(*(to.call(c) for c in commands)))
    replies = await send_all(to, commands)
    refused = next((r for r in replies if isinstance(r, Exception)), None)
    if refused is not None:
        raise refused
    return replies
