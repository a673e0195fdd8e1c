"""An AMQP connection's writes leave in one piece per event-loop turn, in order, and nothing
is held past the turn, a close, or a large backlog."""

from __future__ import annotations

import asyncio

import pytest

from shared.coalesced_writes import FLUSH_BYTES, CoalescingTransport


class RecordingTransport(asyncio.Transport):
    """The socket's transport: what reached it, write by write."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []
        self.closed = False
        self.aborted = False
        self.eof = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if self.closed or self.eof:  # as asyncio's and uvloop's transports refuse it
            raise RuntimeError("write after close or write_eof")
        self.writes.append(bytes(data))

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.aborted = self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def write_eof(self) -> None:
        self.writes.append(b"<eof>")
        self.eof = True

    def get_write_buffer_size(self) -> int:
        return 0


async def test_frames_written_in_one_turn_reach_the_socket_as_one_write_in_order():
    inner = RecordingTransport()
    coalescing = CoalescingTransport(inner, asyncio.get_running_loop())
    for frame in (b"publish-1", b"ack-7", b"publish-2"):
        coalescing.write(frame)
    assert inner.writes == []  # not yet: the turn is not over
    await asyncio.sleep(0)
    assert inner.writes == [b"publish-1ack-7publish-2"]


async def test_a_single_frame_leaves_in_the_same_turn_it_was_written():
    """Idle traffic waits on no timer: one frame is on the socket after one loop turn."""
    inner = RecordingTransport()
    coalescing = CoalescingTransport(inner, asyncio.get_running_loop())
    coalescing.write(b"heartbeat")
    await asyncio.sleep(0)
    assert inner.writes == [b"heartbeat"]
    coalescing.write(b"later")
    await asyncio.sleep(0)
    assert inner.writes == [b"heartbeat", b"later"]


async def test_a_large_backlog_is_written_at_once_not_held_for_the_turn():
    inner = RecordingTransport()
    coalescing = CoalescingTransport(inner, asyncio.get_running_loop())
    coalescing.write(b"x" * 10)
    coalescing.write(b"y" * FLUSH_BYTES)
    assert inner.writes == [b"x" * 10 + b"y" * FLUSH_BYTES]
    assert coalescing.get_write_buffer_size() == 0
    await asyncio.sleep(0)
    assert len(inner.writes) == 1  # nothing left for the scheduled flush


async def test_close_and_eof_send_what_was_gathered_first_and_abort_drops_it():
    inner = RecordingTransport()
    coalescing = CoalescingTransport(inner, asyncio.get_running_loop())
    coalescing.write(b"close-ok")
    coalescing.write_eof()
    assert inner.writes == [b"close-ok", b"<eof>"]

    closing = RecordingTransport()
    coalescing = CoalescingTransport(closing, asyncio.get_running_loop())
    coalescing.write(b"last")
    coalescing.close()
    assert closing.writes == [b"last"] and closing.closed

    other = RecordingTransport()
    aborting = CoalescingTransport(other, asyncio.get_running_loop())
    aborting.write(b"never")
    aborting.abort()
    await asyncio.sleep(0)
    assert other.writes == [] and other.aborted


async def test_a_write_gathered_before_the_connection_was_lost_is_dropped_quietly():
    """The socket closed under it (a broker restart): the robust connection reconnects and
    sends again; the flush must not write to a closed transport."""
    inner = RecordingTransport()
    coalescing = CoalescingTransport(inner, asyncio.get_running_loop())
    coalescing.write(b"in flight")
    inner.closed = True
    await asyncio.sleep(0)
    assert inner.writes == []
    assert coalescing.get_write_buffer_size() == 0


async def test_the_socket_is_closed_even_when_the_last_write_is_refused():
    inner = RecordingTransport()
    coalescing = CoalescingTransport(inner, asyncio.get_running_loop())
    inner.write_eof()
    coalescing.write(b"after eof")
    with pytest.raises(RuntimeError):
        coalescing.close()
    assert inner.closed
