"""Worker heartbeats: each process announces itself on start and every 30 s (shared/registry.py
says what the records mean and how long they stay)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from importlib import metadata

import structlog

from shared.background import in_background
from shared.house import Shelf
from shared.keys import Keys
from shared.registry import HEARTBEAT_EVERY_S, RECORD_TTL_S, Announcement, encode

log = structlog.get_logger(__name__)

# What a beat asks for: the announcement as of now (capabilities are checked again each time).
Announce = Callable[[], Awaitable[Announcement]]


def worker_id() -> str:
    """This process's identity: host (the container, under compose) and pid."""
    return f"{socket.gethostname()}-{os.getpid()}"


def version() -> str:
    """The installed pipeline's version, announced by every worker."""
    try:
        return metadata.version("verdict-pipeline")
    except metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown"


def announcement(
    component: str,
    concurrency: int,
    input_types: tuple[str, ...],
    capabilities: dict[str, bool] | None = None,
    limits: dict[str, float] | None = None,
) -> Announcement:
    """This process's announcement for one component."""
    return Announcement(
        worker_id=worker_id(),
        host=socket.gethostname(),
        pid=os.getpid(),
        components=(component,),
        input_types=input_types,
        version=version(),
        concurrency=concurrency,
        started_at=time.time(),
        capabilities=capabilities or {},
        limits=limits or {},
    )


def unchanged(said: Announcement) -> Announce:
    """The announcement of a process whose capabilities do not change (the aggregator)."""

    async def announce() -> Announcement:
        return said

    return announce


class Heartbeat:
    """Writes the process's record now and every HEARTBEAT_EVERY_S; marks it stopped on exit."""

    def __init__(
        self,
        shelf: Shelf,
        prefix: str,
        announce: Announce,
        in_flight: Callable[[], int] = lambda: 0,
    ) -> None:
        self._shelf = shelf
        self._prefix = prefix
        self._announce = announce
        self._in_flight = in_flight
        self._last: Announcement | None = None

    async def beat(self) -> None:
        self._last = await self._announce()
        await self._write(self._last, self._in_flight(), None)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        try:
            async with in_background(self._loop(), "heartbeat"):
                yield
        finally:
            if self._last is not None:
                with contextlib.suppress(Exception):  # offline by its silence otherwise
                    await self._write(self._last, 0, time.time())

    async def _write(self, said: Announcement, in_flight: int, stopped_at: float | None) -> None:
        body = encode(said, in_flight, time.time(), stopped_at)
        keys = Keys(self._prefix)
        await self._shelf.put(
            keys.worker(said.worker_id), body, RECORD_TTL_S, listed_in=keys.worker_directory
        )

    async def _loop(self) -> None:
        while True:
            try:
                await self.beat()
            except Exception as exc:  # Redis (or PostgreSQL) away: the next beat will do
                log.warning("heartbeat not written", error=repr(exc))
            await asyncio.sleep(HEARTBEAT_EVERY_S)
