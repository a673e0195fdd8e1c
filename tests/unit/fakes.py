"""In-memory stand-ins for a delivery, the publisher and a lock: each records what was done
to it, in one shared list of events when the order matters."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from shared.broker import task_message
from shared.errors import QueueFull
from shared.messages import Result, Task, decode_result
from shared.names import Names
from shared.signing import new_task_keys, private_task_key, sign_task

NAMES = Names("unit")


@dataclass
class FakeChannel:
    is_closed: bool = False


@dataclass
class FakeDelivery:
    """An incoming message whose ack, reject and nack are recorded in `events`."""

    body: bytes
    routing_key: str = ""
    headers: dict[str, Any] = field(default_factory=dict)
    priority: int | None = 0
    redelivered: bool = False
    message_id: str | None = None
    correlation_id: str | None = None
    content_type: str | None = "application/json"
    channel: FakeChannel = field(default_factory=FakeChannel)
    events: list[Any] = field(default_factory=list)

    async def ack(self) -> None:
        self.events.append("ack")

    async def reject(self, requeue: bool = False) -> None:
        self.events.append(("reject", requeue))

    async def nack(self, requeue: bool = True) -> None:
        self.events.append(("nack", requeue))


# Task keys of these tests: the API's private key and the workers' public one.
TASK_KEYS = new_task_keys()
RESULT_KEY = b"claims-result-key-of-at-least-32-bytes"


def delivery_of(
    task: Task, attempt: int = 1, signed: bool = True, **overrides: Any
) -> FakeDelivery:
    """The delivery of `task` as the broker hands it over from its plan queue (signed by the
    API unless `signed` is off)."""
    if signed:
        task = sign_task(private_task_key(TASK_KEYS[0]), task)
    message = task_message(task, attempt)
    fields: dict[str, Any] = {
        "body": message.body,
        "routing_key": NAMES.task_queue(task.component, task.plan_type),
        "headers": dict(message.headers),
        "priority": message.priority,
        "message_id": message.message_id,
        "correlation_id": message.correlation_id,
    }
    return FakeDelivery(**{**fields, **overrides})


class FakePublisher:
    """Records every publish in `events`; a full DLQ refuses dead letters when `dlq_full`."""

    names = NAMES

    def __init__(self, events: list[Any] | None = None, dlq_full: bool = False) -> None:
        self.events = [] if events is None else events
        self.dlq_full = dlq_full

    async def result(
        self, result: Result, priority: int = 0, headers: dict[str, Any] | None = None
    ) -> None:
        self.events.append(("result", result, priority, headers or {}))

    async def retry(self, message: Any, routing_key: str, delay_ms: int) -> None:
        self.events.append(("retry", message, routing_key, delay_ms))

    async def dead_letter(
        self,
        body: bytes,
        headers: dict[str, Any],
        reason: str,
        origin: str,
        priority: int | None = None,
    ) -> None:
        if self.dlq_full:
            raise QueueFull("dlq full")
        self.events.append(("dead_letter", reason, origin))

    def results(self) -> list[Result]:
        return [e[1] for e in self.events if isinstance(e, tuple) and e[0] == "result"]


class FakeLock:
    """A lock that is free (or held elsewhere), records its life in `events`, and can be
    lost on demand."""

    def __init__(
        self, events: list[Any], free: bool = True, ttl_ms: int = 30_000, held: bool = True
    ) -> None:
        self.events = events
        self.free = free
        self.ttl_ms = ttl_ms
        self.held = held
        self.lost = asyncio.Event()

    async def acquire(self) -> bool:
        self.events.append("lock acquired" if self.free else "lock refused")
        return self.free

    async def still_held(self) -> bool:
        return self.held

    async def finish(self) -> None:
        self.events.append("lock finished")

    async def release(self) -> None:
        self.events.append("lock released")

    @contextlib.asynccontextmanager
    async def watchdog(self) -> AsyncIterator[None]:
        yield


class FakePool:
    """A Postgres pool answering the still-needed query with `row` (or raising `error`)."""

    def __init__(self, row: dict[str, Any] | None = None, error: Exception | None = None):
        self.row, self.error, self.queries = row, error, 0

    async def fetchrow(self, sql: str, *args: Any) -> dict[str, Any] | None:
        self.queries += 1
        if self.error is not None:
            raise self.error
        return self.row


def decoded(message: Any) -> Result:
    return decode_result(message.body)
