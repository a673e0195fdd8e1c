"""The analysis pool: a call past its timeout is killed, its process replaced, the loop free."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import threading
import time
from collections.abc import AsyncIterator

import pytest

from shared.errors import (
    AnalyserFailed,
    AnalysisCrashed,
    AnalysisTimeout,
    RetryableAnalysisError,
)
from tests.hostile import backtrack, buggy, die, refuse
from workers.analysis.errors import UnreadableMedia
from workers.isolation import AnalysisPool, stopped


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def until(check, timeout: float = 10.0) -> None:
    """Wait for `check()` to hold, polling; fail after `timeout` s."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.05)


@pytest.fixture
async def pool() -> AsyncIterator[AnalysisPool]:
    one = AnalysisPool(1)  # one process: the call after a timeout needs its replacement
    await one.start()
    yield one
    await one.close()


async def test_a_call_past_its_timeout_is_killed_and_the_next_call_runs(pool):
    """The timeout raises AnalysisTimeout; the process is killed and a new one runs the next
    call at once (well under the 2 s a worker may take to be back)."""
    before = await pool.run(os.getpid, timeout_s=5)
    with pytest.raises(AnalysisTimeout, match=r"longer than 0\.5 s"):
        await pool.run(backtrack, timeout_s=0.5)
    timed_out = time.monotonic()
    after = await pool.run(os.getpid, timeout_s=5)
    assert time.monotonic() - timed_out < 1.5
    assert after != before
    await until(lambda: not alive(before))


async def test_the_event_loop_runs_while_a_call_spins(pool):
    """The spinning call holds its own process's GIL, not the caller's: the loop keeps ticking."""
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.05)
            ticks += 1

    ticker = asyncio.create_task(tick())
    try:
        with pytest.raises(AnalysisTimeout):
            await pool.run(backtrack, timeout_s=1.0)
    finally:
        ticker.cancel()
    assert ticks >= 10  # ~20 ticks in 1 s; a frozen loop would not tick until the end


async def test_a_cancelled_call_kills_its_process(pool):
    """Cancelling the caller (a task timeout, a lost lock) kills the analysis it waits for."""
    pid = await pool.run(os.getpid, timeout_s=5)
    call = asyncio.create_task(pool.run(backtrack, timeout_s=60))
    await asyncio.sleep(0.3)  # the call is running in the child
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    await until(lambda: not alive(pid))
    assert await pool.run(os.getpid, timeout_s=5) != pid


async def test_an_analysis_error_reaches_the_caller_as_itself(pool):
    """An error raised in the child keeps its class, so the retry policy can classify it."""
    with pytest.raises(UnreadableMedia, match="does not exist"):
        await pool.run(refuse, timeout_s=5)


async def test_an_analysers_own_error_is_a_final_analysis_failure(pool):
    """A bug an input reaches (here a ValueError) is AnalyserFailed: not retried, since the
    same function fails on the same input again, and reported in user terms."""
    from workers.reasons import user_reason
    from workers.retry import GiveUp, decide

    with pytest.raises(AnalyserFailed, match="buggy failed") as caught:
        await pool.run(buggy, "not a number", timeout_s=5)
    decision = decide(caught.value, 1, 3, 100)
    assert isinstance(decision, GiveUp) and not decision.replayable
    assert user_reason(caught.value) == "the analysis could not process this input"


async def test_a_child_that_dies_is_an_analysis_crash(pool):
    """A child killed mid-call (a crash, the OOM killer) fails the call, and the pool recovers."""
    with pytest.raises(AnalysisCrashed, match="exit code 3"):
        await pool.run(die, timeout_s=5)
    assert await pool.run(os.getpid, timeout_s=5) > 0


async def test_children_exit_once_the_process_owning_the_pool_is_gone():
    """A worker killed outright leaves no child spinning: each child watches its owner."""
    owner = await asyncio.create_subprocess_exec("sleep", "60")
    pool = AnalysisPool(1, owner=owner.pid)
    try:
        child = await pool.run(os.getpid, timeout_s=5)
        spinning = asyncio.create_task(pool.run(backtrack, timeout_s=60))
        await asyncio.sleep(0.3)  # the call is running in the child
        owner.kill()
        await owner.wait()
        await until(lambda: not alive(child), timeout=5)
        with pytest.raises(AnalysisCrashed):
            await spinning
    finally:
        await pool.close()


async def test_a_pool_whose_idle_child_died_is_replaced(pool):
    """pebble gives a pool up when an idle child dies; the next calls run on a new pool."""
    child = await pool.run(os.getpid, timeout_s=5)
    os.kill(child, signal.SIGKILL)
    await until(lambda: not alive(child))
    deadline = time.monotonic() + 10
    while True:  # a call racing the breakage may be told to retry, as a task would be
        with contextlib.suppress(RetryableAnalysisError):
            assert await pool.run(os.getpid, timeout_s=5) != child
            break
        assert time.monotonic() < deadline


class _JoinThatHangs:
    """A stopped pool whose join never returns (pebble's join of a stopped pool takes no
    timeout): the thread that calls it stays blocked until the test releases it."""

    def __init__(self) -> None:
        self.release = threading.Event()

    def join(self) -> None:
        self.release.wait(30)


async def test_closing_never_waits_without_bound_on_a_pool_that_will_not_join():
    pool = _JoinThatHangs()
    start = time.monotonic()
    await stopped(pool, 0.3)  # type: ignore[arg-type]
    assert time.monotonic() - start < 2
    pool.release.set()  # the daemon thread then ends; its late answer goes nowhere
    await asyncio.sleep(0.05)


async def test_a_closed_pool_has_no_process_left():
    pool = AnalysisPool(2)
    await pool.start()
    children = {p.pid for p in pool._pool._pool_manager.worker_manager.workers.values()}
    await pool.close()
    for pid in children:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            await asyncio.sleep(0.05)
        else:
            pytest.fail(f"analysis process {pid} still alive after close")
