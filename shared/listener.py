"""The one LISTEN connection of a process.

Everything a process follows in PostgreSQL's LISTEN/NOTIFY — the job queue's wake-ups
(shared/job_queue.py), the channels of a deployment without Redis (shared/ephemera.py), the
API's tenant-settings changes (shared/tenant_store.py) — arrives on one connection of its
own, outside the pools: a LISTEN needs a connection held for the life of the process, and one
per follower made a pipeline of a dozen processes hold three dozen idle connections of a
server's hundred.

The connection is opened at the first `follow`, asked now and then whether it is still there,
and opened again after a loss with every channel followed again. Nothing sent while it was
away arrives: each follower's `on_gap` runs whenever listening (re)starts, so it can catch up
by reading (the job queue claims every group, the tenant cache forgets what it holds).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import defaultdict
from collections.abc import Callable

import asyncpg
import structlog

from shared.background import raise_if_cancelled

log = structlog.get_logger(__name__)

# Back-off before listening again after the connection was lost or refused.
RELISTEN_S = 1.0
# The connection is asked this often whether it is still there (a peer gone without a reset,
# a partition: nothing else would tell), and must answer within LIVENESS_TIMEOUT_S.
LIVENESS_EVERY_S = 15.0
LIVENESS_TIMEOUT_S = 5.0

Callback = Callable[[str], None]


class Listener:
    """Follow PostgreSQL channels on one connection: `follow(channel, callback)` hands each
    notification's payload to `callback`; `connected` is set while listening."""

    def __init__(self, database_url: str) -> None:
        self._database_url = database_url
        self._callbacks: defaultdict[str, list[Callback]] = defaultdict(list)
        self._gaps: dict[Callback, Callable[[], None]] = {}
        self._conn: asyncpg.Connection | None = None
        self._changing = asyncio.Lock()  # one LISTEN/UNLISTEN or (re)connection at a time
        self._running: asyncio.Task[None] | None = None
        self._closed = False
        self.connected = asyncio.Event()

    async def follow(
        self, channel: str, callback: Callback, on_gap: Callable[[], None] | None = None
    ) -> None:
        """From now on (once connected) hand `channel`'s payloads to `callback`; `on_gap`
        runs each time listening starts again after messages may have been missed."""
        if on_gap is not None:
            self._gaps[callback] = on_gap
        async with self._changing:
            first = channel not in self._callbacks
            self._callbacks[channel].append(callback)
            if first and self._conn is not None:
                with contextlib.suppress(*_LOST):  # the loop listens again, on every channel
                    await self._conn.add_listener(channel, self._dispatch)
        if self._running is None and not self._closed:
            self._running = asyncio.create_task(self._listen(), name="postgres listener")

    async def unfollow(self, channel: str, callback: Callback) -> None:
        self._gaps.pop(callback, None)
        async with self._changing:
            held = self._callbacks.get(channel)
            if held is None or callback not in held:
                return
            held.remove(callback)
            if not held:
                del self._callbacks[channel]
                if self._conn is not None:
                    with contextlib.suppress(*_LOST):
                        await self._conn.remove_listener(channel, self._dispatch)

    async def close(self) -> None:
        self._closed = True
        if self._running is not None:
            self._running.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._running
            self._running = None

    def _dispatch(self, _conn: object, _pid: int, channel: str, payload: str) -> None:
        for callback in list(self._callbacks.get(channel, ())):
            try:
                callback(payload)
            except Exception:  # one follower's fault is not every follower's
                log.exception("a notification's follower failed", channel=channel)

    async def _listen(self) -> None:
        """Listen until cancelled or closed; again after a loss, on every channel followed by
        then."""
        while not self._closed:
            conn: asyncpg.Connection | None = None
            try:
                conn = await asyncpg.connect(self._database_url)
                lost = asyncio.Event()
                conn.add_termination_listener(lambda _c, lost=lost: lost.set())
                async with self._changing:
                    for channel in self._callbacks:
                        await conn.add_listener(channel, self._dispatch)
                    self._conn = conn
                self.connected.set()
                for on_gap in list(self._gaps.values()):
                    try:
                        on_gap()
                    except Exception:  # as in _dispatch: one follower's fault stays its own
                        log.exception("a follower's catching up failed")
                await self._until_lost(conn, lost)
            except Exception as exc:  # away, restarting, refused: listen again, never die
                raise_if_cancelled(exc)
                log.warning("postgres listener lost", error=repr(exc))
            finally:
                self.connected.clear()
                self._conn = None
                if conn is not None:
                    with contextlib.suppress(Exception):
                        await conn.close(timeout=2)
            await asyncio.sleep(RELISTEN_S)

    async def _until_lost(self, conn: asyncpg.Connection, lost: asyncio.Event) -> None:
        """Return once the connection is known lost: closed, or silent to a liveness query
        (asked between LISTENs: a connection runs one statement at a time)."""
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(LIVENESS_EVERY_S):
                    await lost.wait()
                return
            try:
                async with self._changing:
                    await conn.fetchval("SELECT 1", timeout=LIVENESS_TIMEOUT_S)
            except Exception as exc:
                raise_if_cancelled(exc)
                log.warning("postgres listener silent: listening again", error=repr(exc))
                return


# What a LISTEN on a connection being lost may raise; the loop then listens again. A server
# shutting down sends its reason before it closes: a statement begun while the connection
# still reads that error fails with InternalClientError ("another operation is in progress").
_LOST: tuple[type[BaseException], ...] = (
    OSError,
    asyncpg.InterfaceError,
    asyncpg.InternalClientError,
    asyncpg.PostgresError,
)
