"""A worker's CPU per task, alone: one no-op worker drains tasks published straight to its
queue. A benchmark.

    flock /tmp/verdict-heavy.lock python scripts/bench_drain.py [--tasks 3000] [--runs 3]

`bench_cpu.py` measures every process of the pipeline under one load, where the workers'
CPU per session moves by ±20 % between runs (four workers, the API, the aggregators and the
broker share two cores). This isolates one worker (`scripts/bench_worker.py`, one component
at --concurrency and --prefetch): no API and no aggregator run; this process signs and
publishes --tasks tasks of one plan to the worker's queue (as the API would, with confirms)
and waits until its results are all in the results queue, which nothing consumes. The
worker's CPU time (user + system, its process group, from /proc) over those tasks gives its
CPU per task: the figure to move when a change is meant to make the workers cheaper.

Each run is a fresh world (topology prefix, database, signing keys) after a warm-up of
WARM_UP tasks. Prints every run and the median, and the JSON to --out when given.
Linux only (/proc).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import statistics
import time
import uuid
from pathlib import Path
from typing import Any

import benchlib as lib
import click
from bench_cpu import cpu_seconds, rss_mib

from shared.broker import Publisher, connect
from shared.constants import PLAN_PRIORITY
from shared.messages import Task, TaskInput
from shared.names import Names
from shared.signing import task_signer

# Tasks drained before the measured ones: connections, caches and first calls settle.
WARM_UP = 200
# Tasks published at once (each awaits its confirm), as a busy API would.
PUBLISH_BATCH = 50
POLL_S = 0.2


def group_cpu_seconds(leader: int) -> float:
    """User + system CPU seconds of every live process in `leader`'s process group."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.getpgid(int(entry.name)) != leader:
                continue
            total += cpu_seconds((entry / "stat").read_text(), ticks)
        except (OSError, ValueError):
            continue  # exited meanwhile
    return total


def resident_mib(pid: int) -> float:
    """The process's resident memory (VmRSS), in MiB."""
    return rss_mib(Path(f"/proc/{pid}/status").read_text())


def task_for(component: str, plan: int) -> Task:
    """A text task of a new session, as the API publishes it (before signing)."""
    return Task(
        session_id=str(uuid.uuid4()),
        component=component,
        plan_type=plan,
        priority=PLAN_PRIORITY[plan],
        input=TaskInput(content="x" * 200),
        timestamp=int(time.time() * 1000),
    )


async def wait_for_results(world: lib.World, queue: str, count: int, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while (await lib.queue_depths(world, [queue]))[queue] < count:
        if time.monotonic() > deadline:
            raise RuntimeError(f"fewer than {count} results in {queue} after {timeout_s}s")
        await asyncio.sleep(POLL_S)


async def drain_once(
    component: str, plan: int, tasks: int, concurrency: int, prefetch: int
) -> dict[str, Any]:
    world = lib.new_world("drain")
    await lib.create_world(world)
    try:
        settings = world.settings()
        names = Names(settings.topology_prefix)
        with lib.ProcessGroup() as group:
            (name,) = lib.start_workers(world, group, [(component, concurrency, prefetch)])
            worker = group.pid(name)
            connection = await connect(world.amqp_url, "bench-drain")
            try:
                publisher = await Publisher(
                    connection, names, 30.0, task_signer=task_signer(settings)
                ).open()
                queue = names.task_queue(component, plan)
                while not await lib.consumer_count(world.amqp_url, queue):
                    group.check_alive()
                    await asyncio.sleep(POLL_S)

                async def publish(count: int) -> None:
                    for start in range(0, count, PUBLISH_BATCH):
                        batch = min(PUBLISH_BATCH, count - start)
                        await asyncio.gather(
                            *(publisher.task(task_for(component, plan)) for _ in range(batch))
                        )

                # Results of urgent plans go to their own queue (shared.broker.Publisher).
                urgent = settings.urgent_threshold
                results = (
                    names.urgent_results
                    if urgent is not None and PLAN_PRIORITY[plan] >= urgent
                    else names.results
                )
                await publish(WARM_UP)
                await wait_for_results(world, results, WARM_UP, 120)
                rss_start = resident_mib(worker)
                cpu_before, started = group_cpu_seconds(worker), time.monotonic()
                await publish(tasks)
                await wait_for_results(world, results, WARM_UP + tasks, 600)
                seconds = time.monotonic() - started
                cpu = group_cpu_seconds(worker) - cpu_before
                rss_end = resident_mib(worker)
                group.check_alive()
            finally:
                await connection.close()
        return {
            "tasks": tasks,
            "seconds": round(seconds, 2),
            "tasks_per_s": round(tasks / seconds, 1),
            "worker_cpu_ms_per_task": round(1000 * cpu / tasks, 3),
            "worker_rss_mib": {"start": round(rss_start, 1), "end": round(rss_end, 1)},
        }
    finally:
        await lib.destroy_world(world)


@click.command()
@click.option("--component", default="techniques", show_default=True)
@click.option("--plan", default=6, show_default=True, help="plan of every task")
@click.option("--tasks", default=3000, show_default=True, help="tasks measured per run")
@click.option("--runs", default=3, show_default=True, help="fresh worlds, one after another")
@click.option("--concurrency", default=8, show_default=True, help="as bench_cpu.py's workers")
@click.option("--prefetch", default=10, show_default=True, help="as bench_cpu.py's workers")
@click.option("--out", type=click.Path(dir_okay=False), help="write the JSON here too")
@click.option("--timeout", "timeout_s", default=900, show_default=True, help="hard limit, s")
def main(
    component: str,
    plan: int,
    tasks: int,
    runs: int,
    concurrency: int,
    prefetch: int,
    out: str | None,
    timeout_s: int,
) -> None:
    """One no-op worker's CPU per task, draining tasks published straight to its queue."""
    with lib.terminate_on_signals():
        signal.alarm(timeout_s)
        try:
            measured = [
                asyncio.run(drain_once(component, plan, tasks, concurrency, prefetch))
                for _ in range(runs)
            ]
        finally:
            signal.alarm(0)
    rows = [
        [i + 1, r["tasks_per_s"], r["worker_cpu_ms_per_task"], r["worker_rss_mib"]["end"]]
        for i, r in enumerate(measured)
    ]
    click.echo(lib.table(["run", "tasks/s", "worker CPU ms per task", "RSS MiB at end"], rows))
    cpu = [r["worker_cpu_ms_per_task"] for r in measured]
    summary = {
        "component": component,
        "plan": plan,
        "runs": measured,
        "median_cpu_ms_per_task": round(statistics.median(cpu), 3),
        "spread_cpu_ms_per_task": [min(cpu), max(cpu)],
    }
    click.echo(
        f"median {summary['median_cpu_ms_per_task']} ms of worker CPU per task "
        f"(runs {min(cpu)}–{max(cpu)})"
    )
    text = json.dumps(summary, indent=2)
    click.echo(text)
    if out:
        Path(out).write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
