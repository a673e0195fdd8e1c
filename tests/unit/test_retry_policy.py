"""Retry decisions: exponential backoff, attempt limits, non-retryable errors."""

from shared.errors import AnalysisError, MediaUnavailable, RetryableAnalysisError
from workers.retry import GiveUp, RetryLater, backoff_ms, decide


def test_backoff_doubles_from_the_base():
    """30 s × 2^(attempt-1): 30 s, 60 s, 120 s."""
    assert [backoff_ms(a, 30_000) for a in (1, 2, 3)] == [30_000, 60_000, 120_000]


def test_retryable_failure_retries_with_the_next_attempt():
    """Attempt 1 of 3 fails → attempt 2 after base delay."""
    assert decide(RetryableAnalysisError("503"), 1, 3, 100) == RetryLater(2, 100)
    assert decide(TimeoutError(), 2, 3, 100) == RetryLater(3, 200)


def test_exhausted_attempts_give_up_with_the_reason():
    """The last attempt's failure is final and says why."""
    decision = decide(RetryableAnalysisError("upstream 503"), 3, 3, 100)
    assert isinstance(decision, GiveUp)
    assert "3 attempts" in decision.reason and "upstream 503" in decision.reason


def test_non_retryable_errors_give_up_at_once():
    """Retrying cannot make a missing service appear."""
    for error in (MediaUnavailable("no transcription service"), AnalysisError("bad image")):
        assert isinstance(decide(error, 1, 3, 100), GiveUp)


def test_unclassified_errors_are_retried():
    """An unexpected error may be transient; attempts bound it."""
    assert isinstance(decide(KeyError("x"), 1, 3, 100), RetryLater)
