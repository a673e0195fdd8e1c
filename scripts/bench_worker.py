"""A real worker process with a no-op executor, for benchmarks: pipeline overhead only.

    python scripts/bench_worker.py COMPONENTS [--concurrency N] [--prefetch N] [--work-ms MS]

COMPONENTS: one component, or several separated by commas served by one process (a
WorkerGroup, as `verdict worker --components a,b` runs them).

Settings come from the environment like `verdict worker` (AMQP_URL, SCHEDULER_ENABLED, …).
--work-ms (or BENCH_WORK_MS; default 0) makes every task sleep that long to emulate work.
The executor answers score 50 with no evidence. SIGTERM/SIGINT stop it gracefully, as
`verdict worker` does.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import click

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ops.cli import run_until_signalled
from shared.logging import configure
from shared.messages import Task
from shared.settings import load_settings
from workers.executor import Analysis, Executor, ExecutorContext
from workers.group import WorkerGroup, components_asked, worker_options
from workers.runtime import Worker


def noop_executor(work_s: float) -> Executor:
    """An executor that does nothing (or sleeps `work_s`) and reports score 50."""

    async def noop(task: Task, ctx: ExecutorContext) -> Analysis:
        if work_s:
            await asyncio.sleep(work_s)
        return Analysis(50.0, {})

    return noop


@click.command()
@click.argument("components")
@click.option("--concurrency", type=int, default=None, help="tasks run at once, per component")
@click.option("--prefetch", type=int, default=None, help="unacked deliveries per plan queue")
@click.option("--work-ms", type=float, default=0, envvar="BENCH_WORK_MS", help="sleep per task")
def main(components: str, concurrency: int | None, prefetch: int | None, work_ms: float) -> None:
    """Consume the six plan queues of each of COMPONENTS with a no-op executor."""
    settings = load_settings()
    configure(settings.log_level, settings.log_json)
    names = components_asked(None, components)
    options = worker_options(names, concurrency, prefetch)
    noop = noop_executor(work_ms / 1000)
    if len(options) == 1:
        run_until_signalled(Worker(settings, options[0], executor=noop).run)
    else:
        run_until_signalled(WorkerGroup(settings, options, {c: noop for c in names}).run)


if __name__ == "__main__":
    main()
