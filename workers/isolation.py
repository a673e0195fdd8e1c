"""Analysis isolation: CPU-bound analysers run in child processes that a timeout really ends.

A thread cannot be stopped, and Python's `re` holds the GIL: analysis run in a thread of the
worker could freeze its event loop, and with it the task timeout, the lock watchdog and the
heartbeat. Here each call runs in a pebble process pool instead; a call that runs past its
timeout, or whose caller is cancelled, has its process killed, and the pool starts another.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import signal
import threading
from collections.abc import Callable, Sequence
from concurrent.futures.process import BrokenProcessPool
from multiprocessing.context import ForkServerContext
from typing import Any, TypeVar

import pebble
import structlog

from shared.errors import (
    AnalyserFailed,
    AnalysisCrashed,
    AnalysisTimeout,
    RetryableAnalysisError,
    VerdictError,
)

log = structlog.get_logger(__name__)

T = TypeVar("T")

# Imported once by the fork server, for every child it forks: the module the `verdict`
# script imports (multiprocessing re-runs the main script in every child; with its import
# preloaded, a replacement child is ready in about 0.1 s instead of 0.5 s), and the
# analysers with their lexicons: all of them by default (the API), a worker's own otherwise
# (workers.warm). Anything more would only slow the server's start.
MAIN = "ops.cli"
PRELOAD = ("workers.warm_analysers", MAIN)
# How often a child checks that the process owning its pool is alive.
OWNER_CHECK_S = 1.0
# Seconds a closing pool waits for its processes and its threads; past that it is left to
# end with this process (each child follows its owner), so a stop never hangs on it.
CLOSE_S = 5.0


class AnalysisPool:
    """Runs module-level functions in child processes; a call is killed at its timeout."""

    def __init__(
        self, processes: int, owner: int | None = None, preload: Sequence[str] = PRELOAD
    ) -> None:
        """`owner`: the process whose death ends the children (default: this one); `preload`:
        the modules the fork server imports (one server per process: the first pool to start
        it decides, so a process of several components passes each pool their union)."""
        self._processes = processes
        self._owner = owner or os.getpid()
        self._preload = tuple(preload)
        # Nothing starts here: the processes start on `start()` or the first `run()`.
        self._pool = self._new_pool()
        self._launch: asyncio.Future[pebble.ProcessFuture[bool]] | None = None
        self._started: asyncio.Future[None] | None = None
        self._renewing = asyncio.Lock()

    def _new_pool(self) -> pebble.ProcessPool:
        return pebble.ProcessPool(
            max_workers=self._processes,
            initializer=follow_owner,
            initargs=(self._owner,),
            context=fork_server(self._preload),
        )

    async def start(self) -> None:
        """Start the processes and wait until one is ready (only the first call starts them)."""
        if self._started is None:
            self._started = asyncio.ensure_future(self._start())
        await asyncio.shield(self._started)

    async def _start(self) -> None:
        # The first start launches the fork server and forks: off the event loop.
        self._launch = asyncio.ensure_future(asyncio.to_thread(self._pool.schedule, ready_check))
        ready = await asyncio.shield(self._launch)
        await asyncio.wrap_future(ready)

    async def run(self, fn: Callable[..., T], *args: Any, timeout_s: float) -> T:
        """`fn(*args)` in a child process. AnalysisTimeout after `timeout_s`, counted from this
        call (a wait for a free process included); the child is then killed and replaced."""
        await self.start()
        await self._renew_if_broken()
        running = asyncio.wrap_future(self._pool.schedule(fn, args=args))
        try:
            done, _ = await asyncio.wait({running}, timeout=timeout_s)
        finally:
            running.cancel()  # a no-op once done; else pebble kills the child (cancelled too)
        if not done:
            raise AnalysisTimeout(timeout_s)
        try:
            return running.result()
        except pebble.ProcessExpired as exc:
            raise AnalysisCrashed(f"analysis process died with exit code {exc.exitcode}") from exc
        except BrokenProcessPool as exc:  # it broke under this call: the next runs on a new one
            raise RetryableAnalysisError("analysis processes are restarting") from exc
        except VerdictError:
            raise
        except Exception as exc:  # the analyser's own bug on this input: retrying cannot help
            raise AnalyserFailed(f"{fn.__name__} failed: {exc!r}") from exc

    async def _renew_if_broken(self) -> None:
        """pebble gives a pool up for good when one of its idle children dies (the OOM killer,
        a stray signal): replace it, or the worker would fail every task from then on."""
        async with self._renewing:
            if self._pool.active:
                return
            log.warning("analysis processes broken: starting new ones")
            broken, self._pool = self._pool, self._new_pool()
            self._started = self._launch = None
            broken.stop()
            await stopped(broken, CLOSE_S)
            await self.start()

    async def close(self) -> None:
        """Stop every child (a running call is abandoned); the pool cannot be used again."""
        if self._started is not None:
            self._started.cancel()
        if self._launch is not None:  # a launch under way ends first, or its processes stay
            launched = asyncio.gather(self._launch, return_exceptions=True)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(CLOSE_S):
                    await launched
        self._pool.stop()
        await stopped(self._pool, CLOSE_S)


async def stopped(pool: pebble.ProcessPool, within_s: float) -> None:
    """Wait for a stopped pool to join, at most `within_s`. pebble's join of a stopped pool
    takes no timeout, and in the default executor a join that never ends would hold the
    process at exit; here it runs in a daemon thread, and one too slow is said, then left."""
    loop = asyncio.get_running_loop()
    joined = loop.create_future()

    def done() -> None:
        if not joined.done():  # not given up on already
            joined.set_result(None)

    def join() -> None:
        pool.join()
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody waits
            loop.call_soon_threadsafe(done)

    threading.Thread(target=join, name="analysis-pool-join", daemon=True).start()
    try:
        async with asyncio.timeout(within_s):
            await joined
    except TimeoutError:
        log.error("analysis processes did not stop in time: left to end", within_s=within_s)


def fork_server(preload: Sequence[str] = PRELOAD) -> ForkServerContext:
    """Children forked from a fork server: a clean single-threaded process that has loaded
    what every child needs (forking the threaded worker itself is unsafe)."""
    context = multiprocessing.get_context("forkserver")
    assert isinstance(context, ForkServerContext)
    context.set_forkserver_preload(list(preload))
    return context


def follow_owner(owner: int) -> None:
    """Run in each new child: exit once `owner` is gone. The children are the fork server's,
    so a worker killed outright (SIGKILL, the OOM killer) would leave a child spinning on
    hostile input for hours. A timer signal, not a thread, does the check: a thread would
    wait for the GIL that the spinning regex holds, while `re` runs signal handlers."""

    def check(signum: int, frame: object) -> None:
        try:
            os.kill(owner, 0)
        except ProcessLookupError:
            os._exit(1)

    signal.signal(signal.SIGALRM, check)
    signal.setitimer(signal.ITIMER_REAL, OWNER_CHECK_S, OWNER_CHECK_S)


def ready_check() -> bool:
    """A call that proves a child is up."""
    return True
