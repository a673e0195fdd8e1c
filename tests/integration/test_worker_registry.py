"""The worker contract on real services: workers announce what they can do, go stale and offline
by silence or at a clean stop, and the API refuses what no online worker can serve."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from prometheus_client import REGISTRY

from dispatcher.online import OnlineWorkers
from shared.api_keys import hashed
from shared.constants import ANALYSIS_COMPONENTS
from shared.heartbeat import Heartbeat, announcement, unchanged
from shared.house import redis_house
from shared.keys import Keys
from shared.registry import encode, registry
from shared.settings import Settings
from tests import services as svc
from tests.conftest import TEST_API_KEYS
from tests.integration.conftest import World, eventually, running
from tests.integration.test_api import client_for
from workers.analysis.media import installed_tesseract
from workers.capabilities import TEXT_INPUT, media_capabilities
from workers.executor import Analysis
from workers.runtime import Worker, WorkerOptions

pytestmark = pytest.mark.integration

API = "/api/v3/pipeline"
ENTERPRISE = {"X-API-Key": "test-enterprise"}
ADMIN = {"X-API-Key": "test-admin"}
CLOSED = "http://127.0.0.1:1/"  # nothing listens on port 1


async def nothing(task, ctx):
    return Analysis(0.0)


@contextlib.asynccontextmanager
async def http_service() -> AsyncIterator[str]:
    """A local HTTP server answering 404 to everything: a service that is there."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        yield f"http://127.0.0.1:{port}"


async def registry_of(settings: Settings, redis, now: float | None = None):
    return await registry(
        redis_house(redis).shelf, settings.key_prefix, time.time() if now is None else now
    )


async def test_a_worker_announces_itself_and_goes_stale_then_offline(world: World, redis):
    """A running media worker's record: who, where, what it reads (tesseract checked, a dead
    transcription service not counted); stale after 60 s, offline after 90 s of silence; a
    clean stop leaves it listed as offline."""
    settings = await world(transcription_url=CLOSED)
    worker = Worker(settings, WorkerOptions("media_preprocess", 2, 1), nothing)
    async with running(worker.run):
        found = await eventually(lambda: registry_of(settings, redis))
        now = time.time()
        later = {s: (await registry_of(settings, redis, now + s))[0].status for s in (61, 91)}
    [record] = found
    assert (record.host, record.pid, record.components) == (
        socket.gethostname(),
        os.getpid(),
        ("media_preprocess",),
    )
    assert (record.concurrency, record.in_flight, record.status) == (2, 0, "online")
    assert record.version and record.limits["task_timeout_s"] == settings.task_timeout_s
    has_tesseract = installed_tesseract() is not None
    assert record.capabilities == {
        "tesseract": has_tesseract,
        "ocr_service": False,
        "transcription_service": False,
    }
    assert record.input_types == (("image",) if has_tesseract else ())
    assert later == {61: "stale", 91: "offline"}
    [stopped] = await registry_of(settings, redis)
    assert stopped.status == "offline" and stopped.stopped_at is not None


async def test_a_reachable_transcription_service_adds_audio_and_video(settings):
    """Capabilities are checked: a service that answers counts, one that does not is missing."""
    async with http_service() as url, httpx.AsyncClient() as http:
        there = settings.model_copy(update={"transcription_url": url, "ocr_url": CLOSED})
        found = await media_capabilities(there, http)
    assert found["transcription_service"] is True and found["ocr_service"] is False


@contextlib.asynccontextmanager
async def beating(settings: Settings, redis, component: str, input_types: tuple[str, ...]):
    """A worker record of `component` kept online until the block ends (then stopped)."""
    said = replace(announcement(component, 1, input_types), worker_id=svc.unique(component))
    async with Heartbeat(redis_house(redis).shelf, settings.key_prefix, unchanged(said)).running():
        await eventually(lambda: redis.exists(Keys(settings.key_prefix).worker(said.worker_id)))
        yield said


async def checked_world(world: World, **overrides) -> Settings:
    """A world whose API checks the registry on every POST (no cache: the tests change it)."""
    keys = {**TEST_API_KEYS, "test-admin": {"tenant": "ops", "plan": 6, "scopes": ["admin"]}}
    return await world(
        api_check_workers=True, api_workers_ttl_s=0, api_keys=hashed(keys), **overrides
    )


async def post(api: httpx.AsyncClient, body: dict, key: str | None = None) -> httpx.Response:
    idempotency = {"Idempotency-Key": key} if key else {}
    return await api.post(f"{API}/analyze-async", json=body, headers={**ENTERPRISE, **idempotency})


async def test_text_is_refused_until_every_analysis_component_has_an_online_worker(world, redis):
    """503 with Retry-After and the missing component while one is absent, stale or stopped;
    202 while all four are online; a replay of an accepted request gets its session anyway."""
    settings = await checked_world(world)
    text = {"content": "hello there"}
    async with client_for(settings) as api, contextlib.AsyncExitStack() as stack:
        for c in ANALYSIS_COMPONENTS[1:]:
            await stack.enter_async_context(beating(settings, redis, c, TEXT_INPUT))
        missing = await post(api, text)
        async with beating(settings, redis, "techniques", TEXT_INPUT) as said:
            served = await post(api, text, key="once")
            silent = encode(said, 0, time.time() - 61)  # its last beat a minute ago
            await redis.set(Keys(settings.key_prefix).worker(said.worker_id), silent)
            stale = await post(api, text)
            await Heartbeat(redis_house(redis).shelf, settings.key_prefix, unchanged(said)).beat()
            back = await post(api, text)
        stopped = await post(api, text)
        replayed = await post(api, text, key="once")
    for refused in (missing, stale, stopped):
        assert refused.status_code == 503, refused.text
        assert refused.headers["Retry-After"] == "30"
        assert refused.json()["detail"] == (
            "text input cannot be analysed right now: no techniques worker is online"
        )
    assert served.status_code == 202 and back.status_code == 202, (served.text, back.text)
    assert replayed.status_code == 202, replayed.text
    assert replayed.json()["session_id"] == served.json()["session_id"]


async def test_an_image_needs_an_online_media_worker_with_ocr(world, redis, tmp_path: Path):
    """Image input: refused without a media worker, and with one that only transcribes."""
    settings = await checked_world(world, media_root=str(tmp_path))
    (tmp_path / "tenant-a").mkdir()
    (tmp_path / "tenant-a" / "a.png").write_bytes(b"png")
    image = {"input_type": "image", "media_path": "a.png"}
    async with client_for(settings) as api, contextlib.AsyncExitStack() as stack:
        for c in ANALYSIS_COMPONENTS:
            await stack.enter_async_context(beating(settings, redis, c, TEXT_INPUT))
        none = await post(api, image)
        async with beating(settings, redis, "media_preprocess", ("audio", "video")):
            deaf = await post(api, image)
        async with beating(settings, redis, "media_preprocess", ("image",)):
            served = await post(api, image)
    assert none.status_code == 503 and "no media_preprocess worker is online" in none.text
    assert deaf.status_code == 503
    assert "no online media_preprocess worker can read image input" in deaf.text
    assert served.status_code == 202, served.text


async def test_with_the_broker_away_the_api_analyses_whatever_the_registry_says(world):
    """No broker, no worker: the session is analysed in-process (200, sync), not refused."""
    settings = await checked_world(world)
    offline = settings.model_copy(update={"amqp_url": "amqp://guest:guest@127.0.0.1:1/"})
    async with client_for(offline) as api:
        response = await post(api, {"content": "hello there"})
    assert response.status_code == 200, response.text
    assert response.json()["mode"] == "sync"


async def test_the_registry_is_served_to_admins_only(world, redis):
    """GET /api/v3/workers: 403 for a tenant's key, every record with its status for an admin."""
    settings = await checked_world(world)
    async with client_for(settings) as api, beating(settings, redis, "claims", TEXT_INPUT) as said:
        tenant = await api.get("/api/v3/workers", headers=ENTERPRISE)
        admin = await api.get("/api/v3/workers", headers=ADMIN)
        # What the "no online worker" alert watches, as counted at that read.
        online = {c: sample("verdict_workers_online", c) for c in ("claims", "domain")}
    assert tenant.status_code == 403
    assert admin.status_code == 200 and admin.headers["Cache-Control"] == "no-store"
    [record] = admin.json()["workers"]
    assert {k: record[k] for k in ("worker_id", "components", "status", "in_flight")} == {
        "worker_id": said.worker_id,
        "components": ["claims"],
        "status": "online",
        "in_flight": 0,
    }
    shown = {"host", "pid", "input_types", "version", "capabilities", "concurrency", "last_seen"}
    assert shown <= set(record)
    assert online == {"claims": 1, "domain": 0}


def sample(name: str, component: str) -> float | None:
    return REGISTRY.get_sample_value(name, {"component": component})


async def test_the_api_trusts_its_copy_of_the_registry_for_its_ttl_only(settings, redis):
    """Within API_WORKERS_TTL_S a new worker is not seen (POST stays one read per TTL); with
    TTL 0 every call reads the registry."""
    cached = OnlineWorkers(redis_house(redis).shelf, settings.key_prefix, ttl_s=60)
    fresh = OnlineWorkers(redis_house(redis).shelf, settings.key_prefix, ttl_s=0)
    assert await cached.records() == [] and await fresh.records() == []
    async with beating(settings, redis, "claims", TEXT_INPUT):
        assert await cached.records() == []
        assert [r.components for r in await fresh.records()] == [("claims",)]


async def test_an_empty_registry_is_no_evidence_and_the_session_is_queued(world, redis):
    """No record at all (Redis flushed): 202, the session waits for workers; one record of
    anything, and what it does not cover is refused."""
    settings = await checked_world(world)
    async with client_for(settings) as api:
        empty = await post(api, {"content": "hello there"})
        async with beating(settings, redis, "aggregator", ()):
            known = await post(api, {"content": "hello there"})
    assert empty.status_code == 202, empty.text
    assert known.status_code == 503 and "no techniques worker is online" in known.text


async def test_a_refusal_is_never_made_on_a_stale_copy_of_the_registry(settings, redis):
    """A worker that came online after the API's last read (the pipeline just started) is seen
    before a session is refused: the cached copy may say 'no worker', a fresh read decides."""
    online = OnlineWorkers(redis_house(redis).shelf, settings.key_prefix, ttl_s=60)
    async with beating(settings, redis, "aggregator", ()):
        assert await online.refusal("text") is not None  # read: only an aggregator is online
        async with (
            beating(settings, redis, "techniques", TEXT_INPUT),
            beating(settings, redis, "ai_tampered", TEXT_INPUT),
            beating(settings, redis, "claims", TEXT_INPUT),
            beating(settings, redis, "domain", TEXT_INPUT),
        ):
            await asyncio.sleep(0.3)  # past the recheck bound, well within the TTL
            assert await online.refusal("text") is None


async def test_a_read_under_way_when_a_worker_announced_is_as_old_as_its_start(
    settings, redis, monkeypatch
):
    """A registry read that began before a worker's announcement and ended after it is no
    fresh evidence of its absence: the refusal check reads again instead of refusing."""
    from dispatcher import online as online_module

    announced = asyncio.Event()
    real = online_module.registry

    async def slow(redis_, prefix, now):
        records = await real(redis_, prefix, now)  # read before the worker is there
        await announced.wait()
        await asyncio.sleep(0.3)  # ends past the recheck bound after its start
        return records

    online = OnlineWorkers(redis_house(redis).shelf, settings.key_prefix, ttl_s=60)
    async with contextlib.AsyncExitStack() as stack:
        await stack.enter_async_context(beating(settings, redis, "aggregator", ()))
        monkeypatch.setattr(online_module, "registry", slow)
        reading = asyncio.create_task(online.refresh())
        await asyncio.sleep(0.05)
        for c in ANALYSIS_COMPONENTS:
            await stack.enter_async_context(beating(settings, redis, c, TEXT_INPUT))
        announced.set()
        assert not any("claims" in r.components for r in await reading)
        monkeypatch.setattr(online_module, "registry", real)
        assert await online.refusal("text") is None


async def test_healthz_says_whether_a_text_session_would_be_taken_now(world, redis):
    """`accepts_text` is false while the API's registry view lacks an analysis component
    (and the broker is up), true once its view has each; it is read from that view, no
    registry read of its own; the POST made after a true answer is taken."""
    settings = await world(api_check_workers=True, api_workers_ttl_s=60)
    async with client_for(settings) as api, contextlib.AsyncExitStack() as stack:
        await stack.enter_async_context(beating(settings, redis, "aggregator", ()))

        async def health() -> dict:
            return (await api.get("/healthz")).json()

        async def refusing() -> dict | None:
            answer = await _with_broker(health)
            return answer if answer and answer["accepts_text"] is False else None

        # With the broker away the API would analyse the session itself, and take it.
        before = await eventually(refusing)
        for c in ANALYSIS_COMPONENTS:
            await stack.enter_async_context(beating(settings, redis, c, TEXT_INPUT))

        async def accepting() -> dict | None:
            answer = await health()
            return answer if answer["accepts_text"] else None

        after = await eventually(accepting)  # the API's next read of the registry
        taken = await post(api, {"content": "hello there"})
    assert before["accepts_text"] is False and after["accepts_text"] is True
    assert taken.status_code == 202, taken.text


async def _with_broker(health):
    answer = await health()
    return answer if answer["rabbitmq"] else None


async def test_requests_queued_behind_one_slow_read_do_not_each_read_again(
    settings, redis, monkeypatch
):
    """A registry read slower than the age the callers accept serves every request that
    arrived before it started; those that arrived while it was under way share the next:
    two reads for ten requests, not ten."""
    from dispatcher import online as online_module

    reads: list[int] = []
    real = online_module.registry

    async def slow(redis_, prefix, now):
        reads.append(1)
        await asyncio.sleep(0.3)
        return await real(redis_, prefix, now)

    monkeypatch.setattr(online_module, "registry", slow)
    online = OnlineWorkers(redis_house(redis).shelf, settings.key_prefix, ttl_s=0.2)
    await asyncio.gather(*(online.records() for _ in range(10)))
    assert len(reads) == 2


async def test_the_registry_is_read_from_its_index_not_the_keyspace(redis):
    """Records are listed in the directory's index by expiry: an expired entry, a forgotten
    record and keys of the same prefix put without the index are not read, and whoever
    writes drops the expired entries."""
    keys = Keys(f"reg-{os.getpid()}-{time.monotonic_ns()}")
    directory = keys.worker_directory
    shelf = redis_house(redis).shelf
    try:
        await shelf.put(keys.worker("a-1"), "first", 60, listed_in=directory)
        await shelf.put(keys.worker("b-2"), "second", 60, listed_in=directory)
        await shelf.put(keys.worker("c-3"), "unlisted", 60)  # not in the index
        await redis.zadd(directory.index, {keys.worker("old-4"): 1})  # expired in 1970
        await redis.set(keys.worker("old-4"), "stale", ex=60)
        assert await shelf.listed(directory) == ["first", "second"]
        await shelf.forget(keys.worker("a-1"))
        assert await shelf.listed(directory) == ["second"]
        await shelf.put(keys.worker("b-2"), "again", 60, listed_in=directory)
        assert await redis.zscore(directory.index, keys.worker("old-4")) is None
        assert 0 < await redis.pttl(directory.index) <= 60_000
        assert await shelf.listed(directory) == ["again"]
    finally:
        names = [keys.worker(w) for w in ("a-1", "b-2", "c-3", "old-4")]
        await redis.delete(*names, directory.index)
