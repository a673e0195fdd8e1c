"""One worker process for several components: `verdict worker --components a,b`."""

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from aggregator.service import Aggregator
from shared.house import redis_house
from shared.registry import registry
from tests.cli import ROOT, settings_env
from tests.integration.conftest import eventually, running
from tests.integration.test_worker_flow import explain, final_view, submit, workers_for
from workers.executor import Analysis
from workers.group import WorkerGroup, worker_options

pytestmark = pytest.mark.integration


def start_worker(settings, log: Path, *args: str) -> subprocess.Popen[str]:
    """`verdict worker ARGS` as an operator starts it, with this world's settings."""
    with log.open("w") as output:
        return subprocess.Popen(
            [sys.executable, "-m", "ops.cli", "worker", *args],
            cwd=ROOT,
            env={**os.environ, **settings_env(settings)},
            stdout=output,
            stderr=subprocess.STDOUT,
            text=True,
        )


async def exited(process: subprocess.Popen[str], timeout: float = 40) -> int:
    return await asyncio.to_thread(process.wait, timeout)


async def test_one_process_with_two_components_finishes_tasks_of_both(
    settings, pool, publisher, redis, tmp_path
):
    """A process started with `--components techniques,claims` consumes both components'
    queues: sessions complete with both results written by that process, its one registry
    record lists both components, and SIGTERM drains both and exits 0."""
    process = start_worker(settings, tmp_path / "worker.log", "--components", "techniques,claims")
    try:
        others = workers_for(settings, components=("ai_tampered", "domain"))
        async with running(*others, Aggregator(settings, explain=explain).run):
            sids = [await submit(pool, publisher, plan=p) for p in (2, 5)]
            views = [await final_view(pool, sid, timeout=90) for sid in sids]
            records = await eventually(
                lambda: _records_of(settings, redis, process.pid), timeout=30
            )
        [record] = records
        assert record.components == ("techniques", "claims")
        assert record.status == "online" and record.input_types == ("text", "url")
        assert record.limits["prefetch_techniques"] == 5 and record.limits["prefetch_claims"] == 3
        assert [v.status for v in views] == ["completed", "completed"]
        writers = await pool.fetch(
            "SELECT component, worker_id FROM component_results WHERE session_id = ANY($1::uuid[])",
            sids,
        )
        ours = {r["component"] for r in writers if r["worker_id"].endswith(f"-{process.pid}")}
        assert ours == {"techniques", "claims"}
        process.send_signal(signal.SIGTERM)
        assert await exited(process) == 0
        [stopped] = await _records_of(settings, redis, process.pid, status=None)
        assert stopped.stopped_at is not None
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


async def test_a_group_says_stopped_only_once_its_running_task_has_ended(
    settings, pool, publisher, redis
):
    """A stop while a 1 s task runs: the process's record stays the busy worker's through the
    grace period, and its last one (stopped) is written after the task ended, not at the stop."""
    started, ended = asyncio.Event(), []

    async def slow(task, ctx):
        started.set()
        await asyncio.sleep(1)
        ended.append(time.time())
        return Analysis(5)

    group = WorkerGroup(settings, worker_options(["claims"], 1, 2), {"claims": slow})
    stop = asyncio.Event()
    serving = asyncio.create_task(group.run(stop))
    await submit(pool, publisher, plan=3)
    await asyncio.wait_for(started.wait(), 20)
    stop.set()
    await asyncio.wait_for(serving, 20)
    [stopped] = await _records_of(settings, redis, os.getpid(), status=None)
    assert ended and stopped.stopped_at is not None and stopped.stopped_at >= ended[0]


async def _records_of(settings, redis, pid, status="online"):
    records = await registry(redis_house(redis).shelf, settings.key_prefix, time.time())
    return [r for r in records if r.pid == pid and (status is None or r.status == status)]


def test_the_one_component_form_and_its_refusals(settings):
    """`verdict worker COMPONENT` still parses; unknown, repeated or both forms are refused in
    words before anything connects."""
    from tests.cli import verdict

    for args, says in [
        (("--components", "techniques,bogus"), "unknown component 'bogus'"),
        (("--components", "claims,claims"), "named twice"),
        (("claims", "--components", "domain"), "not both"),
        ((), "not both"),
    ]:
        run = verdict(settings, "worker", *args)
        assert run.returncode == 2 and says in run.stderr, (args, run.stderr)


@pytest.mark.parametrize("args", [("techniques",), ("--components", "techniques,claims")])
def test_a_worker_that_cannot_reach_the_broker_says_so_in_one_line(settings, args):
    """Both forms end with the reason as the CLI prints it, not a task group's traceback."""
    from tests.cli import verdict

    run = verdict(settings, "worker", *args, AMQP_URL="amqp://guest:guest@127.0.0.1:1/")
    assert run.returncode != 0
    assert "cannot connect to RabbitMQ" in run.stderr, run.stderr
    assert "Traceback" not in run.stderr and "ExceptionGroup" not in run.stderr, run.stderr
