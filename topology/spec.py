"""The pipeline's broker objects as frozen values, derived from a prefix by pure functions."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, TypedDict

from shared.constants import MAX_PRIORITY, PLANS, QUEUE_COMPONENTS, QueueType
from shared.errors import TopologyError
from shared.names import Names

if TYPE_CHECKING:
    from shared.settings import Settings

ExchangeType = Literal["topic", "fanout", "direct"]
EXCHANGE_TYPES: tuple[ExchangeType, ...] = ("topic", "fanout", "direct")
# What a capped queue does when full: refuse new messages (the sender sees a nack), refuse
# and dead-letter them, or drop its oldest (RabbitMQ's default, which loses them silently).
Overflow = Literal["reject-publish", "reject-publish-dlx", "drop-head"]
# AMQP short strings (queue and exchange names) hold at most 255 bytes.
MAX_NAME_BYTES = 255
# RabbitMQ supports priorities 1..255 on classic queues; more than 10 costs memory for nothing.
MAX_QUEUE_PRIORITY = 255

# The x-arguments this project sets, each with its type: a misspelt argument is a type error,
# not a queue that silently lacks its cap.
QueueArguments = TypedDict(
    "QueueArguments",
    {
        "x-max-priority": int,
        "x-message-ttl": int,
        "x-dead-letter-exchange": str,
        "x-dead-letter-routing-key": str,
        "x-max-length": int,
        "x-max-length-bytes": int,
        "x-overflow": Overflow,
        "x-queue-type": QueueType,
        "x-delivery-limit": int,
        "x-dead-letter-strategy": Literal["at-most-once", "at-least-once"],
    },
    total=False,
)


def _check_name(kind: str, name: str) -> None:
    if not name or len(name.encode()) > MAX_NAME_BYTES:
        raise TopologyError(f"{kind} name must be 1..{MAX_NAME_BYTES} bytes: {name!r}")


@dataclass(frozen=True)
class Exchange:
    """An exchange: its name, type and durability."""

    name: str
    type: ExchangeType
    durable: bool = True

    def __post_init__(self) -> None:
        _check_name("exchange", self.name)
        if self.type not in EXCHANGE_TYPES:
            raise TopologyError(f"exchange {self.name}: unknown type {self.type!r}")


@dataclass(frozen=True)
class Queue:
    """A queue with its x-arguments, which cannot change once it is declared."""

    name: str
    arguments: QueueArguments = field(default_factory=lambda: QueueArguments(), hash=False)
    durable: bool = True

    def __post_init__(self) -> None:
        _check_name("queue", self.name)
        args = self.arguments
        if not 1 <= args.get("x-max-priority", 1) <= MAX_QUEUE_PRIORITY:
            raise TopologyError(f"queue {self.name}: x-max-priority outside 1..255")
        for key in ("x-message-ttl", "x-max-length", "x-max-length-bytes"):
            value = args.get(key, 0)
            if not isinstance(value, int) or value < 0:
                raise TopologyError(f"queue {self.name}: {key} must be a non-negative int")
        if "x-dead-letter-routing-key" in args and "x-dead-letter-exchange" not in args:
            raise TopologyError(f"queue {self.name}: a dead-letter routing key needs an exchange")
        if args.get("x-queue-type") == "quorum":
            _check_quorum(self.name, args, self.durable)

    @property
    def type(self) -> QueueType:
        return self.arguments.get("x-queue-type", "classic")


def _check_quorum(name: str, args: QueueArguments, durable: bool) -> None:
    """What RabbitMQ 3.10 refuses or ignores on a quorum queue, caught before any I/O."""
    if not durable:
        raise TopologyError(f"quorum queue {name} must be durable")
    if "x-max-priority" in args:
        # Quorum queues ignore message priorities before RabbitMQ 4.0.
        raise TopologyError(f"quorum queue {name}: x-max-priority is not supported")
    if args.get("x-overflow") == "reject-publish-dlx":
        raise TopologyError(f"quorum queue {name}: overflow reject-publish-dlx is not supported")
    if args.get("x-dead-letter-strategy") == "at-least-once" and (
        args.get("x-overflow") != "reject-publish"
    ):
        # Otherwise RabbitMQ silently falls back to at-most-once dead-lettering.
        raise TopologyError(f"quorum queue {name}: at-least-once needs overflow reject-publish")


@dataclass(frozen=True)
class Binding:
    """Messages published to `exchange` with a key matching `routing_key` go to `queue`."""

    exchange: str
    queue: str
    routing_key: str


@dataclass(frozen=True)
class Topology:
    """Every object of one deployment. Construction checks that it is whole: names unique,
    every binding between declared objects, every dead-letter route leading somewhere."""

    exchanges: tuple[Exchange, ...]
    queues: tuple[Queue, ...]
    bindings: tuple[Binding, ...]

    def __post_init__(self) -> None:
        problems = _incoherences(self)
        if problems:
            raise TopologyError("incoherent topology: " + "; ".join(problems))

    def queue(self, name: str) -> Queue:
        """The queue called `name`; KeyError when the spec has none."""
        for q in self.queues:
            if q.name == name:
                return q
        raise KeyError(name)


def task_queue_arguments(names: Names, ttl_ms: int, max_length: int) -> QueueArguments:
    """Arguments of every plan queue (docs/architecture.md §3.2). They cannot change after
    declaration."""
    return {
        "x-max-priority": MAX_PRIORITY,
        "x-message-ttl": ttl_ms,
        "x-dead-letter-exchange": "",
        "x-dead-letter-routing-key": names.dlq,
        "x-max-length": max_length,
        "x-overflow": "reject-publish",
    }


def dlq_arguments(max_length: int, max_bytes: int) -> QueueArguments:
    """The DLQ is capped by count and bytes and refuses past the cap rather than drop its
    oldest letters (the default, drop-head, would lose them without a trace): a refused
    publish is a nack the sender sees and acts on."""
    return {
        "x-max-length": max_length,
        "x-max-length-bytes": max_bytes,
        "x-overflow": "reject-publish",
    }


def retry_queue_arguments(names: Names, delay_ms: int) -> QueueArguments:
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
    queue_type: QueueType = "classic",
    delivery_limit: int = 10,
) -> Topology:
    """The whole topology of one deployment; `queue_type` applies to every queue, and
    `delivery_limit` to quorum queues only."""
    names = Names(prefix)
    as_type: Callable[[QueueArguments], QueueArguments] = (
        (lambda args: quorum_arguments(args, delivery_limit))
        if queue_type == "quorum"
        else (lambda args: args)
    )
    task_args = as_type(task_queue_arguments(names, ttl_ms, max_length))
    task_queues = [
        Queue(names.task_queue(c, p), task_args) for c in QUEUE_COMPONENTS for p in PLANS
    ]
    # Results carry their task's priority: when aggregators fall behind, high tiers go first.
    # Top-tier results have a queue of their own: an aggregator consumes it with a prefetch of
    # its own, so they are delivered even while its buffer is full of lower-tier results.
    results_args = as_type(
        {
            "x-max-priority": MAX_PRIORITY,
            "x-dead-letter-exchange": "",
            "x-dead-letter-routing-key": names.dlq,
        }
    )
    results = Queue(names.results, results_args)
    urgent_results = Queue(names.urgent_results, results_args)
    tiers = [
        (
            Exchange(names.retry_tier(d), "fanout"),
            Queue(names.retry_tier(d), as_type(retry_queue_arguments(names, d))),
        )
        for d in sorted(set(retry_delays_ms))
    ]
    bindings = [Binding(names.exchange, q.name, q.name) for q in task_queues]
    bindings.append(Binding(names.exchange, names.results, f"{names.results}.*"))
    bindings.append(Binding(names.exchange, names.urgent_results, f"{names.urgent_results}.*"))
    bindings += [Binding(ex.name, q.name, "") for ex, q in tiers]
    bindings.append(Binding(names.dead_letters, names.dlq, ""))
    return Topology(
        exchanges=(
            Exchange(names.exchange, "topic"),
            Exchange(names.dead_letters, "fanout"),
            *(ex for ex, _ in tiers),
        ),
        queues=(
            *task_queues,
            results,
            urgent_results,
            Queue(names.dlq, as_type(dlq_arguments(dlq_max_length, dlq_max_bytes))),
            *(q for _, q in tiers),
        ),
        bindings=tuple(bindings),
    )


def quorum_arguments(arguments: QueueArguments, delivery_limit: int) -> QueueArguments:
    """The same queue as a quorum queue: no priority (ignored before RabbitMQ 4.0; tier
    precedence comes from the worker-side scheduler across plan queues), a delivery limit
    (a message returned unacked more often is dead-lettered: a task that kills its worker
    stops circulating), and at-least-once dead-lettering, which needs reject-publish.

    The delivery limit goes only on a queue that dead-letters: past it RabbitMQ drops a
    message with nowhere to go. The DLQ has none: browsing it (get, then requeue) counts as
    a delivery on a quorum queue, and a limit there would drop every letter after that many
    looks. (RabbitMQ 4.0 sets a default limit of 20 on every quorum queue; there the DLQ
    needs `x-delivery-limit: -1` by policy, docs/architecture.md §3.6.1.)"""
    quorum = arguments.copy()
    quorum.pop("x-max-priority", None)
    quorum["x-queue-type"] = "quorum"
    quorum["x-overflow"] = "reject-publish"
    if "x-dead-letter-exchange" in arguments:
        quorum["x-delivery-limit"] = delivery_limit
        quorum["x-dead-letter-strategy"] = "at-least-once"
    return quorum


def from_settings(settings: Settings) -> Topology:
    """The topology a Settings object describes."""
    return build(
        settings.topology_prefix,
        ttl_ms=settings.queue_message_ttl_ms,
        max_length=settings.queue_max_length,
        retry_delays_ms=settings.retry_delays_ms(),
        dlq_max_length=settings.dlq_max_length,
        dlq_max_bytes=settings.dlq_max_bytes,
        queue_type=settings.queue_type,
        delivery_limit=settings.queue_delivery_limit,
    )


def _incoherences(topology: Topology) -> list[str]:
    """What makes a topology unusable: duplicate names, bindings to undeclared objects,
    dead-letter routes to exchanges or queues that do not exist."""
    exchanges = [e.name for e in topology.exchanges]
    queues = [q.name for q in topology.queues]
    problems = [f"exchange {n} declared twice" for n in _duplicates(exchanges)]
    problems += [f"queue {n} declared twice" for n in _duplicates(queues)]
    for b in topology.bindings:
        if b.exchange not in exchanges:
            problems.append(f"binding to {b.queue} from undeclared exchange {b.exchange}")
        if b.queue not in queues:
            problems.append(f"binding from {b.exchange} to undeclared queue {b.queue}")
    for q in topology.queues:
        dlx = q.arguments.get("x-dead-letter-exchange")
        if dlx and dlx not in exchanges:
            problems.append(f"queue {q.name} dead-letters to undeclared exchange {dlx}")
        dlk = q.arguments.get("x-dead-letter-routing-key")
        if dlx == "" and dlk is not None and dlk not in queues:
            problems.append(f"queue {q.name} dead-letters to undeclared queue {dlk}")
    return problems


def _duplicates(names: list[str]) -> set[str]:
    return {n for n in names if names.count(n) > 1}
