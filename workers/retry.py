"""What to do with a failed task: a pure decision from the error and the attempt."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from shared.errors import AnalysisError
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
