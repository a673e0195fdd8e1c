"""The chaos scenario, small: kills, a RabbitMQ restart and a Redis flush (or, on the postgres
transport with PostgreSQL alone, a PostgreSQL crash-restart) lose no session.

It runs on a RabbitMQ node of its own (other ports), so restarting it disturbs no one."""

import json
import os
import sys

import pytest
from rabbit_node import free_node_port

from tests.e2e.conftest import ROOT, run_script

pytestmark = pytest.mark.e2e


@pytest.mark.timeout(520)  # the script's 380 s, then its grace to stop (run_script)
@pytest.mark.parametrize("transport", ["rabbitmq", "postgres"])
def test_chaos_loses_nothing_and_dead_letters_only_the_poison(services, transport):
    """Every session completes (none left to the janitor) with a verdict that matches its rows;
    the DLQ holds just the poison. On RabbitMQ the broker restarts mid-run and Redis is
    flushed; on the postgres transport, run with PostgreSQL alone (no Redis), the database
    that holds the queue, the heartbeats and the live news crashes and restarts instead."""
    where = (
        ["--own-broker", str(free_node_port())]
        if transport == "rabbitmq"
        else ["--transport", "postgres", "--without-redis"]
    )
    env_args = [
        "--sessions",
        "90",
        "--duration",
        "15",
        "--poison",
        "3",
        "--extra-kills",
        "3",
        "--timeout",
        "150",
        *where,
    ]
    # The services this run discovered (tests/services.py), not whatever the script would find.
    env = {
        **os.environ,
        "REDIS_URL": services.redis_url,
        "DATABASE_URL": services.database_admin_url,
    }
    run = run_script(
        [sys.executable, str(ROOT / "scripts" / "chaos.py"), *env_args], env, timeout=380
    )
    assert run.stdout.strip(), run.stderr[-3000:]
    report = json.loads(run.stdout[run.stdout.index("{") :])
    if not report["ok"]:  # the whole report and the run's last words, not a truncated repr
        pytest.fail(f"{json.dumps(report, indent=1)}\n{run.stderr[-4000:]}", pytrace=False)
    assert report["sessions_sent"] == 90
    assert report["lost"] == 0, report
    # A lost task would leave its session to the janitor: none may end any other way.
    assert report["by_status"] == {"completed": 90}, report
    assert report["not_completed"] == 0 and report["finalized_by_deadline"] == 0, report
    assert "timeout" not in report["components_by_status"], report
    assert report["finished"] == report["accepted_202"] + report["finished_sync_200"] == 90
    assert report["verdicts_disagreeing_with_components"] == 0
    assert report["duplicated_verdicts"] == report["duplicated_component_rows"] == 0, report
    assert report["dead_lettered"] == report["poison_injected"] == 3
    assert report["dead_letters_that_are_not_the_poison"] == 0
    assert set(report["kills"]) == {
        "worker-media-preprocess",
        "worker-techniques",
        "worker-ai-tampered",
        "worker-claims",
        "worker-domain",
        "aggregator",
    }
    assert report["client_errors"] == []
    assert report["ok"] and run.returncode == 0
