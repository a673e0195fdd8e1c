"""What a killed run leaves behind is found by its owner's mark and stopped (scripts/owned.py),
and a run stopped by a signal still runs its `finally` blocks."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import owned
import pytest


def _sleeper(env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen(["sleep", "60"], env={**os.environ, **(env or {})})


def test_the_mark_is_read_from_a_process_environment():
    environ = b"PATH=/usr/bin\0VERDICT_OWNER=123:456\0HOME=/root\0"
    assert owned.mark_of(environ) == "123:456"
    assert owned.mark_of(b"PATH=/usr/bin\0HOME=/root\0") is None


def test_an_owner_is_alive_only_as_the_very_process_it_was():
    assert owned.owner_alive(owned.owner_mark()[owned.OWNER])
    pid = os.getpid()
    assert not owned.owner_alive(f"{pid}:0")  # the pid, but another start time: reused
    assert not owned.owner_alive("not-a-pid:1")


def test_a_sweep_stops_what_a_dead_owner_left_and_nothing_else():
    owner = _sleeper()
    left = _sleeper(owned.owner_mark(owner.pid))
    kept = _sleeper(owned.owner_mark())  # its owner (this test) lives
    bystander = _sleeper()  # no mark at all
    try:
        owner.kill()
        owner.wait()
        killed = owned.sweep()
        assert left.pid in killed
        assert left.wait(timeout=5) == -signal.SIGKILL
        assert kept.pid not in killed and bystander.pid not in killed
        assert kept.poll() is None and bystander.poll() is None
    finally:
        for process in (owner, left, kept, bystander):
            process.kill()
            process.wait()


@pytest.mark.timeout(30)
def test_a_run_stopped_by_sigterm_runs_its_finally_blocks(tmp_path: Path):
    """As chaos.py and the benchmarks run: an asyncio main under terminate_on_signals."""
    done = tmp_path / "stopped"
    script = textwrap.dedent(
        f"""
        import asyncio, sys
        sys.path.insert(0, {str(Path(owned.__file__).parent)!r})
        import owned

        async def main():
            try:
                print("up", flush=True)
                await asyncio.sleep(60)
            finally:
                await asyncio.sleep(0.1)  # an await of the clean-up still runs
                open({str(done)!r}, "w").write("stopped")

        with owned.terminate_on_signals():
            asyncio.run(main())
        """
    )
    with subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True) as run:
        try:
            assert run.stdout is not None and run.stdout.readline().strip() == "up"
            run.send_signal(signal.SIGTERM)
            assert run.wait(timeout=20) == 128 + signal.SIGTERM
        finally:
            run.kill()
    deadline = time.monotonic() + 5
    while not done.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert done.read_text() == "stopped"
