"""The aggregator's lanes and batches (aggregator.lanes, aggregator.applier) with fake
deliveries and a fake fan-in: what is applied together, what is acked, dead-lettered or
handed back, and when a stopping aggregator may leave."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
import pytest

from aggregator import applier as applying
from aggregator.applier import Applier, Delivered, Storage, home_key
from aggregator.explanation import explain
from aggregator.fanin import Applied, Recorded
from aggregator.lanes import Lanes
from aggregator.service import Aggregator
from shared.constants import PARKED_HEADER, PARKED_KIND_HEADER, QUEUE_COMPONENTS
from shared.deadletters import parking_headers
from shared.errors import PublishError
from shared.messages import Result, encode
from shared.settings import Settings
from shared.signing import aggregator_parking_key, result_key, sign_result
from shared.urgency import UrgentGate
from tests.unit.fakes import NAMES, FakeDelivery, FakePublisher

PARKING_KEY = b"aggregators-parking-key-of-32-bytes"
SIDS = [f"00000000-0000-4000-8000-00000000000{n}" for n in range(4)]


async def settled() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


async def test_what_arrives_while_a_batch_is_applied_comes_out_as_the_next_batch():
    """A lane hands out everything put since the last take, in arrival order."""
    lanes: Lanes[str] = Lanes()
    lanes.put("a", urgent=False)
    assert await lanes.take(urgent=False) == ["a"]
    for item in "bcd":
        lanes.put(item, urgent=False)
    assert await lanes.take(urgent=False) == ["b", "c", "d"]


async def test_urgent_results_have_a_lane_of_their_own():
    """An urgent result is taken from its own lane, never batched behind lower tiers."""
    lanes: Lanes[str] = Lanes()
    lanes.put("low", urgent=False)
    lanes.put("top", urgent=True)
    assert await asyncio.wait_for(lanes.take(urgent=True), 1) == ["top"]
    assert await asyncio.wait_for(lanes.take(urgent=False), 1) == ["low"]


async def test_a_stopping_aggregator_waits_until_every_batch_taken_is_done():
    """`idle` returns only once each item put is done, whichever lane it went through."""
    lanes: Lanes[str] = Lanes()
    await asyncio.wait_for(lanes.idle(), 1)  # nothing put: idle at once
    lanes.put("low", urgent=False)
    lanes.put("top", urgent=True)
    idle = asyncio.create_task(lanes.idle())
    urgent = await lanes.take(urgent=True)
    lanes.done(urgent)
    await settled()
    assert not idle.done() and lanes.pending == 1
    lanes.done(await lanes.take(urgent=False))
    await asyncio.wait_for(idle, 1)


def result(sid: str, component: str = "claims") -> Result:
    return Result(session_id=sid, component=component, success=True, score=5, timestamp=1)


def delivered(sid: str, events: list[Any]) -> Delivered:
    key = NAMES.result_key("claims")
    return FakeDelivery(b"{}", routing_key=key, message_id=sid, events=events), result(sid)  # type: ignore[return-value]


def an_applier(events: list[Any]) -> Applier:
    settings = Settings(
        amqp_url="amqp://unused",
        redis_url="redis://unused",
        database_url="postgresql://unused",
        topology_prefix="unit",
    )
    storage = Storage(None, None, None, FakePublisher(events))  # type: ignore[arg-type]
    return Applier(settings, storage, UrgentGate(8, 0.0), explain, PARKING_KEY)


def fan_in(refused: set[str], calls: list[list[str]]) -> Any:
    """A fan-in that refuses (as Postgres would) any batch holding a session in `refused`."""

    async def record_results(pool, results, weights, explain, review, within=None) -> Applied:
        assert within is None  # broker deliveries: acked after the fan-in, not within it
        sids = [r.session_id for r in results]
        calls.append(sids)
        if refused & set(sids):
            raise asyncpg.exceptions.CheckViolationError("refused")
        return Applied([Recorded(s, "t", {}, None, False, {}) for s in sids])

    return record_results


async def test_a_batch_is_applied_in_one_call_and_every_delivery_acked(monkeypatch):
    """Three results, one fan-in call, three acks."""
    events: list[Any] = []
    calls: list[list[str]] = []
    monkeypatch.setattr(applying, "record_results", fan_in(set(), calls))
    batch = [delivered(s, events) for s in SIDS[:3]]
    await an_applier(events).apply_safely(batch)
    assert calls == [SIDS[:3]] and events == ["ack"] * 3


async def test_a_result_postgres_refuses_is_dead_lettered_and_the_rest_of_its_batch_applied(
    monkeypatch,
):
    """The batch is split until the refused result is alone: it is dead-lettered (and
    acked), every other one is applied and acked."""
    events: list[Any] = []
    calls: list[list[str]] = []
    monkeypatch.setattr(applying, "record_results", fan_in({SIDS[1]}, calls))
    batch = [delivered(s, events) for s in SIDS[:3]]
    await an_applier(events).apply_safely(batch)
    dead = [e for e in events if isinstance(e, tuple) and e[0] == "dead_letter"]
    assert len(dead) == 1 and "refused by postgres" in dead[0][1]
    assert events.count("ack") == 3 and [SIDS[0]] in calls and [SIDS[2]] in calls


async def test_a_batch_interrupted_otherwise_is_handed_back_whole(monkeypatch):
    """Not Postgres refusing but the broker gone mid-ack: every delivery of the batch is
    nacked to its queue (the applied ones come back as duplicates, which change nothing)."""
    events: list[Any] = []

    class ChannelGone(FakeDelivery):
        async def ack(self) -> None:
            raise RuntimeError("channel has no transport")

    monkeypatch.setattr(applying, "record_results", fan_in(set(), []))
    batch = [(ChannelGone(b"{}", events=events), result(s)) for s in SIDS[:2]]
    await an_applier(events).apply_safely(batch)  # type: ignore[arg-type]
    assert events == [("nack", True)] * 2


@pytest.mark.parametrize(
    ("key", "home"),
    [
        (NAMES.result_key("claims"), NAMES.result_key("claims")),
        (NAMES.result_key("claims", True), NAMES.result_key("claims", True)),
        ("elsewhere.claims", NAMES.result_key("returned")),
    ],
)
def test_a_parked_result_returns_to_a_results_queue(key, home):
    """Its own routing key when it is a results binding, else the shared one."""
    assert home_key(NAMES, key) == home


class UnreachableDLQ(FakePublisher):
    """A publisher whose dead letters fail to publish (the broker away, no DLQ bound)."""

    async def dead_letter(self, body: bytes, headers: dict[str, Any], reason: str, origin: str):
        raise PublishError("no queue is bound for the DLQ")


async def test_a_refused_result_that_cannot_be_dead_lettered_is_handed_back(monkeypatch):
    """Postgres refuses a result and the DLQ cannot take it: the result is nacked back to
    its queue (refused again, and dead-lettered, once the broker takes letters), and the
    rest of its batch is applied as usual."""
    events: list[Any] = []
    monkeypatch.setattr(applying, "record_results", fan_in({SIDS[0]}, []))
    applier = an_applier(events)
    applier.storage = Storage(None, None, None, UnreachableDLQ(events))  # type: ignore[arg-type]
    await applier.apply_safely([delivered(s, events) for s in SIDS[:2]])
    assert events == [("nack", True), "ack"]


async def test_a_batch_the_lane_fails_on_is_handed_back_and_the_lane_goes_on(monkeypatch):
    """Whatever escapes applying a batch: its results are nacked back to their queue, the
    batch counts as settled, and the next batch is applied as usual."""
    events: list[Any] = []
    monkeypatch.setattr(applying, "record_results", fan_in(set(), []))
    applier = an_applier(events)
    apply_safely = applier.apply_safely

    async def fails_once(batch: list[Delivered]) -> list[str]:
        monkeypatch.setattr(applier, "apply_safely", apply_safely)
        raise RuntimeError("unexpected")

    monkeypatch.setattr(applier, "apply_safely", fails_once)
    lanes: Lanes[Delivered] = Lanes()
    lane = asyncio.create_task(applier.apply_lane(lanes, urgent=True))
    try:
        lanes.put(delivered(SIDS[0], events), urgent=True)
        await asyncio.wait_for(lanes.idle(), 2)
        lanes.put(delivered(SIDS[1], events), urgent=True)
        await asyncio.wait_for(lanes.idle(), 2)
    finally:
        lane.cancel()
        await asyncio.gather(lane, return_exceptions=True)
    assert events == [("nack", True), "ack"]


def unit_settings(**changes: Any) -> Settings:
    keys = {c: f"{c}-result-key-of-at-least-32-bytes" for c in QUEUE_COMPONENTS}
    return Settings(
        amqp_url="amqp://unused",
        redis_url="redis://unused",
        database_url="postgresql://unused",
        topology_prefix="unit",
        result_keys=keys,
        **changes,
    )


async def test_a_result_that_cannot_be_routed_is_nacked_back_not_left_unacked():
    """Poison whose dead letter cannot be published: the consumer does not fail with the
    delivery unsettled, it hands it back to its queue."""
    events: list[Any] = []
    aggregator = Aggregator(unit_settings(), explain=explain)
    storage = Storage(None, None, None, UnreachableDLQ(events))  # type: ignore[arg-type]
    aggregator._applier = Applier(
        aggregator.settings, storage, UrgentGate(8, 0.0), explain, PARKING_KEY
    )
    poison = FakeDelivery(b"not json", routing_key=NAMES.result_key("claims"), events=events)
    await aggregator._on_result(poison)  # type: ignore[arg-type]
    assert events == [("nack", True)]


def an_aggregator(publisher: FakePublisher) -> Aggregator:
    """An aggregator around fakes, its consumers' entry point ready to be called."""
    aggregator = Aggregator(unit_settings(), explain=explain)
    storage = Storage(None, None, None, publisher)  # type: ignore[arg-type]
    aggregator._applier = Applier(
        aggregator.settings,
        storage,
        UrgentGate(8, 0.0),
        explain,
        aggregator_parking_key(aggregator.settings),
    )
    return aggregator


def signed_result_delivery(events: list[Any], **headers: Any) -> FakeDelivery:
    settings = unit_settings()
    signed = sign_result(result_key(settings, "claims"), "claims", result(SIDS[0]))
    body = encode(signed)
    return FakeDelivery(
        body, routing_key=NAMES.result_key("claims"), headers=headers, events=events
    )


async def test_a_result_parked_by_a_full_dlq_is_dead_lettered_not_applied_when_it_returns():
    """The aggregators' marker round-trips: a result refused by Postgres and then by the full
    DLQ comes back authentic and well-formed, and still goes to the DLQ with its reason."""
    events: list[Any] = []
    parking = an_aggregator(FakePublisher(events, dlq_full=True))
    assert parking._applier is not None
    refused = signed_result_delivery(events)
    await parking._applier.dead_letter(refused, "refused by postgres: check")  # type: ignore[arg-type]
    copy, routing_key = next(e[1:3] for e in events if isinstance(e, tuple) and e[0] == "retry")
    back_events: list[Any] = []
    back = FakeDelivery(copy.body, routing_key, dict(copy.headers), events=back_events)
    aggregator = an_aggregator(FakePublisher(back_events))
    await aggregator._on_result(back)  # type: ignore[arg-type]
    assert back_events == [("dead_letter", "refused by postgres: check", routing_key), "ack"]
    assert aggregator._lanes.pending == 0


WORKER_FORGERIES = {
    "no MAC": lambda body: {PARKED_HEADER: "spoofed", PARKED_KIND_HEADER: "unauthenticated"},
    "a claims worker's MAC": lambda body: parking_headers(
        {}, "spoofed", "unauthenticated", body, result_key(unit_settings(), "claims")
    ),
}


@pytest.mark.parametrize("forge", WORKER_FORGERIES.values(), ids=WORKER_FORGERIES.keys())
async def test_a_result_with_a_forged_parking_marker_is_handled_as_any_other(forge):
    """A marker no aggregator made is ignored: an authentic result is applied, poison is
    dead-lettered as poison, never with the reason the marker claims."""
    events: list[Any] = []
    aggregator = an_aggregator(FakePublisher(events))
    genuine = signed_result_delivery(events)
    genuine.headers = forge(genuine.body)
    await aggregator._on_result(genuine)  # type: ignore[arg-type]
    assert events == [] and aggregator._lanes.pending == 1
    poison = FakeDelivery(
        b"not json", NAMES.result_key("claims"), forge(b"not json"), events=events
    )
    await aggregator._on_result(poison)  # type: ignore[arg-type]
    (kind, reason, _), ack = events
    assert (kind, ack) == ("dead_letter", "ack") and reason != "spoofed"
