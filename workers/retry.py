"""What to do with a failed task: a pure decision from the error and the attempt."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from shared.errors import AnalysisError, PublishError
from workers.reasons import user_reason


@dataclass(frozen=True)
class RetryLater:
    """Publish a copy with `attempt` to the tier holding it for `delay_ms`."""

    attempt: int
    delay_ms: int


@dataclass(frozen=True)
class GiveUp:
    """Report a failure result telling `user_reason`; dead-letter the original only when
    `replayable`, else ack it: the failure result is the whole answer."""

    reason: str  # the full detail, for logs and the dead letter
    user_reason: str
    replayable: bool


# A delivery whose run the broker refused to take the output of (a quorum queue with no
# leader while a node is lost, a queue at its cap) waits before it is handed back: handed back
# at once it returns at once and is refused again, and a quorum queue's delivery limit
# (QUEUE_DELIVERY_LIMIT, 10) dropped such a task within 1.4 s of a node loss. Doubling from
# 0.25 s, at most 5 s: ten deliveries span about half a minute of an election.
REFUSED_PAUSE_S = 0.25
REFUSED_PAUSE_MAX_S = 5.0


def handback_pause_s(error: BaseException, earlier_deliveries: int) -> float:
    """How long to hold a delivery whose run ended in `error` before handing it back: for a
    broker's refusal of what the run published (PublishError: refused, no quorum, broker
    away), REFUSED_PAUSE_S doubled for each earlier delivery of it, at most
    REFUSED_PAUSE_MAX_S; otherwise none."""
    if not isinstance(error, PublishError):
        return 0.0
    return min(REFUSED_PAUSE_MAX_S, REFUSED_PAUSE_S * 2 ** min(max(earlier_deliveries, 0), 16))


def earlier_deliveries(headers: Mapping[str, Any], redelivered: bool | None) -> int:
    """How often a delivery was delivered before: a quorum queue's `x-delivery-count`, else
    one when it is marked redelivered."""
    count = headers.get("x-delivery-count")
    if isinstance(count, int) and not isinstance(count, bool) and count >= 0:
        return count
    return 1 if redelivered else 0


def backoff_ms(attempt: int, base_ms: int) -> int:
    """Delay after failed attempt `attempt` (1-based): base × 2^(attempt-1)."""
    return base_ms * 2 ** (attempt - 1)


def is_retryable(error: BaseException) -> bool:
    """Analysis errors say for themselves (AnalysisTimeout says no: the same input takes as
    long again); lost connections, a slow step and anything we did not classify may pass, and
    max_attempts bounds them anyway."""
    if isinstance(error, AnalysisError):
        return error.retryable
    return True


def decide(
    error: BaseException, attempt: int, max_attempts: int, base_ms: int
) -> RetryLater | GiveUp:
    """Retry with backoff while attempts remain and the error may pass; else give up.

    An error that cannot pass ends as a failure result alone; a transient one that ran out of
    attempts is dead-lettered as well, to be replayed once its cause is fixed.
    """
    reason, told = describe(error), user_reason(error)
    if not is_retryable(error):
        return GiveUp(f"non-retryable: {reason}", told, replayable=False)
    if attempt >= max_attempts:
        return GiveUp(
            f"gave up after {attempt} attempts: {reason}",
            f"{told} (gave up after {attempt} attempts)",
            replayable=True,
        )
    return RetryLater(attempt + 1, backoff_ms(attempt, base_ms))


def describe(error: BaseException) -> str:
    """A one-line reason for logs and dead-letter headers (clients read `user_reason`)."""
    if isinstance(error, asyncio.TimeoutError):
        return "timed out"
    text = str(error) or type(error).__name__
    return f"{type(error).__name__}: {text}"[:500]
