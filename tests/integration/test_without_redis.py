"""PostgreSQL alone (TRANSPORT=postgres, REDIS_URL unset): what Redis would hold is kept in
the `ephemera` table and sent over LISTEN/NOTIFY (shared/ephemera.py, shared/house.py), and
the pipeline's features that use it still work: live news wakes event streams, the worker
registry refuses what no worker serves, the worker runs the whole pipeline."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import replace

import pytest

from aggregator.service import Aggregator
from dispatcher import progress
from dispatcher.quotas import WindowCounts
from dispatcher.ratelimits import parse_limits
from shared import db as database
from shared.constants import ANALYSIS_COMPONENTS
from shared.ephemera import Channels, Ephemera
from shared.heartbeat import Heartbeat, announcement, unchanged
from shared.house import Unawaited, table_house
from shared.listener import Listener
from shared.registry import registry
from shared.settings import Settings
from tests.integration.conftest import POSTGRES_ALONE, World, eventually, running
from tests.integration.test_api import client_for, explain, length_score
from tests.services import unique
from workers.capabilities import TEXT_INPUT
from workers.runtime import Worker, WorkerOptions

pytestmark = [pytest.mark.integration, pytest.mark.parametrize("transport", [POSTGRES_ALONE])]

API = "/api/v3/pipeline"
ENTERPRISE = {"X-API-Key": "test-enterprise"}


@contextlib.asynccontextmanager
async def house_of(settings: Settings) -> AsyncIterator[object]:
    """A process's house without Redis, as open_house makes it."""
    pool = await database.create_pool(settings.database_url, max_size=4)
    listener = Listener(settings.database_url)
    channels = Channels(pool, listener)
    unawaited = Unawaited()
    try:
        yield table_house(pool, channels, unawaited)
    finally:
        await unawaited.flush()
        await channels.close()
        await listener.close()
        await pool.close()


def key(settings: Settings, *parts: str) -> str:
    return ":".join((settings.key_prefix, *parts))


async def test_values_expire_lists_keep_their_newest_and_prefixes_are_literal(settings):
    """A value reads back until its expiry; `starting_with` treats `_` and `%` as themselves;
    a list keeps its newest entries in order; pruning deletes only what expired."""
    async with house_of(settings) as house:
        ephemera: Ephemera = house.ephemera  # type: ignore[attr-defined]
        await ephemera.put(key(settings, "a_b", "1"), "kept", 60)
        await ephemera.put(key(settings, "axb", "1"), "not a match for a_b", 60)
        await ephemera.put(key(settings, "short"), "gone soon", 0.2)
        assert await ephemera.get(key(settings, "a_b", "1")) == "kept"
        assert await ephemera.starting_with(key(settings, "a_b", "")) == ["kept"]
        for n in range(1, 8):
            await ephemera.append(key(settings, "list"), {"n": n}, 5, 60)
        assert await ephemera.lists([key(settings, "list")]) == {
            key(settings, "list"): [{"n": n} for n in range(3, 8)]
        }
        await asyncio.sleep(0.3)
        assert await ephemera.get(key(settings, "short")) is None
        assert await ephemera.prune() >= 1
        assert await ephemera.get(key(settings, "a_b", "1")) == "kept"


async def test_rate_windows_count_refuse_and_reopen(settings):
    """The API's rate limits without Redis: hits count within a window, a hit past the limit
    is refused with the time left, and the next window starts from one."""
    async with house_of(settings) as house:
        counts = WindowCounts(settings, house)  # type: ignore[arg-type]
        limit = parse_limits("2/second")
        seen = [await counts.charge("submissions", limit, "key-1") for _ in range(3)]
        assert [u[0].remaining for u in seen if u] == [1, 0, 0]
        assert seen[2] is not None and seen[2][0].exceeded
        assert 0 < seen[2][0].reset_in_s <= 1.0
        other = await counts.charge("submissions", limit, "key-2")
        assert other is not None and other[0].remaining == 1  # buckets apart
        await asyncio.sleep(1.1)
        again = await counts.charge("submissions", limit, "key-1")
        assert again is not None and again[0].remaining == 1


async def test_a_message_reaches_every_subscriber_of_its_channel_and_survives_a_lost_listener(
    settings,
):
    """Two processes' channels: what one publishes the other's subscribers of that channel
    get at once, others not; after the listener's connection is killed it listens again."""
    async with house_of(settings) as sender, house_of(settings) as receiver:
        mine = receiver.channels.pubsub()  # type: ignore[attr-defined]
        other = receiver.channels.pubsub()  # type: ignore[attr-defined]
        await mine.subscribe(key(settings, "events", "s1"))
        await other.subscribe(key(settings, "events", "s2"))
        await sender.channels.publish_many([(key(settings, "events", "s1"), "hello")])  # type: ignore[attr-defined]
        got = await mine.get_message(timeout=2)
        assert got is not None and got["data"] == "hello"
        assert await other.get_message(timeout=0.2) is None
        pool = sender.ephemera.pool  # type: ignore[attr-defined]
        killed = await pool.fetchval(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE query LIKE 'LISTEN%' AND pid <> pg_backend_pid()"
        )
        assert killed >= 1

        async def heard_again() -> bool:
            await sender.channels.publish_many([(key(settings, "events", "s1"), "again")])  # type: ignore[attr-defined]
            message = await mine.get_message(timeout=0.3)
            return message is not None and message["data"] == "again"

        await eventually(heard_again, timeout=10)
        await mine.aclose()
        await other.aclose()


async def test_unfollowing_while_the_server_ends_the_connection_never_raises(settings):
    """A server shutting down (compose stop) ends the listening connection while a process
    stops: the UNLISTEN of its last follower meets a connection still reading the server's
    goodbye, and the close meets the listener just learning of the loss. Neither may fail
    nor hang the stop (the close had swallowed its cancellation and listened on forever);
    tried at several moments after the termination, as each race is narrow."""
    pool = await database.create_pool(settings.database_url, max_size=2)
    failures: list[str] = []
    try:
        for attempt in range(60):
            listener = Listener(settings.database_url)
            channel = f"verdict_bye_{uuid.uuid4().hex[:8]}"

            def ignore(_payload: str) -> None:
                return None

            try:
                await listener.follow(channel, ignore)
                await asyncio.wait_for(listener.connected.wait(), 10)
                assert listener._conn is not None
                pid = listener._conn.get_server_pid()
                await pool.execute("SELECT pg_terminate_backend($1)", pid)
                if attempt % 3:
                    await asyncio.sleep(0.0005 * (attempt % 7))
                await listener.unfollow(channel, ignore)
            except Exception as exc:
                failures.append(repr(exc))
            finally:
                try:
                    async with asyncio.timeout(10):
                        await listener.close()
                except TimeoutError:
                    failures.append("the listener did not close")
                    listener._closed = True
    finally:
        await pool.close()
    assert failures == []


async def test_one_connection_carries_every_channel_a_process_follows_and_follows_again(
    settings,
):
    """The process's listener: two channels followed on one connection, each payload to its
    own follower; after that connection is killed it listens again on both, telling each
    follower with a gap to catch up; an unfollowed channel is heard no more."""
    tag = uuid.uuid4().hex[:8]
    first, second = f"verdict_t1_{tag}", f"verdict_t2_{tag}"
    heard: list[tuple[str, str]] = []
    gaps: list[int] = []

    def on_first(payload: str) -> None:
        heard.append((first, payload))

    def on_second(payload: str) -> None:
        heard.append((second, payload))

    listener = Listener(settings.database_url)
    pool = await database.create_pool(settings.database_url, max_size=2)

    async def notified(channel: str, payload: str) -> bool:
        await pool.execute("SELECT pg_notify($1, $2)", channel, payload)
        await asyncio.sleep(0.1)
        return (channel, payload) in heard

    try:
        await listener.follow(first, on_first, on_gap=lambda: gaps.append(1))
        await listener.follow(second, on_second)
        await asyncio.wait_for(listener.connected.wait(), 10)
        assert gaps == [1]
        await eventually(lambda: notified(first, "a"), timeout=5)
        await eventually(lambda: notified(second, "b"), timeout=5)
        listening = await pool.fetch(
            "SELECT pid FROM pg_stat_activity WHERE query LIKE $1", f"LISTEN %{tag}%"
        )
        assert len(listening) == 1  # both channels, one backend
        await pool.execute("SELECT pg_terminate_backend($1)", listening[0]["pid"])
        await eventually(lambda: notified(first, "after"), timeout=10)
        await eventually(lambda: notified(second, "after"), timeout=10)
        assert len(gaps) == 2
        await listener.unfollow(second, on_second)
        await eventually(lambda: notified(first, "last"), timeout=5)
        assert not await notified(second, "unheard")
    finally:
        await listener.close()
        await pool.close()


async def test_the_registry_in_postgres_refuses_text_until_every_component_beats(world: World):
    """Heartbeats land in PostgreSQL; the API reads the registry there and refuses text
    while one analysis component has no online worker, and takes it once all four beat."""
    settings = await world(api_check_workers=True, api_workers_ttl_s=0)
    async with house_of(settings) as house, client_for(settings) as api:
        body = {"content": "hello there"}

        async def beat(component: str) -> None:
            said = replace(announcement(component, 1, TEXT_INPUT), worker_id=unique(component))
            await Heartbeat(house.shelf, settings.key_prefix, unchanged(said)).beat()  # type: ignore[attr-defined]

        for component in ANALYSIS_COMPONENTS[1:]:
            await beat(component)
        refused = await api.post(f"{API}/analyze-async", json=body, headers=ENTERPRISE)
        await beat(ANALYSIS_COMPONENTS[0])
        served = await api.post(f"{API}/analyze-async", json=body, headers=ENTERPRISE)
        found = await registry(house.shelf, settings.key_prefix, time.time())  # type: ignore[attr-defined]
    assert refused.status_code == 503, refused.text
    assert refused.json()["detail"].endswith(f"no {ANALYSIS_COMPONENTS[0]} worker is online")
    assert served.status_code == 202, served.text
    assert sorted(c for r in found for c in r.components) == sorted(ANALYSIS_COMPONENTS)


async def test_an_event_stream_wakes_on_news_not_on_its_poll(settings, monkeypatch):
    """Without Redis the aggregator's news goes over NOTIFY: with the streams' poll set to a
    minute, a stream opened before the work starts ends with the result within seconds of
    the work (neither its poll nor its 15 s keep-alive could have woken it)."""
    monkeypatch.setattr(progress, "EVENT_POLL_S", 60.0)
    async with client_for(settings) as api:
        accepted = await api.post(
            f"{API}/analyze-async", json={"content": "a" * 300}, headers=ENTERPRISE
        )
        # The test client hands over a response once it ended: the whole stream, then.
        stream = asyncio.create_task(api.get(accepted.json()["events_url"], headers=ENTERPRISE))
        await asyncio.sleep(1.0)  # subscribed, and waiting after its first progress event
        services = [
            Worker(settings, WorkerOptions(c, 2, 2), length_score).run for c in ANALYSIS_COMPONENTS
        ]
        async with running(*services, Aggregator(settings, explain=explain).run):
            started = time.monotonic()
            response = await asyncio.wait_for(stream, 30)
            took = time.monotonic() - started
    events = [
        line.removeprefix("event: ")
        for line in response.text.splitlines()
        if line.startswith("event: ")
    ]
    assert events[0] == "progress" and events[-1] == "result", events
    assert took < 10, took


async def test_attempts_are_kept_for_the_console_and_media_text_is_not_cached(settings):
    """The worker's writes nobody waits for (attempts) land once flushed, oldest first.
    Without Redis no media text is cached: one database role for every worker could plant
    the text another session is analysed with."""
    async with house_of(settings) as house:
        sid = str(uuid.uuid4())
        shelf = house.shelf  # type: ignore[attr-defined]
        for n in (1, 2):
            entry = json.dumps({"attempt": n})
            shelf.append_soon(key(settings, "attempts", sid, "claims"), entry, 50, 60)
        await house.shelf.unawaited.flush()  # type: ignore[attr-defined]
        found = await shelf.lists([key(settings, "attempts", sid, "claims")])
        assert house.media_cache is None  # type: ignore[attr-defined]
    assert [json.loads(e)["attempt"] for e in found[key(settings, "attempts", sid, "claims")]] == [
        1,
        2,
    ]
