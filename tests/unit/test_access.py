"""Broker roles as data: each role's regexes allow exactly what the role needs."""

import base64
import hashlib
import re

import pytest

from shared.constants import ANALYSIS_COMPONENTS, PLANS, QUEUE_COMPONENTS
from shared.names import Names
from topology.access import Role, password_hash, roles
from topology.provision import password_variable, passwords_from, vhost_of, with_credentials

NAMES = Names("analysis")
DELAYS = (1_000, 30_000, 60_000)


def role(name: str) -> Role:
    return next(r for r in roles(NAMES, DELAYS) if r.role == name)


def allows(pattern: str, resource: str) -> bool:
    """How RabbitMQ applies a permission regex: a search; ours are anchored."""
    return re.search(pattern, resource) is not None


def every_task_key() -> list[str]:
    return [NAMES.task_queue(c, p) for c in QUEUE_COMPONENTS for p in PLANS]


def every_result_key() -> list[str]:
    return [NAMES.result_key(c, u) for c in ANALYSIS_COMPONENTS for u in (False, True)]


def test_the_api_publishes_tasks_only_and_declares_and_reads_nothing():
    """Every task routing key, no result key, no other exchange, no queue to read."""
    api = role("api")
    assert api.topic is not None
    assert all(allows(api.topic.write, k) for k in every_task_key())
    assert not any(allows(api.topic.write, k) for k in every_result_key())
    assert allows(api.write, "analysis")
    assert not any(
        allows(api.write, x) for x in ("", "amq.default", "analysis.dead", "analysis.retry.1s")
    )
    assert not allows(api.configure, "amq.gen-spy") and not allows(api.read, "analysis.claims.6")


@pytest.mark.parametrize("component", ANALYSIS_COMPONENTS)
def test_a_worker_reads_its_own_plan_queues_and_reports_only_its_component(component):
    """Its six plan queues and nothing else; results of its own component only."""
    worker = role(f"worker-{component}")
    assert worker.topic is not None
    readable = [
        q
        for q in [*every_task_key(), NAMES.results, NAMES.urgent_results, NAMES.dlq]
        if allows(worker.read, q)
    ]
    assert readable == [NAMES.task_queue(component, p) for p in PLANS]
    reportable = [
        k for k in [*every_result_key(), *every_task_key()] if allows(worker.topic.write, k)
    ]
    assert reportable == [NAMES.result_key(component, False), NAMES.result_key(component, True)]
    assert not allows(worker.configure, "amq.gen-spy") and not allows(worker.configure, "analysis")


def test_media_workers_dispatch_the_four_analysis_tasks_and_report_their_failures():
    """media_preprocess publishes follow-up tasks (never media tasks) and per-component
    failure results."""
    media = role("worker-media_preprocess")
    assert media.topic is not None
    keys = [k for k in [*every_task_key(), *every_result_key()] if allows(media.topic.write, k)]
    assert sorted(keys) == sorted(
        [NAMES.task_queue(c, p) for c in ANALYSIS_COMPONENTS for p in PLANS] + every_result_key()
    )


def test_consumers_may_park_in_retry_tiers_and_dead_letter_but_not_use_the_default_exchange():
    """Writing to the default exchange would reach any queue by name; the dead-letter
    exchange only reaches the DLQ."""
    for r in (role("aggregator"), role("worker-claims")):
        assert allows(r.write, "analysis.retry.30s") and allows(r.write, "analysis.dead")
        assert not allows(r.write, "amq.default") and not allows(r.write, "")
    assert not allows(role("aggregator").write, "analysis")


def test_aggregators_read_the_results_queues_only():
    """Both results queues, no task queue, no DLQ."""
    aggregator = role("aggregator")
    queues = [*every_task_key(), NAMES.results, NAMES.urgent_results, NAMES.dlq]
    assert [q for q in queues if allows(aggregator.read, q)] == [
        NAMES.results,
        NAMES.urgent_results,
    ]


def test_only_the_topology_role_configures_and_only_its_own_objects():
    """No other role can declare, bind or delete; the topology role only the objects of its
    deployment, by name — not those of a deployment whose prefix extends its own."""
    everyone = roles(NAMES, DELAYS)
    assert [r.role for r in everyone if r.configure != "^$"] == ["topology"]
    topology = role("topology")
    own = ["analysis", "analysis_dlq", "analysis.claims.6", "analysis.retry.30s", "analysis.dead"]
    assert all(allows(topology.configure, name) for name in own)
    others = [
        "analysis.x",
        "analysis.x.claims.6",
        "analysis_x_dlq",
        "analysis2.claims.1",
        "amq.gen-x",
    ]
    assert not any(allows(topology.configure, name) for name in others)
    assert len({r.user for r in everyone}) == len(everyone) == 4 + len(QUEUE_COMPONENTS)


def test_the_operator_reads_the_dlq_only_and_replays_to_task_and_result_keys():
    """The DLQ and no other queue; publishes only to the task exchange, with the routing keys
    letters come from (tasks, results); declares nothing; sees queue stats (management)."""
    operator = role("operator")
    queues = [*every_task_key(), NAMES.results, NAMES.urgent_results, NAMES.dlq]
    assert [q for q in queues if allows(operator.read, q)] == [NAMES.dlq]
    assert operator.topic is not None
    keys = [*every_task_key(), *every_result_key()]
    assert all(allows(operator.topic.write, k) for k in keys)
    assert not allows(operator.topic.write, NAMES.dlq)
    assert allows(operator.write, "analysis")
    assert not any(
        allows(operator.write, x) for x in ("", "amq.default", "analysis.dead", "analysis.retry.1s")
    )
    assert operator.configure == "^$" and operator.tags == ("management",)


def test_password_hash_is_rabbitmqs_salted_sha256():
    """base64(salt ‖ sha256(salt ‖ password)), a fresh salt each time, never the password."""
    salt = b"\x01\x02\x03\x04"
    expected = base64.b64encode(salt + hashlib.sha256(salt + b"s3cret").digest()).decode()
    assert password_hash("s3cret", salt) == expected
    assert password_hash("s3cret") != password_hash("s3cret")
    assert "s3cret" not in password_hash("s3cret")


def test_role_passwords_come_from_one_variable_per_role():
    """`worker-media_preprocess` reads RABBITMQ_PASSWORD_WORKER_MEDIA_PREPROCESS; empty = none."""
    assert (
        password_variable("worker-media_preprocess") == "RABBITMQ_PASSWORD_WORKER_MEDIA_PREPROCESS"
    )
    env = {"RABBITMQ_PASSWORD_API": "a", "RABBITMQ_PASSWORD_AGGREGATOR": ""}
    assert passwords_from(env, roles(NAMES, DELAYS)) == {"api": "a"}


def test_urls_carry_the_vhost_and_take_other_credentials():
    """The vhost is the URL path; credentials are replaced and escaped."""
    assert vhost_of("amqp://u:p@h:5672/verdict") == "verdict"
    assert vhost_of("amqp://u:p@h:5672/") == "/"
    assert vhost_of("amqp://h/%2F") == "/"
    assert (
        with_credentials("amqp://u:p@h:5672/v", "a-api", "p@ss/w")
        == "amqp://a-api:p%40ss%2Fw@h:5672/v"
    )
