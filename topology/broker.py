"""Talk to RabbitMQ about the topology: declare over AMQP, verify over the management API."""

from __future__ import annotations

from typing import Any, cast
from urllib.parse import quote, unquote, urlsplit

import aio_pika
import httpx
from aiormq.abc import FieldTable

from shared.errors import TopologyError
from topology.spec import QueueArguments, Topology


async def declare(channel: aio_pika.abc.AbstractChannel, topology: Topology) -> None:
    """Declare every object; idempotent as long as the arguments have not drifted."""
    exchanges = {}
    for ex in topology.exchanges:
        exchanges[ex.name] = await channel.declare_exchange(
            ex.name, aio_pika.ExchangeType(ex.type), durable=ex.durable
        )
    queues = {}
    try:
        for q in topology.queues:
            queues[q.name] = await channel.declare_queue(
                q.name, durable=q.durable, arguments=_field_table(q.arguments)
            )
    except aio_pika.exceptions.ChannelPreconditionFailed as exc:
        raise TopologyError(f"queue arguments differ from the live broker: {exc}") from exc
    for b in topology.bindings:
        await queues[b.queue].bind(exchanges[b.exchange], b.routing_key)


def _field_table(arguments: QueueArguments) -> FieldTable:
    """Typed x-arguments as the plain table AMQP sends (ints and strings, checked when the
    queue was constructed)."""
    return cast(FieldTable, dict(arguments))


def management_url(amqp_url: str, explicit: str | None) -> tuple[str, str, tuple[str, str]]:
    """Base URL, vhost and credentials of the management API for an AMQP URL."""
    parts = urlsplit(amqp_url)
    vhost = unquote(parts.path[1:]) if len(parts.path) > 1 else "/"
    auth = (unquote(parts.username or ""), unquote(parts.password or ""))
    if explicit:
        mparts = urlsplit(explicit)
        if mparts.username:
            auth = (unquote(mparts.username), unquote(mparts.password or ""))
        base = (
            f"{mparts.scheme}://{mparts.hostname}:{mparts.port or 15672}{mparts.path.rstrip('/')}"
        )
    else:
        scheme = "https" if parts.scheme == "amqps" else "http"
        base = f"{scheme}://{parts.hostname}:15672"
    return base, vhost, auth


async def verify(topology: Topology, amqp_url: str, management: str | None = None) -> list[str]:
    """Differences between the spec and the live broker; an empty list means they agree."""
    base, vhost, auth = management_url(amqp_url, management)
    v = quote(vhost, safe="")
    async with httpx.AsyncClient(base_url=f"{base}/api", auth=auth, timeout=10) as http:
        try:
            live_q = _by_name(await _get(http, f"/queues/{v}?columns=name,durable,arguments"))
            live_x = _by_name(await _get(http, f"/exchanges/{v}?columns=name,type,durable"))
            live_b = await _get(http, f"/bindings/{v}")
        except httpx.HTTPError as exc:
            raise TopologyError(f"management API at {base} is unreachable: {exc}") from exc
    return [
        *_exchange_drift(topology, live_x),
        *_queue_drift(topology, live_q),
        *_binding_drift(topology, live_b),
    ]


async def _get(http: httpx.AsyncClient, path: str) -> Any:
    response = await http.get(path)
    response.raise_for_status()
    return response.json()


def _by_name(items: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {item["name"]: item for item in items}


def _exchange_drift(topology: Topology, live: dict[str, dict[str, Any]]) -> list[str]:
    drift = []
    for ex in topology.exchanges:
        got = live.get(ex.name)
        if got is None:
            drift.append(f"exchange {ex.name}: missing")
        elif (got["type"], got["durable"]) != (ex.type, ex.durable):
            drift.append(
                f"exchange {ex.name}: {got['type']}/durable={got['durable']}, want {ex.type}"
            )
    return drift


def _queue_drift(topology: Topology, live: dict[str, dict[str, Any]]) -> list[str]:
    drift = []
    for q in topology.queues:
        got = live.get(q.name)
        if got is None:
            drift.append(f"queue {q.name}: missing")
            continue
        if got["durable"] != q.durable:
            drift.append(f"queue {q.name}: durable={got['durable']}, want {q.durable}")
        if got.get("arguments", {}) != q.arguments:
            drift.append(f"queue {q.name}: arguments {got.get('arguments')}, want {q.arguments}")
    return drift


def _binding_drift(topology: Topology, live: list[dict[str, Any]]) -> list[str]:
    have = {(b["source"], b["destination"], b["routing_key"]) for b in live}
    return [
        f"binding {b.exchange} -> {b.queue} ({b.routing_key!r}): missing"
        for b in topology.bindings
        if (b.exchange, b.queue, b.routing_key) not in have
    ]


def definitions(topology: Topology, vhost: str = "/") -> dict[str, Any]:
    """A RabbitMQ definitions document (no users: credentials never leave the environment)."""
    return {
        "exchanges": [
            {
                "name": e.name,
                "vhost": vhost,
                "type": e.type,
                "durable": e.durable,
                "auto_delete": False,
                "internal": False,
                "arguments": {},
            }
            for e in topology.exchanges
        ],
        "queues": [
            {
                "name": q.name,
                "vhost": vhost,
                "durable": q.durable,
                "auto_delete": False,
                "arguments": q.arguments,
            }
            for q in topology.queues
        ],
        "bindings": [
            {
                "source": b.exchange,
                "vhost": vhost,
                "destination": b.queue,
                "destination_type": "queue",
                "routing_key": b.routing_key,
                "arguments": {},
            }
            for b in topology.bindings
        ],
    }
