"""When the rate limits ask their store, and when they let a request through unasked."""

import asyncio
import time

import pytest

from dispatcher.quotas import StoreBreaker, answered_within


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def breaker() -> tuple[StoreBreaker, Clock]:
    clock = Clock()
    return StoreBreaker(1.0, clock), clock


def test_while_the_store_answers_every_request_asks_it():
    b, _ = breaker()
    assert all(b.admit() for _ in range(5))
    assert b.succeeded() is False  # nothing to recover from


def test_after_a_failure_nobody_asks_until_the_rest_is_over():
    b, clock = breaker()
    assert b.admit()
    assert b.failed() is True  # the first failure: the one that is logged
    clock.now += 0.99
    assert not b.admit()
    clock.now += 0.02
    assert b.admit()


def test_after_the_rest_only_one_request_at_a_time_waits_on_the_store():
    b, clock = breaker()
    b.failed()
    clock.now += 1.5
    assert b.admit()  # the probe
    assert not any(b.admit() for _ in range(10))  # the others go through unasked
    assert b.failed() is False  # the outage goes on: not logged again
    assert not b.admit()
    clock.now += 1.0
    assert b.admit()
    assert b.succeeded() is True  # logged once: checked again
    assert all(b.admit() for _ in range(3))


def test_a_probe_cancelled_midway_lets_the_next_request_ask():
    b, clock = breaker()
    b.failed()
    clock.now += 2
    assert b.admit()
    assert not b.admit()
    b.abandoned()
    assert b.admit()


def test_failures_of_calls_already_in_flight_log_the_outage_once():
    b, _ = breaker()
    assert b.admit() and b.admit()
    assert [b.failed(), b.failed()] == [True, False]


async def test_a_timeout_the_busy_event_loop_caused_waits_for_the_same_answer():
    """The loop held past the timeout (a request's CPU, not the store): the answer on its
    way counts, and the store is asked once (a window's count is charged once)."""
    calls = []

    async def store() -> str:
        calls.append(1)
        time.sleep(0.3)  # noqa: ASYNC251 (the process busy: the timeout fires late,
        await asyncio.sleep(0.01)  # before the answer that was on its way)
        return "answer"

    assert await answered_within(store, timeout_s=0.05, lag_s=0.1) == "answer"
    assert len(calls) == 1


async def test_a_store_that_does_not_answer_times_out_once_however_slow_its_clean_up():
    """A store away is asked once and given up at the timeout, even when the cancelled call
    takes long to clean up (asyncpg cancels its query on the server): that is no loop lag."""
    calls = []

    async def store() -> str:
        calls.append(1)
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            await asyncio.sleep(0.4)  # a slow clean-up
            raise
        return "late"

    started = time.monotonic()
    with pytest.raises(TimeoutError):
        await answered_within(store, timeout_s=0.05, lag_s=0.1)
    assert len(calls) == 1 and time.monotonic() - started < 0.3
