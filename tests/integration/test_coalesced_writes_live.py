"""On a real broker, frames sent in one event-loop turn leave in far fewer socket writes than
there are frames, and arrive whole and in order."""

from __future__ import annotations

import asyncio
import uuid

import aio_pika
import pytest

from shared import coalesced_writes
from shared.broker import connect
from tests import services as svc

pytestmark = pytest.mark.integration


async def test_frames_of_one_turn_leave_together_and_arrive_whole_and_in_order(
    services: svc.Services, monkeypatch: pytest.MonkeyPatch
):
    """Eight channels publishing at once (a worker's concurrent tasks), then every delivery
    acked at once: the frames of a turn share one socket write, and each channel's messages
    arrive intact and in its order. (aiormq sends one publish per channel per turn: it waits
    for the frame to be written before the next.)"""
    writes: list[int] = []
    flush = coalesced_writes.CoalescingTransport.flush

    def counted(self: coalesced_writes.CoalescingTransport) -> None:
        if self._pending:
            writes.append(len(self._pending))
        flush(self)

    monkeypatch.setattr(coalesced_writes.CoalescingTransport, "flush", counted)
    connection = await connect(services.amqp_url, "test-coalesced-writes")
    try:
        channels = [await connection.channel(publisher_confirms=False) for _ in range(8)]
        queue = await channels[0].declare_queue(
            f"test-coalesced-{uuid.uuid4().hex[:8]}", exclusive=True
        )
        per_channel = 25

        async def publish_all(n: int) -> None:
            for i in range(per_channel):
                body = f"{n}:{i}".encode()
                await channels[n].default_exchange.publish(
                    aio_pika.Message(body), routing_key=queue.name
                )

        writes.clear()
        await asyncio.gather(*(publish_all(n) for n in range(len(channels))))
        frames = len(channels) * per_channel
        assert sum(writes) >= frames
        assert len(writes) <= frames // 4, writes  # about one write per turn, not per frame

        received: list[aio_pika.abc.AbstractIncomingMessage] = []
        async with queue.iterator(no_ack=False) as messages:
            async for message in messages:
                received.append(message)
                if len(received) == frames:
                    break
        writes.clear()
        await asyncio.gather(*(message.ack() for message in received))
        await asyncio.sleep(0)
        # aiormq queues at most ten frames for its writer: about ten acks to a write.
        assert sum(writes) >= frames and len(writes) <= frames // 4, writes

        order: dict[str, list[int]] = {}
        for message in received:
            n, i = message.body.decode().split(":")
            order.setdefault(n, []).append(int(i))
        assert order == {str(n): list(range(per_channel)) for n in range(len(channels))}
        # Closing the consuming channel returns every delivery it did not ack to the queue:
        # an ack lost on its way would show here as a ready message.
        await channels[0].close()
        declared = await channels[1].declare_queue(queue.name, passive=True)
        assert declared.declaration_result.message_count == 0  # every ack reached the broker
    finally:
        await connection.close()
