"""Retry decisions: exponential backoff, attempt limits, non-retryable errors."""

from shared.errors import AnalysisError, AnalysisTimeout, MediaUnavailable, RetryableAnalysisError
from workers.analysis.errors import MediaPathRefused
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


def test_a_task_past_its_timeout_fails_at_once_and_is_not_dead_lettered():
    """The same input takes as long again: one timeout is a `timeout` failure result, not
    3 × the timeout spent retrying it, and there is nothing to replay."""
    decision = decide(AnalysisTimeout(120), 1, 3, 100)
    assert decision == GiveUp(
        "non-retryable: AnalysisTimeout: analysis took longer than 120 s",
        "timeout: analysis took longer than 120 s",
        replayable=False,
    )


def test_an_input_that_cannot_be_analysed_is_a_failure_result_not_a_dead_letter():
    """A refused media path or a missing service ends with the failure result alone; its
    detail goes to the log, the client reads the problem."""
    decision = decide(MediaPathRefused("media_root is not configured"), 1, 3, 100)
    assert isinstance(decision, GiveUp) and not decision.replayable
    assert decision.user_reason == "the media file could not be read"
    assert "media_root" in decision.reason


def test_exhausted_retries_are_replayable_and_told_in_user_terms():
    """A transient error that ran out of attempts goes to the DLQ for a replay; the client
    reads the problem and the attempts, not the exception."""
    decision = decide(RetryableAnalysisError("upstream 503 from llm.internal"), 3, 3, 100)
    assert isinstance(decision, GiveUp) and decision.replayable
    assert decision.user_reason == (
        "a service the analysis needs is unavailable (gave up after 3 attempts)"
    )


def test_a_refused_publish_holds_the_delivery_longer_with_each_earlier_delivery():
    """A broker's refusal (queue full, no quorum, broker away) pauses 0.25 s, doubling with
    each earlier delivery up to 5 s: ten deliveries span about half a minute, not a second;
    any other interruption is handed back at once."""
    from shared.errors import BrokerUnavailable, QueueFull
    from workers.retry import handback_pause_s

    pauses = [handback_pause_s(QueueFull("no quorum"), n) for n in range(10)]
    assert pauses[:5] == [0.25, 0.5, 1.0, 2.0, 4.0] and set(pauses[5:]) == {5.0}
    assert 25 < sum(pauses) < 35
    assert handback_pause_s(BrokerUnavailable("gone"), 0) == 0.25
    assert handback_pause_s(QueueFull("x"), 10**9) == 5.0
    assert handback_pause_s(ConnectionError("redis gone"), 3) == 0.0


def test_earlier_deliveries_come_from_the_quorum_count_or_the_redelivered_flag():
    from workers.retry import earlier_deliveries

    assert earlier_deliveries({"x-delivery-count": 4}, True) == 4
    assert earlier_deliveries({}, True) == 1
    assert earlier_deliveries({}, False) == 0
    assert earlier_deliveries({"x-delivery-count": "many"}, False) == 0
    assert earlier_deliveries({"x-delivery-count": -2}, True) == 1
