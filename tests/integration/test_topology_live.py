"""Declaring, verifying and exporting the topology on the real broker."""

import os
import subprocess
import sys
from urllib.parse import quote

import aio_pika
import httpx
import pytest

from shared.broker import connect
from shared.errors import TopologyError
from shared.names import Names
from tests import services as svc
from tests.conftest import make_settings
from tests.integration.conftest import eventually
from topology.broker import declare, definitions, management_url, verify
from topology.spec import from_settings

pytestmark = pytest.mark.integration


async def test_declare_is_idempotent_and_verify_finds_no_drift(world):
    """Declaring twice changes nothing; the live broker matches the spec exactly."""
    settings = await world()
    connection = await connect(settings.amqp_url, "test")
    try:
        await declare(await connection.channel(), from_settings(settings))
    finally:
        await connection.close()
    assert (
        await verify(from_settings(settings), settings.amqp_url, settings.rabbitmq_management_url)
        == []
    )


async def test_verify_reports_missing_objects_and_differing_arguments(
    world, services, database_url
):
    """A deleted queue and a queue declared with other arguments are both reported."""
    settings = await world()
    base, vhost, auth = management_url(settings.amqp_url, settings.rabbitmq_management_url)
    async with httpx.AsyncClient(base_url=f"{base}/api", auth=auth) as http:
        v = quote(vhost, safe="")
        await http.delete(f"/queues/{v}/{settings.topology_prefix}.claims.3")
        await http.put(
            f"/queues/{v}/{settings.topology_prefix}.claims.3",
            json={"durable": True, "arguments": {"x-max-priority": 5}},
        )
        await http.delete(f"/queues/{v}/{settings.topology_prefix}.domain.1")
    drift = await verify(
        from_settings(settings), settings.amqp_url, settings.rabbitmq_management_url
    )
    assert any(f"{settings.topology_prefix}.claims.3: arguments" in d for d in drift)
    assert any(f"{settings.topology_prefix}.domain.1: missing" in d for d in drift)
    with pytest.raises(TopologyError, match="arguments differ"):
        connection = await connect(settings.amqp_url, "test")
        try:
            await declare(await connection.channel(), from_settings(settings))
        finally:
            await connection.close()


def test_verify_command_exits_non_zero_on_drift(services, database_url):
    """`verdict topology verify` fails the shell when the broker lacks the topology."""
    prefix = svc.unique("t")
    env = {
        **os.environ,
        "AMQP_URL": services.amqp_url,
        "REDIS_URL": services.redis_url,
        "DATABASE_URL": database_url,
        "TOPOLOGY_PREFIX": prefix,
        "LOG_JSON": "false",
    }
    if services.management_url:
        env["RABBITMQ_MANAGEMENT_URL"] = services.management_url
    run = subprocess.run(
        [sys.executable, "-m", "ops.cli", "topology", "verify"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 1
    assert f"queue {prefix}.techniques.1: missing" in run.stdout


async def test_exported_definitions_load_into_the_broker_as_the_spec(services, database_url):
    """The export is a definitions file RabbitMQ accepts, and it yields a verified topology."""
    settings = make_settings(services, database_url, svc.unique("t"))
    base, vhost, auth = management_url(settings.amqp_url, settings.rabbitmq_management_url)
    try:
        async with httpx.AsyncClient(auth=auth) as http:
            response = await http.post(
                f"{base}/api/definitions/{quote(vhost, safe='')}",
                json=definitions(from_settings(settings), vhost),
            )
            assert response.status_code in (200, 201, 204), response.text
        assert (
            await verify(
                from_settings(settings), settings.amqp_url, settings.rabbitmq_management_url
            )
            == []
        )
    finally:
        await svc.delete_broker_objects(
            services.amqp_url, (settings.topology_prefix,), services.management_url
        )


async def test_an_uncapped_dlq_from_before_is_drift_until_it_is_recreated(world):
    """A DLQ declared without its cap (as before the cap existed) is reported by verify and
    refused by declare; deleting it while empty and declaring again gives the capped DLQ."""
    settings = await world()
    dlq = f"{settings.topology_prefix}_dlq"
    base, vhost, auth = management_url(settings.amqp_url, settings.rabbitmq_management_url)
    v = quote(vhost, safe="")
    async with httpx.AsyncClient(base_url=f"{base}/api", auth=auth) as http:
        await http.delete(f"/queues/{v}/{dlq}")
        await http.put(f"/queues/{v}/{dlq}", json={"durable": True, "arguments": {}})
        drift = await verify(
            from_settings(settings), settings.amqp_url, settings.rabbitmq_management_url
        )
        # The arguments differ; deleting the queue also dropped its binding from the
        # dead-letter exchange. Nothing else is reported.
        assert any(d.startswith(f"queue {dlq}: arguments") for d in drift)
        assert all(dlq in d for d in drift) and len(drift) == 2
        connection = await connect(settings.amqp_url, "test")
        try:
            with pytest.raises(TopologyError, match="arguments differ"):
                await declare(await connection.channel(), from_settings(settings))
            deleted = await http.delete(f"/queues/{v}/{dlq}", params={"if-empty": "true"})
            assert deleted.status_code == 204
            await declare(await connection.channel(), from_settings(settings))
        finally:
            await connection.close()
    assert (
        await verify(from_settings(settings), settings.amqp_url, settings.rabbitmq_management_url)
        == []
    )


async def test_quorum_definitions_load_and_a_retry_tier_returns_its_message(world):
    """QUEUE_TYPE=quorum on one node: the topology declares and verifies, a message parked in a
    retry tier expires (x-message-ttl on a quorum queue, RabbitMQ 3.10+) and is dead-lettered
    back to the plan queue its routing key names."""
    settings = await world(queue_type="quorum", retry_base_ms=300, max_attempts=2)
    topology = from_settings(settings)
    assert await verify(topology, settings.amqp_url, settings.rabbitmq_management_url) == []
    names = Names(settings.topology_prefix)
    plan_queue = names.task_queue("claims", 2)
    connection = await connect(settings.amqp_url, "test")
    try:
        channel = await connection.channel(publisher_confirms=True)
        tier = await channel.get_exchange(names.retry_tier(300))
        await tier.publish(aio_pika.Message(b"parked", delivery_mode=2), plan_queue)
        queue = await channel.get_queue(plan_queue)

        async def returned():
            return await queue.get(fail=False, no_ack=True)

        message = await eventually(returned, timeout=10)
    finally:
        await connection.close()
    assert message.body == b"parked"
    assert message.headers["x-death"][0]["reason"] == "expired"
