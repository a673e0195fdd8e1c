#!/usr/bin/env python3
"""What a script starts for itself (a pipeline, a RabbitMQ node) names its owner, so what a
killed run left behind can be found and stopped.

A run that ends normally, or on SIGTERM, SIGHUP or its hard timeout (`terminate_on_signals`),
stops what it started in its `finally` blocks. One that is killed outright (SIGKILL: a
test's timeout, an interrupted CI) cannot: its pipeline runs on in a session of its own and
its RabbitMQ node is detached, both left to load the next run on the same two cores. So each
carries `VERDICT_OWNER=<pid>:<start time>` of the process that started it in its
environment (inherited by everything it starts in turn), and `sweep()` kills every process
whose owner is gone (the start time tells a reused pid apart):

    python scripts/owned.py          # scripts/test runs it before the tests; chaos.py too

Linux only (/proc). Processes of a live owner, every process without the mark, and the
machine's Erlang port mapper (epmd, which other nodes use too) are left alone.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

OWNER = "VERDICT_OWNER"


def start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (/proc/PID/stat), or None when
    there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]


def owner_mark(pid: int | None = None) -> dict[str, str]:
    """The environment entry that names `pid` (default: this process) as the owner."""
    pid = os.getpid() if pid is None else pid
    return {OWNER: f"{pid}:{start_time(pid)}"}


def owner_alive(mark: str) -> bool:
    """Whether the process a mark names still runs (the same process, not a reused pid)."""
    pid, _, started = mark.partition(":")
    return pid.isdigit() and start_time(int(pid)) == started


def mark_of(environ: bytes) -> str | None:
    """The owner mark in a /proc/PID/environ text, or None. Pure."""
    prefix = f"{OWNER}=".encode()
    for entry in environ.split(b"\0"):
        if entry.startswith(prefix):
            return entry[len(prefix) :].decode(errors="replace")
    return None


def orphans() -> list[int]:
    """Processes whose owner is gone."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            mark = mark_of((entry / "environ").read_bytes())
            # The Erlang port mapper a node started, if none ran, serves every node since.
            shared = (entry / "comm").read_text().strip() == "epmd"
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if shared:
            continue
        if mark is not None and not owner_alive(mark):
            found.append(int(entry.name))
    return found


def sweep() -> list[int]:
    """Kill every process whose owner is gone; the pids killed."""
    killed = []
    for pid in orphans():
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            continue
        killed.append(pid)
    return killed


@contextmanager
def terminate_on_signals() -> Iterator[None]:
    """Turn SIGTERM, SIGHUP and SIGALRM (a hard timeout) into SystemExit, so `finally`
    blocks stop the processes a run started and remove its worlds."""

    def leave(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    previous = {s: signal.signal(s, leave) for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGALRM)}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


if __name__ == "__main__":
    gone = sweep()
    if gone:
        print(f"stopped {len(gone)} process(es) left by killed runs: {gone}", file=sys.stderr)
