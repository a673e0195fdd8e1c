"""TRANSPORT: what each choice requires, and what `verdict up` runs for it."""

import pytest
from pydantic import ValidationError

from ops.supervisor import Plan, Service, plan_for_transport
from shared.job_queue import queue_of, settled_as
from shared.names import Names
from shared.settings import Settings
from workers.runtime import plan_groups

NO_BROKER = {"redis_url": "redis://h", "database_url": "postgresql://h"}


def test_rabbitmq_needs_a_broker_url_and_postgres_does_not():
    with pytest.raises(ValidationError, match="AMQP_URL is required with TRANSPORT=rabbitmq"):
        Settings(**NO_BROKER)
    assert Settings(**NO_BROKER, transport="postgres").transport == "postgres"
    with pytest.raises(ValidationError):
        Settings(**NO_BROKER, transport="kafka")


def _service(name: str, *command: str) -> Service:
    return Service(name, ("python", "-m", "ops.cli", *command), 1)


def test_the_postgres_transport_declares_no_topology():
    """The topology job needs a broker; migrations make the queue table instead."""
    plan = Plan(
        (_service("migrate", "db", "migrate"), _service("topology", "topology", "declare")),
        (_service("api", "api"),),
    )
    assert plan_for_transport(plan, "rabbitmq") == plan
    on_table = plan_for_transport(plan, "postgres")
    assert [s.name for s in on_table.one_shots] == ["migrate"]
    assert on_table.services == plan.services


def test_routing_keys_lead_to_the_queues_the_broker_would_bind_them_to():
    names = Names("x")
    assert queue_of(names, names.task_queue("claims", 3)) == "x.claims.3"
    assert queue_of(names, names.result_key("claims")) == names.results
    assert queue_of(names, names.result_key("claims", urgent=True)) == names.urgent_results


def test_a_workers_plan_queues_are_claimed_in_an_urgent_group_and_the_rest():
    """Plans whose priority reaches URGENT_PRIORITY (business 8, enterprise 10) have a claim
    budget of their own; without the scheduler all six share one. A prefetch per queue."""
    names = Names("x")
    urgent = plan_groups(names, "claims", 5, 8)
    assert urgent == [
        (["x.claims.1", "x.claims.2", "x.claims.3", "x.claims.4"], 20),
        (["x.claims.5", "x.claims.6"], 10),
    ]
    assert plan_groups(names, "claims", 5, None) == [([f"x.claims.{p}" for p in range(1, 7)], 30)]


def _write(queue: str) -> tuple[str, ...]:
    return (queue, queue, "pending")


def test_a_task_completed_with_its_result_is_answered_and_any_other_settlement_is_as_said():
    """A worker's completion that published a result waits, `answered`, for the fan-in to
    complete it; follow-ups, retries, dead letters and other settlements are as asked."""
    names = Names("verdict")
    answers = (names.results, names.urgent_results)
    result, urgent = _write(names.results), _write(names.urgent_results)
    follow_up, dead = _write(names.task_queue("claims", 3)), _write(names.dlq)
    assert settled_as("completed", [result], answers) == "answered"
    assert settled_as("completed", [follow_up, urgent], answers) == "answered"
    assert settled_as("completed", [follow_up, dead], answers) == "completed"
    assert settled_as("completed", [], answers) == "completed"
    assert settled_as("pending", [result], answers) == "pending"
    assert settled_as("error", [], answers) == "error"
    # An aggregator's consumer names no answers: its result rows simply complete.
    assert settled_as("completed", [result], ()) == "completed"
