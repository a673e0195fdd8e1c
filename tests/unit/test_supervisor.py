"""`verdict up`'s verdict on its own stop: clean only when every child exited 0."""

import signal

from ops.supervisor import KILLED_AT_DEADLINE, describe_exit, shutdown_status


def test_a_stop_is_clean_only_when_every_child_exits_zero():
    """One child with a non-zero status, or killed at the deadline, makes the stop unclean."""
    assert shutdown_status([0, 0, 0]) == 0
    assert shutdown_status([0, 1, 0]) == 1
    assert shutdown_status([0, KILLED_AT_DEADLINE]) == 1
    assert shutdown_status([-int(signal.SIGTERM)]) == 1  # died of the signal, no handler


def test_exits_are_described_by_status_or_signal():
    """Operators read `exit status N` or the signal's name, not Popen's negative numbers."""
    assert describe_exit(3) == "exit status 3"
    assert describe_exit(KILLED_AT_DEADLINE) == "killed by SIGKILL"


def test_compose_first_start_migrates_loads_fact_checks_and_declares_in_order():
    """`verdict up` runs compose.yaml's one-shot jobs first: the schema, then the shipped fact
    checks into an empty store (the claims component can match something), then the topology."""
    from pathlib import Path

    from ops.supervisor import plan_from_compose

    plan = plan_from_compose(Path(__file__).resolve().parents[2] / "compose.yaml")
    assert [job.name for job in plan.one_shots] == ["migrate", "factchecks", "topology"]
    loader = plan.one_shots[1]
    assert loader.argv[-3:] == ("factchecks", "load", "--if-empty")


def test_every_replica_gets_a_metrics_port_of_its_own():
    """METRICS_PORT starts a range, one port per replica in plan order; unset, none is given."""
    from ops.supervisor import metrics_ports

    labels = ["api-1", "worker-claims-1", "worker-claims-2"]
    assert metrics_ports(labels, 9100) == {
        "api-1": 9100,
        "worker-claims-1": 9101,
        "worker-claims-2": 9102,
    }
    assert metrics_ports(labels, None) == {}


def test_the_compact_plan_runs_one_process_of_each_service_and_one_for_every_worker():
    """`verdict up --compact`: the same one-shots, one API and one aggregator, and the five
    worker services as one `verdict worker --components …` process in their place."""
    from pathlib import Path

    from ops.supervisor import compact_plan, plan_from_compose

    plan = plan_from_compose(Path(__file__).resolve().parents[2] / "compose.yaml")
    small = compact_plan(plan)
    assert small.one_shots == plan.one_shots
    assert [(s.name, s.replicas) for s in small.services] == [
        ("api", 1),
        ("workers", 1),
        ("aggregator", 1),
    ]
    workers = small.services[1]
    assert workers.argv[3:] == (
        "worker",
        "--components",
        "media_preprocess,techniques,ai_tampered,claims,domain",
    )


def test_a_plan_without_workers_compacts_to_one_of_each():
    from ops.supervisor import Plan, Service, compact_plan

    plan = Plan((), (Service("api", ("python", "-m", "ops.cli", "api"), 3),))
    assert compact_plan(plan).services == (Service("api", ("python", "-m", "ops.cli", "api"), 1),)


def test_worker_components_reads_any_shape_of_a_worker_command():
    from ops.supervisor import worker_components

    assert worker_components(("claims", "--prefetch", "3")) == ["claims"]
    assert worker_components(("--prefetch", "5", "claims")) == ["claims"]
    assert worker_components(("--components", "techniques,domain", "--concurrency=2")) == [
        "techniques",
        "domain",
    ]
    assert worker_components(("--components=ai_tampered, claims",)) == ["ai_tampered", "claims"]


def test_a_compact_plan_names_each_component_once_whatever_its_services_look_like():
    from ops.supervisor import Plan, Service, compact_plan

    cli = ("python", "-m", "ops.cli")
    plan = Plan(
        (),
        (
            Service("api", (*cli, "api"), 2),
            Service("w1", (*cli, "worker", "--prefetch", "5", "claims"), 3),
            Service("w2", (*cli, "worker", "--components", "techniques,claims"), 1),
            Service("agg", (*cli, "aggregator"), 2),
        ),
    )
    small = compact_plan(plan)
    assert [s.name for s in small.services] == ["api", "workers", "agg"]
    assert small.services[1].argv == (*cli, "worker", "--components", "claims,techniques")
