"""A job on its way through the steps, what the steps may decide about it, and the chain."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import aio_pika

from shared.constants import ATTEMPT_HEADER
from shared.deadletters import DeadLetterKind
from shared.messages import Result, Task
from shared.transport import Delivery
from workers.executor import Analysis


@dataclass(frozen=True)
class Ack:
    """Done with the delivery: it leaves the queue."""


@dataclass(frozen=True)
class DeadLetter:
    """To the DLQ with `reason`, for inspection and replay."""

    reason: str
    kind: DeadLetterKind = "failed"


@dataclass(frozen=True)
class NextAttempt:
    """`message` (the task, one attempt further) waits `delay_ms` in a retry tier."""

    message: aio_pika.Message
    delay_ms: int


Settlement = Ack | DeadLetter | NextAttempt
Outcome = Literal["ok", "failed", "skipped"]


class Lock(Protocol):
    """A claim on one (session, component), as shared.locks.ComponentLock makes it."""

    ttl_ms: int
    lost: asyncio.Event  # set when a renewal failed: another worker may own the task now

    async def acquire(self) -> bool: ...
    async def still_held(self) -> bool: ...
    async def finish(self) -> None: ...
    async def release(self) -> None: ...
    def watchdog(self) -> AbstractAsyncContextManager[None]: ...


@dataclass
class Outgoing:
    """A result about to be published; a step may change it or add headers."""

    result: Result
    headers: dict[str, Any] = field(default_factory=dict)


@dataclass
class Job:
    """One delivery on its way through the steps: what they found and what they decided.

    The results are published, in order, before the settlement is applied (reporting)."""

    delivery: Delivery
    attempt: int
    parsed: Task | None = None
    lock: Lock | None = None
    analysis: Analysis | None = None
    elapsed_ms: int = 0
    results: list[Outgoing] = field(default_factory=list)
    settlement: Settlement = Ack()
    outcome: Outcome | None = None  # counted in verdict_jobs_total; None for a retry

    @property
    def task(self) -> Task:
        """The task the delivery carries (steps after parsing only)."""
        if self.parsed is None:
            raise LookupError("the delivery has not been parsed yet")
        return self.parsed

    @property
    def held_lock(self) -> Lock:
        """The component lock (steps inside the lock only)."""
        if self.lock is None:
            raise LookupError("no lock is held for this job")
        return self.lock


Next = Callable[[Job], Awaitable[None]]


class Step(Protocol):
    """One concern around the rest of the chain."""

    async def __call__(self, job: Job, call_next: Next) -> None: ...


def chain(steps: Sequence[Step], core: Next) -> Next:
    """`steps[0]` outermost, `core` innermost: each step decides whether and when the rest runs."""
    handler = core
    for step in reversed(steps):
        handler = _bind(step, handler)
    return handler


def _bind(step: Step, call_next: Next) -> Next:
    async def run(job: Job) -> None:
        await step(job, call_next)

    return run


def attempt_of(delivery: Delivery) -> int:
    """The attempt this delivery is (1 for a first delivery); bad headers count as 1."""
    raw = (delivery.headers or {}).get(ATTEMPT_HEADER, 1)
    try:
        return max(1, int(raw))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 1
