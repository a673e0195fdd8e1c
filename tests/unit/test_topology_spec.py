"""The topology as data: names, arguments and counts derived from a prefix."""

import pytest
from pydantic import ValidationError

from shared.constants import MAX_PRIORITY
from shared.errors import TopologyError
from shared.names import Names, format_delay
from shared.settings import load_settings
from topology.broker import definitions, management_url
from topology.spec import Binding, Exchange, Queue, Topology, build, from_settings


def test_thirty_plan_queues_with_the_spec_arguments():
    """5 components × 6 plans, each with priority, 24 h TTL, DLQ routing, a reject-publish cap."""
    topology = build("analysis", max_length=500)
    plan_queues = [
        q
        for q in topology.queues
        if q.name.count(".") == 2 and not q.name.startswith(("analysis.retry.", "analysis.results"))
    ]
    assert len(plan_queues) == 30
    assert topology.queue("analysis.techniques.6").arguments == {
        "x-max-priority": MAX_PRIORITY,
        "x-message-ttl": 86_400_000,
        "x-dead-letter-exchange": "",
        "x-dead-letter-routing-key": "analysis_dlq",
        "x-max-length": 500,
        "x-overflow": "reject-publish",
    }


def test_every_plan_queue_is_bound_by_its_own_name_and_results_by_wildcard():
    """Routing key = queue name on the topic exchange; results take analysis.results.*."""
    topology = build("analysis")
    keys = {(b.exchange, b.queue, b.routing_key) for b in topology.bindings}
    assert ("analysis", "analysis.media_preprocess.1", "analysis.media_preprocess.1") in keys
    assert ("analysis", "analysis.results", "analysis.results.*") in keys


def test_retry_tiers_dead_letter_back_to_the_main_exchange_without_a_routing_key():
    """An expired retry copy returns to the queue its own routing key names."""
    topology = build("analysis", retry_delays_ms=(250, 30_000))
    tier = topology.queue("analysis.retry.30s")
    assert tier.arguments == {"x-message-ttl": 30_000, "x-dead-letter-exchange": "analysis"}
    assert "x-dead-letter-routing-key" not in topology.queue("analysis.retry.250ms").arguments
    assert {e.name: e.type for e in topology.exchanges}["analysis.retry.250ms"] == "fanout"


def test_results_are_prioritised_like_tasks():
    """A busy aggregator takes enterprise results before freemium ones."""
    assert build("analysis").queue("analysis.results").arguments["x-max-priority"] == MAX_PRIORITY


def test_top_tier_results_have_a_queue_of_their_own():
    """`results.urgent.{component}` reaches only the urgent queue, `results.{component}` only
    the shared one: the topic wildcard matches exactly one word."""
    topology = build("analysis")
    names = Names("analysis")
    keys = {(b.queue, b.routing_key) for b in topology.bindings}
    assert ("analysis.results.urgent", "analysis.results.urgent.*") in keys
    assert names.result_key("claims") == "analysis.results.claims"
    assert names.result_key("claims", urgent=True) == "analysis.results.urgent.claims"
    urgent = topology.queue("analysis.results.urgent").arguments
    assert urgent == topology.queue("analysis.results").arguments


def test_dlq_has_no_ttl_and_results_dead_letter_to_it():
    """The DLQ keeps messages for inspection; the results queue dead-letters into it."""
    topology = build("analysis")
    assert "x-message-ttl" not in topology.queue("analysis_dlq").arguments
    assert (
        topology.queue("analysis.results").arguments["x-dead-letter-routing-key"] == "analysis_dlq"
    )


def test_every_name_derives_from_the_prefix():
    """A test prefix isolates every object on a shared broker."""
    topology = build("t123")
    names = [q.name for q in topology.queues] + [e.name for e in topology.exchanges]
    assert all(n == "t123" or n.startswith(("t123.", "t123_")) for n in names)
    assert Names("t123").task_queue("claims", 3) == "t123.claims.3"


def test_delays_read_as_seconds_when_whole():
    """Tier names stay readable: 30s, 1s, 250ms."""
    assert [format_delay(d) for d in (30_000, 1_000, 250)] == ["30s", "1s", "250ms"]


def test_definitions_hold_every_object_and_no_users():
    """The export is loadable at boot and carries no credentials."""
    doc = definitions(build("analysis"))
    assert len(doc["queues"]) == len(build("analysis").queues)
    assert "users" not in doc and "permissions" not in doc


def test_management_url_follows_the_amqp_url():
    """Host, vhost and credentials of the management API come from AMQP_URL unless given."""
    base, vhost, auth = management_url("amqp://u:p%40ss@broker:5672/%2Fdidi", None)
    assert (base, vhost, auth) == ("http://broker:15672", "/didi", ("u", "p@ss"))
    base, vhost, _ = management_url("amqp://u:p@broker/", "http://mgmt:8080")
    assert (base, vhost) == ("http://mgmt:8080", "/")


def test_the_dlq_is_capped_and_refuses_rather_than_drops_past_its_cap():
    """analysis_dlq has a length and a byte cap with reject-publish: a full DLQ nacks new
    letters (the sender keeps the message) instead of silently dropping its oldest."""
    dlq = build("analysis", dlq_max_length=7, dlq_max_bytes=4096).queue("analysis_dlq")
    assert dlq.arguments == {
        "x-max-length": 7,
        "x-max-length-bytes": 4096,
        "x-overflow": "reject-publish",
    }


def test_every_queue_a_worker_or_aggregator_consumes_dead_letters_to_the_dlq():
    """Plan and results queues route rejected and expired messages to analysis_dlq."""
    topology = build("analysis")
    consumed = [
        q for q in topology.queues if not q.name.startswith(("analysis.retry.", "analysis_dlq"))
    ]
    assert len(consumed) == 32
    for queue in consumed:
        assert queue.arguments["x-dead-letter-exchange"] == ""
        assert queue.arguments["x-dead-letter-routing-key"] == "analysis_dlq"


def test_dlq_caps_and_the_header_bound_come_from_the_environment(monkeypatch):
    """DLQ_MAX_LENGTH and DLQ_MAX_BYTES shape the declared DLQ; MAX_HEADER_BYTES is read too
    and refused above 64 KiB, where a header frame would near RabbitMQ's frame_max."""
    for name, value in {
        "AMQP_URL": "amqp://unused",
        "REDIS_URL": "redis://unused",
        "DATABASE_URL": "postgresql://unused",
        "DLQ_MAX_LENGTH": "12",
        "DLQ_MAX_BYTES": "3456",
        "MAX_HEADER_BYTES": "2048",
    }.items():
        monkeypatch.setenv(name, value)
    settings = load_settings()
    dlq = Names(settings.topology_prefix).dlq
    arguments = from_settings(settings).queue(dlq).arguments
    assert (arguments["x-max-length"], arguments["x-max-length-bytes"]) == (12, 3456)
    assert settings.max_header_bytes == 2048
    monkeypatch.setenv("MAX_HEADER_BYTES", "70000")
    with pytest.raises(ValidationError, match="max_header_bytes"):
        load_settings()


def test_an_incoherent_topology_fails_at_construction():
    """Bindings to undeclared objects, duplicate names and dead-letter routes to nowhere are
    refused when the Topology is built, not discovered on a live broker."""
    whole = build("p")
    dlq = whole.queue("p_dlq")
    with pytest.raises(TopologyError, match="undeclared queue nowhere"):
        Topology(whole.exchanges, whole.queues, (*whole.bindings, Binding("p", "nowhere", "#")))
    with pytest.raises(TopologyError, match="declared twice"):
        Topology(whole.exchanges, (*whole.queues, dlq), whole.bindings)
    without_dlq = tuple(q for q in whole.queues if q.name != "p_dlq")
    with pytest.raises(TopologyError, match="dead-letters to undeclared queue p_dlq"):
        Topology(whole.exchanges, without_dlq, whole.bindings)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Exchange("x", "headerz"), "unknown type"),
        (lambda: Exchange("", "topic"), "name must be"),
        (lambda: Queue("q" * 256), "name must be"),
        (lambda: Queue("q", {"x-max-priority": 0}), "x-max-priority"),
        (lambda: Queue("q", {"x-message-ttl": -1}), "x-message-ttl"),
        (lambda: Queue("q", {"x-dead-letter-routing-key": "dlq"}), "needs an exchange"),
    ],
)
def test_impossible_objects_fail_at_construction(make, message):
    """An exchange type RabbitMQ lacks, an over-long name or an impossible argument is an
    error where the object is made."""
    with pytest.raises(TopologyError, match=message):
        make()


def test_quorum_mode_makes_every_queue_a_quorum_queue_without_priority():
    """QUEUE_TYPE=quorum: plan, results, retry and dead-letter queues are all quorum queues,
    every one that dead-letters with the delivery limit, and none keeps x-max-priority
    (refused by RabbitMQ < 4.0)."""
    topology = build("analysis", queue_type="quorum", delivery_limit=7)
    assert len(topology.queues) == len(build("analysis").queues)
    for queue in topology.queues:
        assert queue.type == "quorum"
        if queue.name != "analysis_dlq":
            assert queue.arguments["x-delivery-limit"] == 7
        assert queue.arguments["x-overflow"] == "reject-publish"
        assert "x-max-priority" not in queue.arguments


def test_the_dlq_has_no_delivery_limit_in_quorum_mode():
    """Browsing the DLQ (get, then requeue) counts as a delivery on a quorum queue, and past
    a limit a letter with nowhere to be dead-lettered would be dropped: the DLQ has none."""
    arguments = build("analysis", queue_type="quorum").queue("analysis_dlq").arguments
    assert "x-delivery-limit" not in arguments
    assert "x-dead-letter-exchange" not in arguments


def test_quorum_queues_dead_letter_at_least_once():
    """Every quorum queue that dead-letters does so at-least-once (with reject-publish), so a
    letter is kept until the target confirms it; the DLQ dead-letters nowhere."""
    topology = build("analysis", queue_type="quorum")
    assert topology.queue("analysis.claims.6").arguments == {
        "x-message-ttl": 86_400_000,
        "x-dead-letter-exchange": "",
        "x-dead-letter-routing-key": "analysis_dlq",
        "x-dead-letter-strategy": "at-least-once",
        "x-max-length": 100_000,
        "x-overflow": "reject-publish",
        "x-queue-type": "quorum",
        "x-delivery-limit": 10,
    }
    tier = topology.queue("analysis.retry.30s").arguments
    assert (tier["x-message-ttl"], tier["x-dead-letter-strategy"]) == (30_000, "at-least-once")
    assert "x-dead-letter-strategy" not in topology.queue("analysis_dlq").arguments


def test_classic_stays_the_default():
    """Without QUEUE_TYPE nothing changes for a one-node deployment."""
    topology = build("analysis")
    assert {q.type for q in topology.queues} == {"classic"}
    assert not any("x-queue-type" in q.arguments for q in topology.queues)


def test_queue_type_and_delivery_limit_come_from_the_environment(monkeypatch):
    """QUEUE_TYPE and QUEUE_DELIVERY_LIMIT shape the topology; an unknown type is refused."""
    for name, value in {
        "AMQP_URL": "amqp://unused",
        "REDIS_URL": "redis://unused",
        "DATABASE_URL": "postgresql://unused",
        "QUEUE_TYPE": "quorum",
        "QUEUE_DELIVERY_LIMIT": "4",
    }.items():
        monkeypatch.setenv(name, value)
    arguments = from_settings(load_settings()).queue("analysis.domain.2").arguments
    assert (arguments["x-queue-type"], arguments["x-delivery-limit"]) == ("quorum", 4)
    monkeypatch.setenv("QUEUE_TYPE", "mirrored")
    with pytest.raises(ValidationError, match="queue_type"):
        load_settings()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"x-queue-type": "quorum", "x-max-priority": 10}, "x-max-priority"),
        ({"x-queue-type": "quorum", "x-overflow": "reject-publish-dlx"}, "reject-publish-dlx"),
        (
            {
                "x-queue-type": "quorum",
                "x-dead-letter-exchange": "",
                "x-dead-letter-strategy": "at-least-once",
            },
            "needs overflow reject-publish",
        ),
    ],
)
def test_what_a_quorum_queue_cannot_be_fails_at_construction(arguments, message):
    """Priority, reject-publish-dlx, and at-least-once without reject-publish (which RabbitMQ
    would silently turn into at-most-once) are refused before any declare."""
    with pytest.raises(TopologyError, match=message):
        Queue("q", arguments)


def test_a_quorum_queue_is_durable():
    """RabbitMQ has no transient quorum queues."""
    with pytest.raises(TopologyError, match="durable"):
        Queue("q", {"x-queue-type": "quorum"}, durable=False)


def test_the_export_carries_the_queue_type():
    """`verdict topology export` in quorum mode writes quorum queues a node can boot with."""
    doc = definitions(build("analysis", queue_type="quorum"))
    assert {q["arguments"]["x-queue-type"] for q in doc["queues"]} == {"quorum"}
