"""The pipeline's broker objects as frozen values, derived from a prefix by pure functions."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from shared.constants import MAX_PRIORITY, PLANS, QUEUE_COMPONENTS
from shared.names import Names


@dataclass(frozen=True)
class Exchange:
    name: str
    type: str  # "topic" | "fanout"
    durable: bool = True


@dataclass(frozen=True)
class Queue:
    name: str
    arguments: dict[str, Any] = field(default_factory=dict, hash=False)
    durable: bool = True


@dataclass(frozen=True)
class Binding:
    exchange: str
    queue: str
    routing_key: str


@dataclass(frozen=True)
class Topology:
    exchanges: tuple[Exchange, ...]
    queues: tuple[Queue, ...]
    bindings: tuple[Binding, ...]

    def queue(self, name: str) -> Queue:
        """The queue called `name`; KeyError when the spec has none."""
        for q in self.queues:
            if q.name == name:
                return q
        raise KeyError(name)


def task_queue_arguments(names: Names, ttl_ms: int, max_length: int) -> dict[str, Any]:
    """Arguments of every plan queue (SPEC §4). They cannot change after declaration."""
    return {
        "x-max-priority": MAX_PRIORITY,
        "x-message-ttl": ttl_ms,
        "x-dead-letter-exchange": "",
        "x-dead-letter-routing-key": names.dlq,
        "x-max-length": max_length,
        "x-overflow": "reject-publish",
    }


def dlq_arguments(max_length: int, max_bytes: int) -> dict[str, Any]:
    """The DLQ is capped by count and bytes and refuses past the cap rather than drop its
    oldest letters (the default, drop-head, would lose them without a trace): a refused
    publish is a nack the sender sees and acts on."""
    return {
        "x-max-length": max_length,
        "x-max-length-bytes": max_bytes,
        "x-overflow": "reject-publish",
    }


def retry_queue_arguments(names: Names, delay_ms: int) -> dict[str, Any]:
    """A tier holds a message for `delay_ms`, then dead-letters it to the main exchange.

    No dead-letter routing key: the message keeps the routing key it was published with,
    so it returns to the plan queue it came from. One TTL per queue (not per message)
    because RabbitMQ expires messages head-first only.
    """
    return {"x-message-ttl": delay_ms, "x-dead-letter-exchange": names.exchange}


def build(
    prefix: str,
    *,
    ttl_ms: int = 86_400_000,
    max_length: int = 100_000,
    retry_delays_ms: tuple[int, ...] = (1_000, 30_000, 60_000),
    dlq_max_length: int = 100_000,
    dlq_max_bytes: int = 1_073_741_824,
) -> Topology:
    """The whole topology of one deployment."""
    names = Names(prefix)
    task_args = task_queue_arguments(names, ttl_ms, max_length)
    task_queues = [
        Queue(names.task_queue(c, p), task_args) for c in QUEUE_COMPONENTS for p in PLANS
    ]
    # Results carry their task's priority: when aggregators fall behind, high tiers go first.
    # Top-tier results have a queue of their own: an aggregator consumes it with a prefetch of
    # its own, so they are delivered even while its buffer is full of lower-tier results.
    results_args = {
        "x-max-priority": MAX_PRIORITY,
        "x-dead-letter-exchange": "",
        "x-dead-letter-routing-key": names.dlq,
    }
    results = Queue(names.results, results_args)
    urgent_results = Queue(names.urgent_results, results_args)
    tiers = [
        (
            Exchange(names.retry_tier(d), "fanout"),
            Queue(names.retry_tier(d), retry_queue_arguments(names, d)),
        )
        for d in sorted(set(retry_delays_ms))
    ]
    bindings = [Binding(names.exchange, q.name, q.name) for q in task_queues]
    bindings.append(Binding(names.exchange, names.results, f"{names.results}.*"))
    bindings.append(Binding(names.exchange, names.urgent_results, f"{names.urgent_results}.*"))
    bindings += [Binding(ex.name, q.name, "") for ex, q in tiers]
    return Topology(
        exchanges=(Exchange(names.exchange, "topic"), *(ex for ex, _ in tiers)),
        queues=(
            *task_queues,
            results,
            urgent_results,
            Queue(names.dlq, dlq_arguments(dlq_max_length, dlq_max_bytes)),
            *(q for _, q in tiers),
        ),
        bindings=tuple(bindings),
    )


def from_settings(settings: Any) -> Topology:
    """The topology a Settings object describes."""
    return build(
        settings.topology_prefix,
        ttl_ms=settings.queue_message_ttl_ms,
        max_length=settings.queue_max_length,
        retry_delays_ms=settings.retry_delays_ms(),
        dlq_max_length=settings.dlq_max_length,
        dlq_max_bytes=settings.dlq_max_bytes,
    )
