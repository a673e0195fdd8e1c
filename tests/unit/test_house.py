"""The pure parts of a house without Redis: NOTIFY payloads and writes nobody waits for."""

from __future__ import annotations

import asyncio

import pytest

from shared.ephemera import MAX_PAYLOAD_BYTES, decode_message, encode_message
from shared.house import Unawaited


def test_a_payload_names_its_channel_and_keeps_the_message_whole():
    """The channel goes before the first newline; the message keeps its own newlines."""
    payload = encode_message("p:events:s1", '{"status": "processing"}\nsecond line')
    assert decode_message(payload) == ("p:events:s1", '{"status": "processing"}\nsecond line')


@pytest.mark.parametrize("payload", ["no newline at all", "\nno channel", ""])
def test_a_payload_that_is_not_ours_is_ignored(payload):
    assert decode_message(payload) is None


def test_a_message_too_long_for_notify_is_refused_when_sent_not_cut():
    with pytest.raises(ValueError, match="too long for NOTIFY"):
        encode_message("c", "x" * MAX_PAYLOAD_BYTES)


def writes_failing_at(failing: int, error: Exception, done: list[int]) -> Unawaited:
    def write(n: int):
        async def run() -> None:
            if n == failing:
                raise error
            await asyncio.sleep(0)
            done.append(n)

        return run

    writes = Unawaited()
    for n in range(1, 6):
        writes.add(write(n))
    return writes


async def test_writes_nobody_waits_for_run_in_order_and_a_refused_one_is_given_up():
    done: list[int] = []
    await writes_failing_at(2, ValueError("refused"), done).flush()
    assert done == [1, 3, 4, 5]


async def test_with_the_database_away_the_waiting_writes_are_given_up_at_once():
    """Each would only wait its turn to fail (a connect timeout each, at a stop)."""
    done: list[int] = []
    await writes_failing_at(2, ConnectionRefusedError("away"), done).flush()
    assert done == [1]


async def test_a_flush_waits_only_so_long():
    stuck = Unawaited()
    stuck.add(lambda: asyncio.sleep(60))
    started = asyncio.get_running_loop().time()
    await stuck.flush(within_s=0.1)
    assert asyncio.get_running_loop().time() - started < 1


async def test_past_its_limit_the_newest_writes_are_given_up():
    done: list[int] = []
    gate = asyncio.Event()

    def write(n: int):
        async def run() -> None:
            await gate.wait()
            done.append(n)

        return run

    writes = Unawaited(limit=3)
    for n in range(1, 6):
        writes.add(write(n))
    gate.set()
    await writes.flush()
    assert done == [1, 2, 3]
