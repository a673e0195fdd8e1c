"""Where the CPU goes: CPU time per session of each kind of process, under load. A benchmark.

    flock /tmp/verdict-heavy.lock python scripts/bench_cpu.py [--sessions 3000] [--plan 6]

The pipeline as in `bench.py` (API, --aggregators, one no-op worker per analysis component
at concurrency 8, prefetch 10, or --workers grouped: one process for all four) in a fresh
world on the loopback services. After a warm-up, --sessions sessions of --plan are POSTed
--in-flight at a time until every one is final.
Each process's user + system CPU time is read from /proc before and after, grouped by
kind: the pipeline's own processes by their command line, RabbitMQ, Postgres and Redis by
name (all of their processes on the machine: run it on a quiet machine), and this client.

Prints sessions per second and, per kind, CPU seconds and milliseconds per session, and the
resident memory of the largest API, aggregator and worker process at the start and the end
of the measured run (flat over a long run: `--sessions 100000`).

The same window also counts, per session (docs/capacity.md uses them):
- broker messages: the management API's message_stats of the world's own queues (publish =
  messages routed into a queue, deliver_get, ack, redeliver), summed and per queue;
- Postgres writes: pg_stat_database of the world's database (xact_commit less this client's
  own polling queries, tup_inserted / tup_updated / tup_deleted);
- Redis operations: INFO stats total_commands_processed and INFO commandstats per command
  (server-wide: run it on a quiet Redis).
These counters are published late: RabbitMQ emits queue statistics every
collect_statistics_interval (5 s by default) and a Postgres 15 backend flushes its pending
statistics within 10 s of going idle, so before each count snapshot the script waits
SETTLE_S (outside the CPU window) for both to settle.
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
from urllib.parse import quote

import asyncpg
import benchlib as lib
import click
import httpx
from redis.asyncio import Redis

from topology.broker import management_url

# Seconds to wait before a count snapshot: RabbitMQ's statistics interval (5 s) and a
# Postgres 15 backend's idle flush of its statistics (10 s), with a margin.
SETTLE_S = 12.0
# Message counters of a queue's message_stats kept per session.
BROKER_FIELDS = ("publish", "deliver_get", "ack", "redeliver")
# pg_stat_database counters kept per session.
PG_FIELDS = ("xact_commit", "xact_rollback", "tup_inserted", "tup_updated", "tup_deleted")


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


def delta(before: Mapping[str, float], after: Mapping[str, float]) -> dict[str, float]:
    """after − before of every counter in `after` (one absent before counts from 0). Pure."""
    return {key: after[key] - before.get(key, 0) for key in sorted(after)}


def per_session(counts: Mapping[str, float], sessions: int, places: int = 2) -> dict[str, float]:
    """Each count divided by the sessions, rounded. Pure."""
    return {key: round(value / sessions, places) for key, value in counts.items()}


def queue_counters(queues: list[dict[str, Any]], prefix: str) -> dict[str, dict[str, int]]:
    """BROKER_FIELDS of each queue of the world (named `prefix.…`) from the management API's
    /api/queues answer; a queue that has seen no message yet has no message_stats. Pure."""
    return {
        q["name"]: {f: int(q.get("message_stats", {}).get(f, 0)) for f in BROKER_FIELDS}
        for q in queues
        if q["name"].startswith(prefix + ".")
    }


def broker_per_session(
    before: Mapping[str, Mapping[str, int]], after: Mapping[str, Mapping[str, int]], sessions: int
) -> dict[str, Any]:
    """Messages per session over all the world's queues, and each queue's publishes per
    session (those that saw any), busiest first. Pure."""
    by_queue = {name: delta(before.get(name, {}), counts) for name, counts in after.items()}
    total = {f: sum(d[f] for d in by_queue.values()) for f in BROKER_FIELDS}
    busy = sorted(
        (n for n, d in by_queue.items() if d["publish"]), key=lambda n: -by_queue[n]["publish"]
    )
    return {
        "total": total,
        "per_session": per_session(total, sessions),
        "publish_per_session_by_queue": {
            n: round(by_queue[n]["publish"] / sessions, 3) for n in busy
        },
    }


def pg_per_session(
    before: Mapping[str, int], after: Mapping[str, int], own_queries: int, sessions: int
) -> dict[str, Any]:
    """pg_stat_database counters per session; the commits of this client's own queries on
    the world's database (`own_queries`, each its own transaction) are taken out, and rows
    written is inserted + updated + deleted. Pure."""
    counts = delta(before, after)
    counts["xact_commit"] -= own_queries
    counts["rows_written"] = counts["tup_inserted"] + counts["tup_updated"] + counts["tup_deleted"]
    return {"total": counts, "per_session": per_session(counts, sessions)}


def redis_counters(stats: Mapping[str, Any], commandstats: Mapping[str, Any]) -> dict[str, int]:
    """total_commands_processed and each command's calls (key `cmdstat_get` → `get`), from
    redis-py's parsed INFO stats and INFO commandstats. Pure."""
    counters = {"total": int(stats["total_commands_processed"])}
    for key, value in commandstats.items():
        counters[key.removeprefix("cmdstat_")] = int(value["calls"])
    return counters


def redis_per_session(
    before: Mapping[str, int], after: Mapping[str, int], sessions: int
) -> dict[str, Any]:
    """Redis commands per session, in all and per command (those called, busiest first);
    the INFO calls of the snapshots themselves are taken out. Pure."""
    counts = delta(before, after)
    # Two INFO calls per snapshot: the second snapshot's pair is counted, the first's is not.
    counts["total"] -= 2
    counts["info"] = counts.get("info", 0) - 2
    commands = sorted(
        (k for k in counts if k != "total" and counts[k] > 0), key=lambda k: -counts[k]
    )
    return {
        "total": counts["total"],
        "per_session": round(counts["total"] / sessions, 2),
        "by_command": {k: round(counts[k] / sessions, 2) for k in commands},
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


async def counts(world: lib.World, admin: asyncpg.Connection, redis: Redis) -> dict[str, Any]:
    """Broker, Postgres and Redis counters of the world now (see the module's docstring)."""
    base, vhost, auth = management_url(world.amqp_url, os.environ.get("RABBITMQ_MANAGEMENT_URL"))
    async with httpx.AsyncClient(auth=auth, timeout=10) as http:
        answer = await http.get(
            f"{base}/api/queues/{quote(vhost, safe='')}?columns=name,message_stats"
        )
        answer.raise_for_status()
    row = await admin.fetchrow(
        f"SELECT {', '.join(PG_FIELDS)} FROM pg_stat_database WHERE datname = $1", world.database
    )
    stats, commandstats = await redis.info("stats"), await redis.info("commandstats")
    return {
        "broker": queue_counters(answer.json(), world.prefix),
        "pg": {f: int(row[f]) for f in PG_FIELDS},
        "redis": redis_counters(stats, commandstats),
    }


async def wait_all_final_counted(pool: asyncpg.Pool, timeout_s: float) -> int:
    """Wait until no session of the world is open, as lib.wait_all_final does; how many
    queries that took (each a transaction on the world's database)."""
    deadline, queries = time.monotonic() + timeout_s, 0
    while True:
        queries += 1
        if not await lib.open_sessions(pool):
            return queries
        if time.monotonic() > deadline:
            raise RuntimeError(f"sessions still open after {timeout_s}s")
        await asyncio.sleep(0.1)


async def run(
    sessions: int, plan: int, in_flight: int, aggregators: int, worker_shape: str = "apart"
) -> dict[str, Any]:
    world = lib.new_world("cpu")
    await lib.create_world(world)
    try:
        with lib.ProcessGroup() as group:
            lib.start_api_and_aggregators(world, group, aggregators)
            lib.start_workers(world, group, lib.WORKER_SHAPES[worker_shape])
            await lib.wait_until_ready(world, group)
            pool = await asyncpg.create_pool(world.database_url, min_size=1, max_size=2)
            admin = await asyncpg.connect(world.admin_url)
            redis = Redis.from_url(world.redis_url)
            try:
                await lib.warm_up(world, pool, plan)
                await asyncio.sleep(SETTLE_S)
                counted_before = await counts(world, admin, redis)
                async with lib.client(world, in_flight) as http:
                    (before, rss_start), started = snapshot(), time.monotonic()
                    gate = asyncio.Semaphore(in_flight)

                    async def one() -> str:
                        async with gate:
                            return (await lib.post_session(http, plan))[0]

                    await asyncio.gather(*(one() for _ in range(sessions)))
                    own_queries = await wait_all_final_counted(pool, 600)
                    seconds, (after, rss_end) = time.monotonic() - started, snapshot()
                await asyncio.sleep(SETTLE_S)
                counted_after = await counts(world, admin, redis)
                group.check_alive()
            finally:
                await redis.aclose()
                await admin.close()
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
            "broker_messages": broker_per_session(
                counted_before["broker"], counted_after["broker"], sessions
            ),
            "postgres": pg_per_session(
                counted_before["pg"], counted_after["pg"], own_queries, sessions
            ),
            "redis": redis_per_session(counted_before["redis"], counted_after["redis"], sessions),
            "settle_s": SETTLE_S,
        }
    finally:
        await lib.destroy_world(world)


@click.command()
@click.option("--sessions", default=3000, show_default=True, help="sessions measured")
@click.option("--plan", default=6, show_default=True, help="plan of every session (6: urgent)")
@click.option("--in-flight", default=8, show_default=True, help="concurrent POSTs")
@click.option("--aggregators", default=2, show_default=True, help="as in compose.yaml")
@lib.worker_shape_option
@click.option("--timeout", "timeout_s", default=900, show_default=True, help="hard limit, s")
def main(
    sessions: int, plan: int, in_flight: int, aggregators: int, worker_shape: str, timeout_s: int
) -> None:
    """CPU time per session of the API, workers, aggregators, RabbitMQ, Postgres and Redis."""
    with lib.terminate_on_signals():
        signal.alarm(timeout_s)
        try:
            result = asyncio.run(run(sessions, plan, in_flight, aggregators, worker_shape))
        finally:
            signal.alarm(0)
    rows = [[k, v["cpu_s"], v["ms_per_session"]] for k, v in result["cpu"].items()]
    click.echo(f"{result['sessions_per_s']} sessions/s ({sessions} in {result['seconds']} s)")
    click.echo(lib.table(["process", "cpu s", "ms per session"], rows))
    memory = [[k, v["start"], v["end"]] for k, v in result["largest_rss_mib"].items()]
    click.echo(lib.table(["largest process", "RSS MiB at start", "at end"], memory))
    broker, pg, redis = result["broker_messages"], result["postgres"], result["redis"]
    click.echo("per session:")
    rows = [[f"broker {f}", broker["total"][f], broker["per_session"][f]] for f in BROKER_FIELDS]
    rows += [[f"postgres {f}", pg["total"][f], pg["per_session"][f]] for f in pg["total"]]
    rows += [["redis commands", redis["total"], redis["per_session"]]]
    click.echo(lib.table(["counter", "total", "per session"], rows))
    queues = broker["publish_per_session_by_queue"].items()
    click.echo(lib.table(["queue", "messages in per session"], [[q, n] for q, n in queues]))
    commands = list(redis["by_command"].items())
    click.echo(lib.table(["redis command", "calls per session"], commands))
    click.echo(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
