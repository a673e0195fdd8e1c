"""The transport seam: what a process publishes through and what it is handed to settle.

Two transports carry tasks and results (TRANSPORT, chosen once per deployment): RabbitMQ
(`shared.broker`) and a table of PostgreSQL (`shared.job_queue`). Everything else — steps,
scheduling, retries, dead letters, the fan-in — sees only these two shapes.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import aio_pika

    from shared.messages import Result, Task
    from shared.names import Names


class Link(Protocol):
    """What carries a delivery: once closed, the delivery returns to its queue by itself."""

    @property
    def is_closed(self) -> bool: ...


class Delivery(Protocol):
    """A message handed to a consumer, to be acked, re-queued or dead-lettered: an AMQP
    delivery, or a claimed row of the PostgreSQL transport."""

    @property
    def body(self) -> bytes: ...
    @property
    def headers(self) -> Mapping[str, Any]: ...
    @property
    def priority(self) -> int | None: ...
    @property
    def redelivered(self) -> bool | None: ...
    @property
    def routing_key(self) -> str | None: ...
    @property
    def message_id(self) -> str | None: ...
    @property
    def correlation_id(self) -> str | None: ...
    @property
    def content_type(self) -> str | None: ...
    @property
    def channel(self) -> Link: ...

    async def ack(self, multiple: bool = False) -> None: ...
    async def nack(self, multiple: bool = False, requeue: bool = True) -> None: ...
    async def reject(self, requeue: bool = False) -> None: ...


class Outbox(Protocol):
    """Where a process publishes tasks, results, retries and dead letters."""

    names: Names

    async def send(self, exchange: str, routing_key: str, message: aio_pika.Message) -> None: ...
    async def task(self, task: Task, attempt: int = 1, tenant: str | None = None) -> None: ...
    async def result(
        self, result: Result, priority: int = 0, headers: dict[str, Any] | None = None
    ) -> None: ...
    async def retry(self, message: aio_pika.Message, routing_key: str, delay_ms: int) -> None: ...
    async def dead_letter(
        self,
        body: bytes,
        headers: dict[str, Any],
        reason: str,
        origin: str,
        priority: int | None = None,
    ) -> None: ...
    async def close(self) -> None: ...


def dead_letters_of(transport: str) -> ModuleType:
    """The dead-letter operations of a transport (`verdict dlq`, the console): both modules
    have list_letters, letter, replay and purge, on an operator's broker connection
    (`shared.dead_letter_queue`) or on a pool of the database (`shared.dead_letter_table`)."""
    if transport == "postgres":
        from shared import dead_letter_table

        return dead_letter_table
    from shared import dead_letter_queue

    return dead_letter_queue
