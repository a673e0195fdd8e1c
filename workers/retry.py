"""What to do with a failed task: a pure decision from the error and the attempt."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from shared.errors import AnalysisError


@dataclass(frozen=True)
class RetryLater:
    """Publish a copy with `attempt` to the tier holding it for `delay_ms`."""

    attempt: int
    delay_ms: int


@dataclass(frozen=True)
class GiveUp:
    """Report a failure result and dead-letter the original."""

    reason: str


def backoff_ms(attempt: int, base_ms: int) -> int:
    """Delay after failed attempt `attempt` (1-based): base × 2^(attempt-1)."""
    return base_ms * 2 ** (attempt - 1)


def is_retryable(error: BaseException) -> bool:
    """Analysis errors say for themselves; timeouts, lost connections and anything we did not
    classify may pass, and max_attempts bounds them anyway."""
    if isinstance(error, AnalysisError):
        return error.retryable
    return True


def decide(
    error: BaseException, attempt: int, max_attempts: int, base_ms: int
) -> RetryLater | GiveUp:
    """Retry with backoff while attempts remain and the error may pass; else give up."""
    reason = describe(error)
    if not is_retryable(error):
        return GiveUp(f"non-retryable: {reason}")
    if attempt >= max_attempts:
        return GiveUp(f"gave up after {attempt} attempts: {reason}")
    return RetryLater(attempt + 1, backoff_ms(attempt, base_ms))


def describe(error: BaseException) -> str:
    """A one-line reason for logs, headers and failure results."""
    if isinstance(error, asyncio.TimeoutError):
        return "timed out"
    text = str(error) or type(error).__name__
    return f"{type(error).__name__}: {text}"[:500]
