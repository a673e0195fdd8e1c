"""The benchmarks wait for a peer's consumer through AMQP alone: no management plugin."""

from __future__ import annotations

from scripts.benchlib import consumer_count
from shared.broker import connect
from shared.settings import Settings


async def _ignore(message: object) -> None:
    pass


async def test_a_queue_s_consumers_are_counted_and_a_missing_queue_has_none(settings: Settings):
    """A passive declare counts the consumers of a queue; a queue not declared yet counts 0
    (the peer has not started) rather than failing the run."""
    name = f"{settings.topology_prefix}.bench-consumers"
    assert await consumer_count(settings.amqp_url, name) == 0
    connection = await connect(settings.amqp_url, "test-consumer")
    try:
        channel = await connection.channel()
        queue = await channel.declare_queue(name, auto_delete=True)
        assert await consumer_count(settings.amqp_url, name) == 0
        await queue.consume(_ignore)
        assert await consumer_count(settings.amqp_url, name) == 1
    finally:
        await connection.close()
