"""Dead-lettering never fails: oversize deliveries, bounded letters, a full DLQ, its depth."""

import asyncio
import contextlib
import json
import uuid
from collections import Counter

import aio_pika
import pytest
from prometheus_client import REGISTRY

import shared.resources
from aggregator.service import Aggregator
from dispatcher.queue_watch import broker_readings, watch
from shared.broker import connect
from shared.constants import ATTEMPT_HEADER, DEAD_AT_HEADER, ORIGIN_HEADER, REASON_HEADER
from shared.messages import MAX_MESSAGE_BYTES, Result
from shared.names import Names
from tests.integration.conftest import eventually, publisher_for, queue_depths, running, signed
from tests.integration.test_worker_flow import (
    broken_claims,
    dlq_messages,
    explain,
    final_view,
    scored,
    submit,
    workers_for,
)
from topology.spec import from_settings
from workers.runtime import Worker, WorkerOptions

pytestmark = pytest.mark.integration

# Just under RabbitMQ's default frame_max (131,072 bytes): the message itself can be
# published, but the same headers plus a reason and an origin no longer fit one frame.
FRAME_FILLING_HEADER = {"pad": "x" * 130_900}


def spy_connections(monkeypatch, module) -> list[int]:
    """Watch the connections `module` opens: the returned list gets an item per reconnect."""
    reconnects: list[int] = []
    real = module.connect

    async def connect(url, name):
        connection = await real(url, name)
        connection.reconnect_callbacks.add(lambda *_: reconnects.append(1))
        return connection

    monkeypatch.setattr(module, "connect", connect)
    return reconnects


class CountingWorker(Worker):
    """A worker that counts the deliveries it receives, by message id."""

    deliveries: Counter[str]

    async def _on_delivery(self, delivery):
        self.deliveries[delivery.message_id or ""] += 1
        await super()._on_delivery(delivery)


class CountingAggregator(Aggregator):
    """An aggregator that counts the deliveries it receives, by message id."""

    deliveries: Counter[str]

    async def _on_result(self, delivery):
        self.deliveries[delivery.message_id or ""] += 1
        await super()._on_result(delivery)


async def dead_letters(settings, count):
    """Drain the DLQ until `count` letters have come out; fails if they never do."""
    found: list = []

    async def enough():
        found.extend(await dlq_messages(settings))
        return len(found) >= count

    await eventually(enough)
    return found


def metric(name, **labels):
    return REGISTRY.get_sample_value(name, labels) or 0.0


async def test_an_oversize_task_is_rejected_once_to_the_dlq_and_the_worker_stays_up(
    world, pool, monkeypatch
):
    """A non-JSON task with a frame-filling header and one with a body over 1 MiB: each is
    delivered once, rejected to the broker's dead-letter route (x-death reason `rejected`),
    and the same connection, never reconnected, then runs a good task to its verdict."""
    settings = await world()
    queue = Names(settings.topology_prefix).task_queue("claims", 2)
    reconnects = spy_connections(monkeypatch, shared.resources)
    claims = CountingWorker(settings, WorkerOptions("claims", 1, 1), scored)
    claims.deliveries = Counter()
    others = ("techniques", "ai_tampered", "domain")
    before = metric("verdict_dead_letters_total", source="claims", reason="oversize")
    async with (
        publisher_for(settings) as publisher,
        running(
            claims.run,
            *workers_for(settings, components=others),
            Aggregator(settings, explain=explain).run,
        ),
    ):
        big = [
            aio_pika.Message(b"not json", message_id="header", headers=FRAME_FILLING_HEADER),
            aio_pika.Message(b"x" * (MAX_MESSAGE_BYTES + 1), message_id="body"),
        ]
        for message in big:
            await publisher.send(settings.topology_prefix, queue, message)
        dead = await dead_letters(settings, 2)
        sid = await submit(pool, publisher, plan=2)
        view = await final_view(pool, sid)
    assert view.status == "completed"
    assert reconnects == [] and claims.deliveries["header"] == claims.deliveries["body"] == 1
    assert sorted(m.message_id for m in dead) == ["body", "header"]
    for letter in dead:
        death = letter.headers["x-death"][0]
        assert (death["reason"], death["queue"]) == ("rejected", queue)
    assert metric("verdict_dead_letters_total", source="claims", reason="oversize") - before == 2
    assert (await queue_depths(settings))[queue] == 0


async def test_an_oversize_result_is_rejected_once_and_the_aggregator_stays_up(
    world, pool, monkeypatch
):
    """A non-JSON result with a frame-filling header on the results queue: delivered once,
    rejected to the DLQ by the broker, and the aggregator, never reconnected, goes on to
    apply a session's results."""
    settings = await world()
    names = Names(settings.topology_prefix)
    reconnects = spy_connections(monkeypatch, shared.resources)
    counting = CountingAggregator(settings, explain=explain)
    counting.deliveries = Counter()
    async with publisher_for(settings) as publisher, running(counting.run):
        poison = aio_pika.Message(b"not json", message_id="big", headers=FRAME_FILLING_HEADER)
        await publisher.send(names.exchange, names.result_key("claims"), poison)
        dead = await dead_letters(settings, 1)
        sid = await submit(pool, publisher, plan=3)  # no workers: the results come from here
        for component in ("techniques", "ai_tampered", "claims", "domain"):
            result = Result(session_id=sid, component=component, success=True, score=5, timestamp=1)
            await publisher.result(signed(settings, result))
        view = await final_view(pool, sid)
    assert view.status == "completed"
    assert reconnects == [] and counting.deliveries["big"] == 1
    death = dead[0].headers["x-death"][0]
    assert (death["reason"], death["queue"]) == ("rejected", names.results)


@pytest.mark.parametrize("transport", ["rabbitmq", "postgres"])
async def test_a_dead_letter_carries_only_the_whitelisted_headers(settings, publisher):
    """Poison with foreign headers (within the size bound): the letter keeps the task's own
    small headers plus reason, origin and time, and none of the rest."""
    queue = Names(settings.topology_prefix).task_queue("domain", 4)
    headers = {
        "sessionId": str(uuid.uuid4()),
        ATTEMPT_HEADER: 2,
        "planType": "not a number",
        "x-custom": "y" * 10_000,
    }
    poison = aio_pika.Message(b'{"truncated', headers=headers)
    await publisher.send(settings.topology_prefix, queue, poison)
    async with running(*workers_for(settings, components=("domain",))):
        [letter] = await dead_letters(settings, 1)
    assert set(letter.headers) == {
        "sessionId",
        ATTEMPT_HEADER,
        REASON_HEADER,
        ORIGIN_HEADER,
        DEAD_AT_HEADER,
    }
    assert letter.headers[ORIGIN_HEADER] == queue
    assert "invalid task" in letter.headers[REASON_HEADER]


async def test_a_full_dlq_parks_poison_in_a_retry_tier_until_there_is_room(world):
    """DLQ at its cap: the poison is refused there, counted and parked in a retry tier, comes
    back and tries again; once the DLQ has room it lands there. Meanwhile the DLQ's depth is
    exported as `verdict_queue_depth`."""
    settings = await world(dlq_max_length=1)
    names = Names(settings.topology_prefix)
    before = metric("verdict_dlq_full_total", source="techniques")
    async with publisher_for(settings) as publisher:
        await publisher.dead_letter(b"{}", {}, "filler", names.task_queue("claims", 1))
        poison = aio_pika.Message(json.dumps({"sessionId": "x"}).encode())
        await publisher.send(names.exchange, names.task_queue("techniques", 5), poison)

    async def refused_twice():
        return metric("verdict_dlq_full_total", source="techniques") - before >= 2

    connection = await connect(settings.amqp_url, "test-watch")
    watcher = asyncio.create_task(
        watch(broker_readings(lambda: connection, from_settings(settings)))
    )
    try:
        async with running(*workers_for(settings, components=("techniques",))):
            await eventually(refused_twice)

            async def depth_exported():
                return metric("verdict_queue_depth", queue=names.dlq) == 1

            await eventually(depth_exported)
            # Taking the filler out makes room: the poison lands at its next return.
            filler, parked = await dead_letters(settings, 2)
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher
        await connection.close()
    assert filler.headers[REASON_HEADER] == "filler"
    assert parked.body == poison.body
    assert "invalid task" in parked.headers[REASON_HEADER]
    assert parked.headers[ORIGIN_HEADER] == names.task_queue("techniques", 5)


async def test_a_full_dlq_parks_a_poison_result_until_there_is_room(world):
    """The aggregator's side: a poison result refused by the full DLQ returns to its results
    queue through a retry tier and lands in the DLQ once there is room."""
    settings = await world(dlq_max_length=1)
    names = Names(settings.topology_prefix)
    before = metric("verdict_dlq_full_total", source="aggregator")
    result = Result(
        session_id=str(uuid.uuid4()), component="claims", success=True, score=1, timestamp=1
    )
    bad = json.loads(result.model_dump_json(by_alias=True))
    bad["score"] = 1000  # out of range: poison
    async with publisher_for(settings) as publisher:
        await publisher.dead_letter(b"{}", {}, "filler", names.task_queue("claims", 1))
        poison = aio_pika.Message(json.dumps(bad).encode())
        await publisher.send(names.exchange, names.result_key("claims"), poison)

    async def refused_twice():
        return metric("verdict_dlq_full_total", source="aggregator") - before >= 2

    async with running(Aggregator(settings, explain=explain).run):
        await eventually(refused_twice)
        filler, parked = await dead_letters(settings, 2)  # the filler out: room for the poison
    assert filler.headers[REASON_HEADER] == "filler"
    assert parked.body == poison.body
    assert parked.headers[ORIGIN_HEADER] == names.result_key("claims")


async def test_a_full_dlq_parks_an_exhausted_task_and_its_letter_still_arrives(world, pool):
    """A task out of attempts reports its failure result, then is dead-lettered; with the DLQ
    full it is parked, and when it returns it is dead-lettered (not skipped as already done
    because its failure result is recorded): nothing we dead-letter is lost."""
    settings = await world(dlq_max_length=1, max_attempts=2)
    names = Names(settings.topology_prefix)
    async with (
        publisher_for(settings) as publisher,
        running(*workers_for(settings, broken_claims), Aggregator(settings, explain=explain).run),
    ):
        await publisher.dead_letter(b"{}", {}, "filler", names.task_queue("claims", 1))
        sid = await submit(pool, publisher)
        view = await final_view(pool, sid)
        filler, parked = await dead_letters(settings, 2)
    assert view.status == "partial" and "2 attempts" in view.results["claims"]["error"]
    assert filler.headers[REASON_HEADER] == "filler"
    assert json.loads(parked.body)["sessionId"] == sid
    assert "still down" in parked.headers[REASON_HEADER]


@pytest.mark.parametrize("transport", ["rabbitmq", "postgres"])
async def test_a_result_for_an_unknown_session_is_dead_lettered_and_counted(world, pool):
    """A signed result naming no recorded session (e.g. a task an older dispatcher published)
    reaches the DLQ with the reason and the session id, and is counted; the aggregator goes
    on to apply a real session's results."""
    settings = await world()
    stranger = str(uuid.uuid4())
    labels = {"source": "aggregator", "reason": "unknown_session"}
    before = metric("verdict_dead_letters_total", **labels)
    before_results = metric("verdict_results_total", outcome="unknown_session")
    async with (
        publisher_for(settings) as publisher,
        running(Aggregator(settings, explain=explain).run),
    ):
        orphan = Result(session_id=stranger, component="claims", success=True, score=5, timestamp=1)
        await publisher.result(signed(settings, orphan))
        [letter] = await dead_letters(settings, 1)
        sid = await submit(pool, publisher, plan=3)
        for component in ("techniques", "ai_tampered", "claims", "domain"):
            result = Result(session_id=sid, component=component, success=True, score=5, timestamp=1)
            await publisher.result(signed(settings, result))
        view = await final_view(pool, sid)
    assert view.status == "completed"
    assert Result.model_validate_json(letter.body).session_id == stranger
    assert "unknown or withdrawn session" in letter.headers[REASON_HEADER]
    assert stranger in letter.headers[REASON_HEADER]
    assert metric("verdict_dead_letters_total", **labels) - before == 1
    assert metric("verdict_results_total", outcome="unknown_session") - before_results == 1
