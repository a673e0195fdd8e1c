"""Who may do what on the broker: one RabbitMQ user per role, least privilege, as data.

Derived from the same names as the topology, so a queue and the permission to read it cannot
drift apart. RabbitMQ checks three regular expressions per user and vhost (configure: declare
or delete; write: publish to an exchange, bind a queue; read: consume, or bind from an
exchange) and, on topic exchanges, one more per exchange on the routing key of each publish.

    role               configure  write (exchanges)                 read (queues)
    topology           its prefix its prefix                        its prefix
    api                nothing    the task exchange, task keys only  nothing
    worker-{component} nothing    the task exchange (results of its   its own plan queues
                                  component; media: the four task
                                  families), retry tiers, dead letters
    aggregator         nothing    retry tiers, dead letters          the results queues
    operator           nothing    the task exchange, task and        the DLQ
                                  result keys (replays)

No role but `topology` may declare anything, so none can bind a spy queue to the exchange.
Retry tiers are fanout exchanges whose messages return to the task exchange with the routing
key they were published with, out of reach of topic permissions: a role that may park a
message there can route it anywhere. That is why results are also authenticated (signed per
component) and tasks carry the plan recorded for their session: the permissions narrow what
a stolen credential can do, the signatures decide what is believed.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass

from shared.constants import ANALYSIS_COMPONENTS, MEDIA_PREPROCESS, PLANS, QUEUE_COMPONENTS
from shared.names import Names
from topology.spec import build

NOTHING = "^$"
# User tags: `management` lets the topology role read its vhost's objects from the HTTP API
# (`verify`); no role is an administrator. The operator's console reads the queue stats of
# its vhost with the same tag; `monitoring` would add every vhost's and the node's.
TOPOLOGY_TAGS = ("management",)
OPERATOR_TAGS = ("management",)


@dataclass(frozen=True)
class TopicPermission:
    """Routing keys a user may publish with (write) to one topic exchange."""

    exchange: str
    write: str
    read: str = NOTHING


@dataclass(frozen=True)
class Role:
    """A RabbitMQ user of one deployment and what it may do in the deployment's vhost."""

    role: str
    user: str
    configure: str
    write: str
    read: str
    topic: TopicPermission | None = None
    tags: tuple[str, ...] = ()


def _any_of(names: Iterable[str]) -> str:
    """A regex matching exactly one of `names`."""
    return "^(" + "|".join(re.escape(n) for n in names) + ")$"


def _task_keys(names: Names, components: Iterable[str]) -> list[str]:
    return [names.task_queue(c, p) for c in components for p in PLANS]


def _result_keys(names: Names, components: Iterable[str]) -> list[str]:
    return [names.result_key(c, urgent) for c in components for urgent in (False, True)]


def _parking(names: Names, retry_delays_ms: Iterable[int]) -> list[str]:
    """Exchanges a consumer republishes to: its retry tiers and the dead-letter exchange."""
    return [*(names.retry_tier(d) for d in sorted(set(retry_delays_ms))), names.dead_letters]


def worker_role(names: Names, component: str, retry_delays_ms: Iterable[int]) -> Role:
    """Workers of `component`: consume their own plan queues; publish their results (media:
    the follow-up tasks and a failure result for each analysis component), retries and dead
    letters."""
    reports = ANALYSIS_COMPONENTS if component == MEDIA_PREPROCESS else (component,)
    keys = _result_keys(names, reports)
    if component == MEDIA_PREPROCESS:
        keys += _task_keys(names, ANALYSIS_COMPONENTS)
    return Role(
        role=f"worker-{component}",
        user=f"{names.prefix}-worker-{component}",
        configure=NOTHING,
        write=_any_of([names.exchange, *_parking(names, retry_delays_ms)]),
        read=_any_of(_task_keys(names, [component])),
        topic=TopicPermission(names.exchange, write=_any_of(keys)),
    )


def operator_role(names: Names) -> Role:
    """`verdict dlq` and the console: browse, replay and purge the DLQ. A replay goes back
    with its origin routing key, a task's or a result's (results stay signed: one forged by
    this role is dead-lettered as unauthenticated); no other queue is readable."""
    keys = [*_task_keys(names, QUEUE_COMPONENTS), *_result_keys(names, ANALYSIS_COMPONENTS)]
    return Role(
        role="operator",
        user=f"{names.prefix}-operator",
        configure=NOTHING,
        write=_any_of([names.exchange]),
        read=_any_of([names.dlq]),
        topic=TopicPermission(names.exchange, write=_any_of(keys)),
        tags=OPERATOR_TAGS,
    )


def roles(names: Names, retry_delays_ms: Iterable[int]) -> tuple[Role, ...]:
    """Every role of one deployment."""
    delays = tuple(retry_delays_ms)
    # Exactly this deployment's objects, by name: a pattern on the prefix would also match
    # another deployment's whose prefix extends it (`analysis` and `analysis.x`).
    spec = build(names.prefix, retry_delays_ms=delays)
    own = _any_of([*(e.name for e in spec.exchanges), *(q.name for q in spec.queues)])
    api = Role(
        role="api",
        user=f"{names.prefix}-api",
        configure=NOTHING,
        write=_any_of([names.exchange]),
        read=NOTHING,
        topic=TopicPermission(names.exchange, write=_any_of(_task_keys(names, QUEUE_COMPONENTS))),
    )
    aggregator = Role(
        role="aggregator",
        user=f"{names.prefix}-aggregator",
        configure=NOTHING,
        write=_any_of(_parking(names, delays)),
        read=_any_of([names.results, names.urgent_results]),
    )
    # Declaring a queue whose dead-letter exchange is the default one takes write on it.
    declares = _any_of(
        [*(e.name for e in spec.exchanges), *(q.name for q in spec.queues), "amq.default"]
    )
    topology = Role("topology", f"{names.prefix}-topology", own, declares, own, tags=TOPOLOGY_TAGS)
    workers = tuple(worker_role(names, c, delays) for c in QUEUE_COMPONENTS)
    return (topology, api, aggregator, *workers, operator_role(names))


def password_hash(password: str, salt: bytes | None = None) -> str:
    """RabbitMQ's `rabbit_password_hashing_sha256`: base64(salt ‖ SHA-256(salt ‖ password))
    with a 4-byte salt, as definitions files carry it (never the password itself)."""
    salt = os.urandom(4) if salt is None else salt
    digest = hashlib.sha256(salt + password.encode()).digest()
    return base64.b64encode(salt + digest).decode()
