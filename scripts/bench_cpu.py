"""Where the CPU goes: CPU time per session of each kind of process, under load. A benchmark.

    flock /tmp/verdict-heavy.lock python scripts/bench_cpu.py [--sessions 3000] [--plan 6]

The pipeline as in `bench.py` (API, --aggregators, one no-op worker per analysis component
at concurrency 8, prefetch 10) in a fresh world on the loopback services. After a warm-up,
--sessions sessions of --plan are POSTed --in-flight at a time until every one is final.
Each process's user + system CPU time is read from /proc before and after, grouped by
kind: the pipeline's own processes by their command line, RabbitMQ, Postgres and Redis by
name (all of their processes on the machine: run it on a quiet machine), and this client.

Prints sessions per second and, per kind, CPU seconds and milliseconds per session, and the
resident memory of the largest API, aggregator and worker process at the start and the end
of the measured run (flat over a long run: `--sessions 100000`).
Linux only (/proc).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import asyncpg
import benchlib as lib
import click


def kind_of(comm: str, cmdline: str, own_pid: int, pid: int) -> str | None:
    """Which kind of process this is, or None for one that is not counted. Pure."""
    if pid == own_pid:
        return "client"
    if "ops.cli api" in cmdline:
        return "api"
    if "ops.cli aggregator" in cmdline:
        return "aggregator"
    if "bench_worker.py" in cmdline:
        return "worker"
    if comm == "beam.smp":
        return "rabbitmq"
    if comm.startswith("postgres") or cmdline.startswith("postgres"):
        return "postgres"
    if comm.startswith("redis-server"):
        return "redis"
    return None


def cpu_seconds(stat: str, ticks_per_s: int) -> float:
    """User + system time of a /proc/PID/stat line. Pure."""
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / ticks_per_s


def rss_mib(status: str) -> float:
    """Resident memory (VmRSS) of a /proc/PID/status text, in MiB; 0 when absent. Pure."""
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def per_kind(before: Mapping[str, float], after: Mapping[str, float], sessions: int) -> dict:
    """CPU seconds and ms per session of each kind between two snapshots. Pure."""
    return {
        kind: {
            "cpu_s": round(after[kind] - before.get(kind, 0.0), 2),
            "ms_per_session": round(1000 * (after[kind] - before.get(kind, 0.0)) / sessions, 2),
        }
        for kind in sorted(after)
    }


# The project's own processes, whose memory must stay flat over a long run.
OWN_KINDS = ("api", "aggregator", "worker")


def snapshot() -> tuple[dict[str, float], dict[str, float]]:
    """CPU seconds used so far by each kind of process (exited ones are not counted), and
    the largest resident memory (MiB) of one process of each of the project's own kinds."""
    ticks = os.sysconf("SC_CLK_TCK")
    totals: dict[str, float] = {}
    largest: dict[str, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            comm = (entry / "comm").read_text().strip()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            stat = (entry / "stat").read_text()
            status = (entry / "status").read_text()
        except OSError:  # gone meanwhile
            continue
        kind = kind_of(comm, cmdline, os.getpid(), int(entry.name))
        if kind is not None:
            totals[kind] = totals.get(kind, 0.0) + cpu_seconds(stat, ticks)
        if kind in OWN_KINDS:
            largest[kind] = max(largest.get(kind, 0.0), rss_mib(status))
    return totals, largest


async def run(sessions: int, plan: int, in_flight: int, aggregators: int) -> dict[str, Any]:
    world = lib.new_world("cpu")
    await lib.create_world(world)
    try:
        with lib.ProcessGroup() as group:
            lib.start_api_and_aggregators(world, group, aggregators)
            lib.start_workers(world, group, lib.NOOP_WORKERS)
            await lib.wait_until_ready(world, group)
            pool = await asyncpg.create_pool(world.database_url, min_size=1, max_size=2)
            try:
                await lib.warm_up(world, pool, plan)
                async with lib.client(world, in_flight) as http:
                    (before, rss_start), started = snapshot(), time.monotonic()
                    gate = asyncio.Semaphore(in_flight)

                    async def one() -> str:
                        async with gate:
                            return (await lib.post_session(http, plan))[0]

                    ids = await asyncio.gather(*(one() for _ in range(sessions)))
                    await lib.wait_all_final(pool, ids, 600)
                    seconds, (after, rss_end) = time.monotonic() - started, snapshot()
                group.check_alive()
            finally:
                await pool.close()
        return {
            "sessions": sessions,
            "plan": plan,
            "in_flight": in_flight,
            "seconds": round(seconds, 2),
            "sessions_per_s": round(sessions / seconds, 1),
            "cpu": per_kind(before, after, sessions),
            "largest_rss_mib": {
                kind: {"start": round(rss_start.get(kind, 0.0), 1), "end": round(mib, 1)}
                for kind, mib in sorted(rss_end.items())
            },
        }
    finally:
        await lib.destroy_world(world)


@click.command()
@click.option("--sessions", default=3000, show_default=True, help="sessions measured")
@click.option("--plan", default=6, show_default=True, help="plan of every session (6: urgent)")
@click.option("--in-flight", default=8, show_default=True, help="concurrent POSTs")
@click.option("--aggregators", default=2, show_default=True, help="as in compose.yaml")
@click.option("--timeout", "timeout_s", default=900, show_default=True, help="hard limit, s")
def main(sessions: int, plan: int, in_flight: int, aggregators: int, timeout_s: int) -> None:
    """CPU time per session of the API, workers, aggregators, RabbitMQ, Postgres and Redis."""
    with lib.terminate_on_signals():
        signal.alarm(timeout_s)
        try:
            result = asyncio.run(run(sessions, plan, in_flight, aggregators))
        finally:
            signal.alarm(0)
    rows = [[k, v["cpu_s"], v["ms_per_session"]] for k, v in result["cpu"].items()]
    click.echo(f"{result['sessions_per_s']} sessions/s ({sessions} in {result['seconds']} s)")
    click.echo(lib.table(["process", "cpu s", "ms per session"], rows))
    memory = [[k, v["start"], v["end"]] for k, v in result["largest_rss_mib"].items()]
    click.echo(lib.table(["largest process", "RSS MiB at start", "at end"], memory))
    click.echo(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
