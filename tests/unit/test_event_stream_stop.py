"""An event stream waiting for news is released as the server begins to stop, and the read
it was in is cancelled before the stream closes its subscription."""

from __future__ import annotations

import asyncio

from dispatcher.progress import _wait_unless_stopping


class SilentPubSub:
    """A subscription on which nothing is ever published (and which ignores its timeout)."""

    def __init__(self) -> None:
        self.reading = asyncio.Event()
        self.cancelled = False

    async def get_message(self, ignore_subscribe_messages: bool, timeout: float) -> None:
        self.reading.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise


async def test_a_stream_waiting_for_a_review_returns_as_the_server_stops():
    stopping = asyncio.Event()
    pubsub = SilentPubSub()
    waiting = asyncio.ensure_future(_wait_unless_stopping(stopping, pubsub, for_review=True))
    await asyncio.wait_for(pubsub.reading.wait(), 5)
    assert not waiting.done()
    stopping.set()
    await asyncio.wait_for(waiting, 5)  # not the review's 15 s poll, nor never
    assert pubsub.cancelled


async def test_once_the_server_is_stopping_a_stream_does_not_wait_at_all():
    stopping = asyncio.Event()
    stopping.set()
    pubsub = SilentPubSub()
    await asyncio.wait_for(_wait_unless_stopping(stopping, pubsub, for_review=False), 5)
    assert not pubsub.reading.is_set()
