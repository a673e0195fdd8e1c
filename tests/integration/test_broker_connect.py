"""A broker connection nobody holds any more leaves nothing behind: no never-awaited close()
that Python reports later, from whatever code the garbage collector happens to interrupt."""

from __future__ import annotations

import asyncio
import gc
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from shared.broker import connect
from shared.errors import BrokerUnavailable


@pytest.fixture
def unraisable() -> Iterator[list[Any]]:
    """What Python reports as 'Exception ignored in …' while the test runs (e.g. a coroutine
    never awaited when an object is collected)."""
    seen: list[Any] = []
    previous = sys.unraisablehook
    sys.unraisablehook = seen.append
    try:
        yield seen
    finally:
        gc.collect()
        sys.unraisablehook = previous


async def test_cancelling_a_connect_in_progress_closes_what_it_opened(unraisable):
    """The API shutting down while it waits for the broker cancels `connect`: the half-made
    connection is closed there (its socket hangs up at once), not left half-open to time out,
    reconnect in the background and be found by the garbage collector."""
    hung_up = asyncio.Event()

    async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()  # a port that accepts and never speaks AMQP: connecting hangs
        hung_up.set()  # until the client closes its socket
        writer.close()

    server = await asyncio.start_server(hold, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        attempt = asyncio.create_task(connect(f"amqp://u:p@127.0.0.1:{port}/", "test-cancel"))
        await asyncio.sleep(0.3)
        attempt.cancel()
        with pytest.raises(asyncio.CancelledError):
            await attempt
        del attempt
        await asyncio.wait_for(hung_up.wait(), 3)  # aio-pika alone waits out its 10 s timeout
    finally:
        server.close()
    gc.collect()
    assert unraisable == []


async def test_a_refused_connect_raises_broker_unavailable_and_leaves_nothing(unraisable):
    """Wrong credentials: the caller gets BrokerUnavailable, and nothing is left to collect."""
    with pytest.raises(BrokerUnavailable):
        await connect("amqp://nobody:wrong@127.0.0.1:5672/", "test-refused")
    gc.collect()
    assert unraisable == []


COLLECTED_OUTSIDE_A_LOOP = """
import asyncio, gc, sys
from shared.broker import FailoverConnection
seen = []
sys.unraisablehook = seen.append
loop = asyncio.new_event_loop()
asyncio.set_event_loop(loop)  # as a test runner does between tests, then clears it
async def make():
    return FailoverConnection(["amqp://u:p@127.0.0.1:1/"])
connection = loop.run_until_complete(make())
asyncio.set_event_loop(None)
del connection
gc.collect()
print(len(seen))
"""


def test_a_connection_collected_outside_a_running_loop_schedules_nothing():
    """Collected from synchronous code (its loop open but not running, no current loop):
    there is nothing to await a close on, so no close() is created to go un-awaited."""
    out = subprocess.run(
        [sys.executable, "-W", "error", "-c", COLLECTED_OUTSIDE_A_LOOP],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert out.stdout.strip() == "0", out.stderr
