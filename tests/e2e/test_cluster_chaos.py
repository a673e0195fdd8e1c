"""The node-loss chaos, small: quorum queues on a three-node cluster of its own, the first
node killed (-9), restarted, the second killed, while sessions flow; nothing is lost.

Costs about two minutes on a loaded two-core machine, a third of it booting the three nodes."""

import json
import os
import sys

import pytest
from rabbit_cluster import free_cluster_port

from tests.e2e.conftest import ROOT, run_script

pytestmark = pytest.mark.e2e

SESSIONS = 60


@pytest.mark.timeout(840)  # the script's 700 s, then its grace to stop (run_script)
def test_losing_nodes_loses_no_session_and_strands_no_message(services):
    """Every session completes with one verdict that matches its rows, the queues end empty
    and the DLQ holds just the poison, with one node and then another killed mid-run."""
    args = ["--sessions", str(SESSIONS), "--duration", "24", "--poison", "2"]
    args += ["--timeout", "240", "--cluster", str(free_cluster_port())]
    # A Redis database of its own: test_chaos.py may run beside it (two test processes), and
    # each run flushes its database.
    args += ["--redis-db", "12"]
    env = {
        **os.environ,
        "REDIS_URL": services.redis_url,
        "DATABASE_URL": services.database_admin_url,
    }
    run = run_script([sys.executable, str(ROOT / "scripts" / "chaos.py"), *args], env, timeout=700)
    assert run.stdout.strip(), run.stderr[-3000:]
    report = json.loads(run.stdout[run.stdout.index("{") :])
    if not report["ok"]:  # the whole report and the run's last words, not a truncated repr
        pytest.fail(f"{json.dumps(report, indent=1)}\n{run.stderr[-4000:]}", pytrace=False)
    assert report["sessions_sent"] == SESSIONS
    assert report["lost"] == 0 and report["not_completed"] == 0, report
    assert report["by_status"] == {"completed": SESSIONS}, report
    assert report["finalized_by_deadline"] == 0 and report["client_errors"] == [], report
    assert report["verdicts_disagreeing_with_components"] == 0
    assert report["duplicated_verdicts"] == report["duplicated_component_rows"] == 0, report
    assert report["dead_lettered"] == report["poison_injected"] == 2
    assert report["dead_letters_that_are_not_the_poison"] == 0
    # Results of a session the API withdrew (503: a task refused mid-election) are letters
    # too, and only then.
    if report["dead_lettered_results_of_withdrawn_sessions"]:
        assert report["retried_after_503"] > 0
    assert report["stranded_in_queues"] == 0
    assert len(report["kills"]) == 2  # two different nodes
    assert report["accepted_to_final_s"]["longest"] > 0
    assert report["ok"] and run.returncode == 0
