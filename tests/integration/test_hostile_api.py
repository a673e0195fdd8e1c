"""Hostile and careless requests against the real API served by uvicorn as `verdict api` serves
it (dispatcher.serving.server_config): each gets its exact status, and refused input leaves
nothing behind — no session row for the tenant, no message on any queue of the run. The
tests of what is stored and published also run on the PostgreSQL transport (with Redis and
without: `on_both_transports`), where a message is a row of the queue table."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import resource
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi import FastAPI

from dispatcher.event_tokens import Grant, issue
from dispatcher.routes.progress import TOKEN_STREAMS_PER_SESSION
from dispatcher.serving import server_config
from shared import live
from shared.api_keys import hashed
from shared.broker import connect
from shared.names import Names
from shared.settings import Settings
from tests import services as svc
from tests.integration.conftest import World, eventually, on_both_transports, queue_depths

pytestmark = pytest.mark.integration

API = "/api/v3/pipeline"
KEY = "hostile-key"
OTHER_KEY = "other-key"
MB = 1024 * 1024


@dataclass
class Served:
    settings: Settings
    app: FastAPI
    port: int
    tenant: str

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.base, headers={"X-API-Key": KEY}, timeout=20)


async def _true(value: Any) -> Any:
    return value


@contextlib.asynccontextmanager
async def serving(settings: Settings, tenant: str, broker: bool = True) -> AsyncIterator[Served]:
    """The API under uvicorn on a free loopback port, with `verdict api`'s configuration."""
    port = svc.free_port()
    config = server_config(settings, "127.0.0.1", port)
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    try:
        await eventually(lambda: _true(server.started), 15)
        app = config.app
        assert isinstance(app, FastAPI)
        if broker:
            await eventually(lambda: _true(app.state.pipeline.publisher is not None), 15)
        yield Served(settings, app, port, tenant)
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 30)


@pytest.fixture
async def api(world: World, tmp_path: Path) -> AsyncIterator[Served]:
    """A served API whose key belongs to a tenant of its own, with a media folder."""
    tenant = svc.unique("tenant-")
    keys = {KEY: {"tenant": tenant, "plan": 6}, OTHER_KEY: {"tenant": "someone-else", "plan": 6}}
    settings = await world(
        api_keys=hashed(keys),
        media_root=str(tmp_path),
        api_body_timeout_s=2,
        api_header_timeout_s=3,
        api_body_deadline_s=5,
        api_max_requests_per_key=3,
    )
    async with serving(settings, tenant) as served:
        yield served


async def nothing_kept(served: Served, pool: Any) -> None:
    """No session row for the tenant and no message on any queue of the run (DLQ included)."""
    rows = await pool.fetchval("SELECT count(*) FROM sessions WHERE tenant = $1", served.tenant)
    depths = await queue_depths(served.settings)
    assert rows == 0, f"{rows} session(s) stored"
    assert sum(depths.values()) == 0, {q: n for q, n in depths.items() if n}


def _head(path: str, headers: dict[str, str]) -> bytes:
    lines = [f"POST {path} HTTP/1.1", "Host: api", *(f"{k}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


@dataclass
class Exchange:
    status: int
    body: bytes
    sent: int  # request bytes the server's socket took before it answered or closed


class _RawClient(asyncio.Protocol):
    """Keeps every byte the server sends, even when it then resets the connection."""

    def __init__(self) -> None:
        self.received = bytearray()
        loop = asyncio.get_running_loop()
        self.lost = loop.create_future()  # the server closed the connection
        self.done = loop.create_future()  # a whole answer came, or the connection is gone
        self.writable = asyncio.Event()
        self.writable.set()

    def data_received(self, data: bytes) -> None:
        self.received += data
        head, found, body = bytes(self.received).partition(b"\r\n\r\n")
        length = next(
            (
                int(line.split(b":")[1])
                for line in head.lower().split(b"\r\n")[1:]
                if line.startswith(b"content-length:")
            ),
            None,
        )
        if found and length is not None and len(body) >= length:
            self._settle(self.done)

    def connection_lost(self, exc: Exception | None) -> None:
        self.writable.set()
        self._settle(self.lost)
        self._settle(self.done)

    @staticmethod
    def _settle(future: asyncio.Future[None]) -> None:
        if not future.done():
            future.set_result(None)

    def pause_writing(self) -> None:
        self.writable.clear()

    def resume_writing(self) -> None:
        self.writable.set()

    @property
    def answered(self) -> bool:
        return b"\r\n\r\n" in self.received or self.done.done()


async def raw_request(
    port: int, head: bytes, body: Iterable[bytes] = (), pause_s: float = 0.0
) -> Exchange:
    """Send `head` then `body` piece by piece over a socket while reading the answer; stop
    sending as soon as an answer arrives or the server closes."""
    loop = asyncio.get_running_loop()
    transport, client = await loop.create_connection(_RawClient, "127.0.0.1", port)
    sent = 0
    for piece in (head, *body):
        await client.writable.wait()
        if client.answered:
            break
        transport.write(piece)
        sent += len(piece)
    if pause_s:  # a slow client: what was promised never comes
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(client.done), pause_s)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(client.done), 5)
    transport.close()
    raw = bytes(client.received)
    status_line = raw.split(b"\r\n", 1)[0]
    assert status_line, "no answer"
    return Exchange(int(status_line.split()[1]), raw.partition(b"\r\n\r\n")[2], sent)


def _rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


# --- bodies: bytes counted as they stream, the key before the body ---------------------------


async def test_a_chunked_body_over_the_limit_is_413_without_being_read(api, pool):
    """5 MB of chunked JSON with a valid key: 413 after about the limit, nothing stored."""
    head = _head(
        f"{API}/analyze-async",
        {"X-API-Key": KEY, "Content-Type": "application/json", "Transfer-Encoding": "chunked"},
    )
    body = [_chunk(b'{"content": "'), *(_chunk(b"a" * 65536) for _ in range(80))]
    exchange = await raw_request(api.port, head, body)
    assert exchange.status == 413, exchange.body
    assert b"request body over" in exchange.body
    await nothing_kept(api, pool)


async def test_a_huge_chunked_body_without_a_key_is_401_and_never_read(api, pool):
    """120 MB chunked with no key: 401, the server stops reading (what it took is bounded by
    socket buffers, far below the body) and its memory does not grow with the body."""
    before = _rss_kb()
    head = _head(
        f"{API}/analyze-async", {"Content-Type": "application/json", "Transfer-Encoding": "chunked"}
    )
    exchange = await raw_request(api.port, head, (_chunk(b"a" * MB) for _ in range(120)))
    assert exchange.status == 401, exchange.body
    assert exchange.sent < 40 * MB
    assert _rss_kb() - before < 60 * 1024
    await nothing_kept(api, pool)


async def test_an_unknown_key_is_401_before_the_body_is_read(api, pool):
    """A declared 1 MB body with a wrong key: 401 though the body never arrives."""
    head = _head(
        f"{API}/analyze-async",
        {"X-API-Key": "guessed", "Content-Type": "application/json", "Content-Length": str(MB)},
    )
    exchange = await raw_request(api.port, head, pause_s=2.0)
    assert exchange.status == 401 and b"unknown API key" in exchange.body
    await nothing_kept(api, pool)


async def test_a_declared_length_over_the_limit_is_413_at_once(api, pool):
    """Content-Length of 50 MB: 413 from the headers alone, the body never sent."""
    head = _head(
        f"{API}/analyze-async",
        {"X-API-Key": KEY, "Content-Type": "application/json", "Content-Length": str(50 * MB)},
    )
    exchange = await raw_request(api.port, head, pause_s=2.0)
    assert exchange.status == 413
    await nothing_kept(api, pool)


async def test_a_body_that_stalls_is_408(api, pool):
    """Half a body, then silence past API_BODY_TIMEOUT_S: 408 and the connection is closed."""
    head = _head(
        f"{API}/analyze-async",
        {"X-API-Key": KEY, "Content-Type": "application/json", "Content-Length": "100"},
    )
    exchange = await raw_request(api.port, head + b'{"content": "sl', pause_s=6.0)
    assert exchange.status == 408, exchange.body
    await nothing_kept(api, pool)


async def trickle(port: int, head: bytes, every_s: float, limit_s: float) -> bytes:
    """Send `head`, then one body byte every `every_s` (never a stall), until the server
    answers or `limit_s` passes; what the server answered."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(head)
    answer = asyncio.ensure_future(reader.read(4096))
    try:
        deadline = asyncio.get_running_loop().time() + limit_s
        while not answer.done() and asyncio.get_running_loop().time() < deadline:
            with contextlib.suppress(ConnectionError):
                writer.write(b" ")
                await writer.drain()
            await asyncio.wait({answer}, timeout=every_s)
        return answer.result() if answer.done() else b""
    finally:
        answer.cancel()
        writer.close()


async def test_a_body_that_trickles_past_its_deadline_is_408(api, pool):
    """A byte a second (never a stall of API_BODY_TIMEOUT_S) for longer than
    API_BODY_DEADLINE_S: 408 at the deadline, so a slow client cannot hold a connection."""
    head = _head(
        f"{API}/analyze-async",
        {"X-API-Key": KEY, "Content-Type": "application/json", "Content-Length": "100000"},
    )
    started = asyncio.get_running_loop().time()
    answer = await trickle(api.port, head, every_s=1.0, limit_s=30)
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
    assert b"did not arrive within 5 seconds" in answer
    assert asyncio.get_running_loop().time() - started < 25  # the deadline, not the client
    await nothing_kept(api, pool)


async def test_one_key_may_have_only_so_many_bodies_in_progress(api, pool):
    """API_MAX_REQUESTS_PER_KEY (3 here) slow uploads hold their key's share: a fourth from
    the same key is 429 with Retry-After at once, another key is served."""
    head = _head(
        f"{API}/analyze-async",
        {"X-API-Key": KEY, "Content-Type": "application/json", "Content-Length": "100"},
    )
    slow = [await asyncio.open_connection("127.0.0.1", api.port) for _ in range(3)]
    try:
        for _, writer in slow:
            writer.write(head + b'{"content": "')
            await writer.drain()
        await asyncio.sleep(0.3)  # the three are being read
        async with api.client() as client:
            # Bodiless requests of the same key neither count nor free a place.
            for _ in range(3):
                await client.get(f"{API}/{uuid.uuid4()}/queue-status")
            refused = await client.post(f"{API}/analyze-async", json={"content": "hello"})
            other = await client.post(
                f"{API}/analyze-async", json={"content": "hello"}, headers={"X-API-Key": OTHER_KEY}
            )
    finally:
        for _, writer in slow:
            writer.close()
    assert refused.status_code == 429 and refused.headers["retry-after"] == "1", refused.text
    assert other.status_code == 202, other.text


@on_both_transports
async def test_characters_are_counted_as_characters(api, pool):
    """80,000 `é` sent as `\\u00e9` escapes (480 KB of JSON) are 80,000 characters: 202;
    one character over the configured limit is 413 saying so."""
    escaped = '{"content": "' + "\\u00e9" * 80_000 + '"}'
    over = json.dumps({"content": "é" * (api.settings.max_content_chars + 1)})
    async with api.client() as client:
        accepted = await client.post(
            f"{API}/analyze-async", content=escaped, headers={"Content-Type": "application/json"}
        )
        refused = await client.post(
            f"{API}/analyze-async", content=over, headers={"Content-Type": "application/json"}
        )
    assert accepted.status_code == 202, accepted.text[:300]
    assert refused.status_code == 413 and "characters" in refused.json()["detail"]
    stored = await pool.fetchval(
        "SELECT length(input->>'content') FROM sessions WHERE tenant = $1", api.tenant
    )
    assert stored == 80_000


# --- headers and connections -----------------------------------------------------------------


async def test_an_8_mb_header_is_refused_without_being_read(api, pool):
    """An 8 MB header line: 400 once the header limit is passed; the rest is never read."""
    head = f"POST {API}/analyze-async HTTP/1.1\r\nHost: api\r\nX-API-Key: {KEY}\r\nX-Pad: "
    pad = (b"a" * MB for _ in range(8))
    exchange = await raw_request(api.port, head.encode(), pad)
    assert exchange.status == 400
    assert exchange.sent < 8 * MB
    await nothing_kept(api, pool)


@pytest.mark.parametrize("size", [17_000, 100_000])
async def test_a_head_over_the_limit_sent_in_one_write_is_refused(api, pool, size):
    """Headers over API_MAX_HEADER_BYTES arriving whole in one write (h11 checks only heads
    still incomplete): 431 before anything acts on the request."""
    head = _head(
        f"{API}/analyze-async",
        {
            "X-API-Key": KEY,
            "X-Pad": "a" * size,
            "Content-Type": "application/json",
            "Content-Length": "17",
        },
    )
    exchange = await raw_request(api.port, head + b'{"content": "hi"}')
    assert exchange.status in (400, 431), exchange.body  # h11's own refusal, or ours
    await nothing_kept(api, pool)


async def test_headers_under_the_limit_are_served(api):
    """A request with 8 KB of headers is an ordinary request."""
    async with api.client() as client:
        response = await client.get("/healthz", headers={"X-Pad": "a" * 8192})
    assert response.status_code == 200


async def test_a_control_character_in_the_idempotency_key_is_422(api, pool):
    """An Idempotency-Key with an escape character (h11 lets it through) is refused: 422."""
    head = _head(
        f"{API}/analyze-async",
        {"X-API-Key": KEY, "Idempotency-Key": "k\x1bk", "Content-Length": "0"},
    )
    exchange = await raw_request(api.port, head)
    assert exchange.status == 422 and b"U+001B" in exchange.body
    await nothing_kept(api, pool)


async def test_a_client_trickling_its_headers_is_disconnected(api):
    """Headers sent a line every 0.2 s never complete: the connection is closed at
    API_HEADER_TIMEOUT_S (3 s here), however long the client would go on."""
    loop = asyncio.get_running_loop()
    transport, client = await loop.create_connection(_RawClient, "127.0.0.1", api.port)
    transport.write(b"GET /healthz HTTP/1.1\r\nHost: api\r\n")
    for n in range(50):  # 10 s of trickle at most
        if client.lost.done():
            break
        transport.write(b"X-Slow-%d: x\r\n" % n)
        await asyncio.sleep(0.2)
    transport.close()
    assert client.lost.done() and n < 40  # closed within about 8 s


async def test_a_connection_that_sends_nothing_is_closed(api):
    """An idle new connection does not hold a slot: closed after the header timeout."""
    loop = asyncio.get_running_loop()
    transport, client = await loop.create_connection(_RawClient, "127.0.0.1", api.port)
    try:
        await asyncio.wait_for(asyncio.shield(client.lost), 8)
    finally:
        transport.close()
    assert client.received == b""


async def test_an_idle_keep_alive_connection_is_closed(world):
    """After an answer, a kept-alive connection that sends nothing more is closed after
    API_KEEP_ALIVE_S (1 s here; the header deadline is far longer)."""
    tenant = svc.unique("tenant-")
    settings = await world(
        api_keys=hashed({KEY: {"tenant": tenant, "plan": 6}}),
        api_keep_alive_s=1,
        api_header_timeout_s=60,
    )
    async with serving(settings, tenant) as served:
        loop = asyncio.get_running_loop()
        transport, client = await loop.create_connection(_RawClient, "127.0.0.1", served.port)
        transport.write(b"GET /healthz HTTP/1.1\r\nHost: api\r\n\r\n")
        await eventually(lambda: _true(b"\r\n\r\n" in client.received), 10)
        try:
            await asyncio.wait_for(asyncio.shield(client.lost), 5)
        finally:
            transport.close()
    assert client.received.startswith(b"HTTP/1.1 200")


async def test_connections_past_the_limit_get_503(world):
    """With API_MAX_CONNECTIONS=2 and two connections held open, a third request is 503."""
    tenant = svc.unique("tenant-")
    settings = await world(
        api_keys=hashed({KEY: {"tenant": tenant, "plan": 6}}), api_max_connections=2
    )
    async with serving(settings, tenant) as served:
        loop = asyncio.get_running_loop()
        held = [await loop.create_connection(_RawClient, "127.0.0.1", served.port) for _ in "ab"]
        try:
            async with served.client() as client:
                response = await client.get("/healthz")
        finally:
            for transport, _ in held:
                transport.close()
    assert response.status_code == 503


def test_verdict_api_serves_metrics_on_their_own_port(services, database_url, run_prefix):
    """`verdict api` with API_METRICS_PORT: metrics there, none on the API port."""
    port, metrics_port = svc.free_port(), svc.free_port()
    env = {
        **os.environ,
        "AMQP_URL": services.amqp_url,
        "REDIS_URL": services.redis_url,
        "DATABASE_URL": database_url,
        "TOPOLOGY_PREFIX": run_prefix,
        "API_KEYS": json.dumps(hashed({KEY: {"tenant": "t", "plan": 6}})),
        **svc.signing_env(),
        "API_METRICS_PORT": str(metrics_port),
        "LOG_JSON": "true",
    }
    command = [sys.executable, "-m", "ops.cli", "api", "--port", str(port)]
    process = subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL)
    try:
        health = _poll_until(lambda: httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2))
        metrics = httpx.get(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5)
        on_api = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(30)
    assert health.status_code == 200
    assert metrics.status_code == 200 and "verdict_sessions_total" in metrics.text
    assert on_api.status_code == 404


def _poll_until(get: Any, timeout: float = 30) -> httpx.Response:
    """`get()` once the server accepts connections."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return get()
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


# --- fields ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        {"content": "a\u0000b"},
        {"text": "a\u0000b"},
        {"content": "x", "user_id": "u\u0000"},
        {"input_type": "url", "url": "https://example.com/\u0000"},
        {"input_type": "image", "media_path": "a\u0000.png"},
        {"content": "bell \u0007 and escape \u001b[31m"},
        {"content": "C1 CSI \u009b[31m red"},
        {"content": "x", "user_id": "u\u0085v"},
        {"input_type": "url", "url": "https://example.com/\u007f"},
    ],
)
async def test_control_characters_in_any_field_are_422(api, pool, body):
    """NUL (500 from PostgreSQL before), other C0 controls, DEL and C1 (whose CSI starts a
    terminal escape on its own): 422 naming the field."""
    async with api.client() as client:
        response = await client.post(f"{API}/analyze-async", json=body)
    assert response.status_code == 422, response.text
    controls = ("\u0000", "\u0007", "\u009b", "\u0085", "\u007f")
    field = next(k for k, v in body.items() if any(c in v for c in controls))
    assert field in response.json()["detail"]
    await nothing_kept(api, pool)


@pytest.mark.parametrize(
    "content",
    [
        "\u200b\u200c\u200d\u2060\ufeff",
        "\u202e\u2066 \u2069",
        "\u3000\u00a0\u3164",
        "\u034f\u034f\ufe0f",  # marks with no letter: a grapheme joiner, a variation selector
        "\u0301\u0301",
        "\uffff\ue000",  # a noncharacter and a private-use one
    ],
)
async def test_content_with_nothing_visible_is_422(api, pool, content):
    """Zero-width, bidi, blank characters, lone marks, unassigned and private-use code points
    only: 422 before anything is queued."""
    async with api.client() as client:
        response = await client.post(f"{API}/analyze-async", json={"content": content})
    assert response.status_code == 422 and "no visible characters" in response.text
    await nothing_kept(api, pool)


@pytest.mark.parametrize("plan", [True, "6", 5.0])
async def test_a_plan_must_be_a_number_not_something_like_one(api, pool, plan):
    """`plan_type` true, "6" or 5.0 is 422, not quietly read as a plan."""
    async with api.client() as client:
        response = await client.post(
            f"{API}/analyze-async", json={"content": "x", "plan_type": plan}
        )
    assert response.status_code == 422 and "plan_type" in response.text
    await nothing_kept(api, pool)


async def test_500_unknown_fields_get_a_short_422(api, pool):
    """The list of problems is capped and no value sent comes back."""
    body = {"content": "x", **{f"f{i}": "ECHO-ME" for i in range(500)}}
    async with api.client() as client:
        response = await client.post(f"{API}/analyze-async", json=body)
    assert response.status_code == 422
    assert len(response.content) < 2048 and b"ECHO-ME" not in response.content
    assert response.json()["errors"][-1] == "and 490 more"
    await nothing_kept(api, pool)


@pytest.mark.parametrize(
    "body",
    [
        # 400,000 empty arrays: a second of the API's CPU to validate, before the limit
        b'{"content": "x", "y": [' + b",".join([b"[]"] * 400_000) + b"]}",
        # 40,000 unknown fields
        json.dumps({"content": "x", **{f"f{i}": "v" for i in range(40_000)}}).encode(),
    ],
    ids=["empty-arrays", "unknown-fields"],
)
async def test_a_body_of_too_many_json_values_is_413_before_it_is_parsed(api, pool, body):
    """Refused as it streams, in the client's terms, and the API serves others at once."""
    async with api.client() as client:
        started = time.monotonic()
        response = await client.post(
            f"{API}/analyze-async", content=body, headers={"Content-Type": "application/json"}
        )
        refused_in = time.monotonic() - started
        health = await client.get("/healthz")
    assert response.status_code == 413, response.text
    limit = api.settings.api_max_json_values
    assert response.json()["detail"] == f"request body holds more than {limit} JSON values"
    assert health.status_code == 200
    # Not a timed test of speed: a parse of the whole body would take a second or more.
    assert refused_in < 5
    await nothing_kept(api, pool)


@on_both_transports
async def test_malformed_json_is_a_client_error(api, pool):
    """Invalid JSON is 422, invalid UTF-8 400, 100,000 nested arrays 413 (more values than
    a body may hold) and 999 nested ones 400 (nested too deep to parse): never 500."""
    bodies = [
        b'{"content": ',
        b'{"content": "\xff\xfe"}',
        b"[" * 100_000 + b"]" * 100_000,
        b"[" * 999 + b"]" * 999,
    ]
    async with api.client() as client:
        codes = [
            (
                await client.post(
                    f"{API}/analyze-async", content=b, headers={"Content-Type": "application/json"}
                )
            ).status_code
            for b in bodies
        ]
    assert codes == [422, 400, 413, 400], codes
    await nothing_kept(api, pool)


@pytest.mark.parametrize(
    "body",
    [
        b"[]",
        b"null",
        b'"content"',
        b'{"content": 5}',
        b'{"content": "x", "plan_type": 99999999999999999999999999}',
        b'{"content": "x", "plan_type": 1e309}',
        b'{"content": "x", "input_type": "../../etc"}',
        b'{"content": "x", "user_id": "' + b"u" * 129 + b'"}',
    ],
)
async def test_bodies_of_the_wrong_shape_are_422(api, pool, body):
    """Not an object, wrong types, out-of-range numbers, unknown input types, long ids."""
    async with api.client() as client:
        response = await client.post(
            f"{API}/analyze-async", content=body, headers={"Content-Type": "application/json"}
        )
    assert response.status_code == 422, response.text
    await nothing_kept(api, pool)


async def test_a_key_longer_than_200_characters_is_422(api, pool):
    """Idempotency keys are short names, not storage."""
    async with api.client() as client:
        response = await client.post(
            f"{API}/analyze-async", json={"content": "x"}, headers={"Idempotency-Key": "k" * 201}
        )
    assert response.status_code == 422 and "idempotency-key" in response.text
    await nothing_kept(api, pool)


async def test_a_body_with_two_lengths_is_refused_by_the_server(api, pool):
    """Content-Length and Transfer-Encoding together (request smuggling past a proxy that
    reads the other one): 400 and the connection closed, whatever h11 would have done."""
    head = _head(
        f"{API}/analyze-async",
        {"X-API-Key": KEY, "Content-Length": "5", "Transfer-Encoding": "chunked"},
    )
    exchange = await raw_request(api.port, head, [_chunk(b'{"content": "x"}'), b"0\r\n\r\n"])
    assert exchange.status == 400 and b"not both" in exchange.body
    await nothing_kept(api, pool)


# --- media paths -------------------------------------------------------------------------------

BAD_MEDIA_PATHS = [
    "../../etc/passwd",
    "/etc/shadow",
    "/proc/self/environ",
    "%2e%2e/%2e%2e/etc/passwd",
    "\\\\server\\share\\a.png",
    "file:///etc/passwd",
    "http://example.com/a.png",
    "ok/../../a.png",
    "elsewhere.png",  # another tenant's file
    "a" * 300 + ".png",  # a name no filesystem takes (the OS error was a 500)
]


@pytest.mark.parametrize("path", BAD_MEDIA_PATHS)
async def test_media_paths_outside_the_tenants_folder_are_422(api, pool, path):
    """Each path that leaves (or is not in) the tenant's folder: 422, nothing in any queue."""
    root = Path(api.settings.media_root or "")
    (root / "someone-else").mkdir(exist_ok=True)
    (root / "someone-else" / "elsewhere.png").write_bytes(b"png")
    async with api.client() as client:
        response = await client.post(
            f"{API}/analyze-async", json={"input_type": "image", "media_path": path}
        )
    assert response.status_code == 422, response.text
    assert "media" in response.json()["detail"]
    await nothing_kept(api, pool)


@contextlib.asynccontextmanager
async def media_reader(settings: Settings, plan: int) -> AsyncIterator[list[dict[str, Any]]]:
    """A consumer on the media_preprocess queue of `plan` that keeps the task bodies it gets."""
    connection = await connect(settings.amqp_url, "test-media-reader")
    seen: list[dict[str, Any]] = []
    try:
        channel = await connection.channel()
        queue = await channel.get_queue(
            Names(settings.topology_prefix).task_queue("media_preprocess", plan)
        )

        async def keep(message: Any) -> None:
            seen.append(json.loads(message.body))
            await message.ack()

        await queue.consume(keep)
        yield seen
    finally:
        await connection.close()


async def test_media_input_needs_a_file_in_the_folder(api, pool):
    """A file in the tenant's folder: 422 for one that is not there, 202 for one that is, and
    the task names the file relative to MEDIA_ROOT (`<tenant>/<path>`). (Refused while no
    worker can read it: tests/integration/test_worker_registry.py.)"""
    folder = Path(api.settings.media_root or "") / api.tenant / "in"
    folder.mkdir(parents=True)
    (folder / "a.png").write_bytes(b"png")
    request = {"input_type": "image", "media_path": "in/a.png"}
    async with api.client() as client:
        missing = await client.post(
            f"{API}/analyze-async", json={**request, "media_path": "in/b.png"}
        )
        await nothing_kept(api, pool)
        async with media_reader(api.settings, 6) as seen:
            accepted = await client.post(f"{API}/analyze-async", json=request)
            await eventually(lambda: _true(seen))
    assert missing.status_code == 422 and "no such media file" in missing.text
    assert accepted.status_code == 202, accepted.text
    assert seen[0]["input"]["mediaPath"] == f"{api.tenant}/in/a.png"


async def test_a_replay_finds_its_session_after_its_media_file_is_gone(api, pool):
    """Idempotency-Key replay of a media request whose file was removed since: the original
    session, not a 422 about the file; a new key for the same request is refused."""
    folder = Path(api.settings.media_root or "") / api.tenant
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "gone.png").write_bytes(b"png")
    request = {"input_type": "image", "media_path": "gone.png"}
    async with api.client() as client, media_reader(api.settings, 6):
        first = await client.post(
            f"{API}/analyze-async", json=request, headers={"Idempotency-Key": "media-1"}
        )
        (folder / "gone.png").unlink()
        replay = await client.post(
            f"{API}/analyze-async", json=request, headers={"Idempotency-Key": "media-1"}
        )
        fresh = await client.post(
            f"{API}/analyze-async", json=request, headers={"Idempotency-Key": "media-2"}
        )
    assert first.status_code == 202, first.text
    assert replay.status_code in (200, 202), replay.text
    assert replay.json()["session_id"] == first.json()["session_id"]
    assert fresh.status_code == 422 and "no such media file" in fresh.text


async def test_media_input_without_a_media_root_is_422(world, pool):
    """A server with no MEDIA_ROOT refuses media input outright."""
    tenant = svc.unique("tenant-")
    settings = await world(api_keys=hashed({KEY: {"tenant": tenant, "plan": 6}}))
    async with serving(settings, tenant) as served, served.client() as client:
        response = await client.post(
            f"{API}/analyze-async", json={"input_type": "audio", "media_path": "a.wav"}
        )
        assert response.status_code == 422 and "no media" in response.json()["detail"]
        await nothing_kept(served, pool)


# --- sessions: the tenant comes from PostgreSQL -----------------------------------------------


async def test_forged_live_state_does_not_open_a_session(api, redis):
    """A Redis live state naming the caller's tenant, for a session that does not exist or is
    another tenant's, is 404: ownership is read from PostgreSQL."""
    prefix = api.settings.key_prefix
    async with api.client() as client:
        theirs = await client.post(
            f"{API}/analyze-async", json={"content": "theirs"}, headers={"X-API-Key": OTHER_KEY}
        )
        ghost = str(uuid.uuid4())
        forged = {"status": "completed", "progress": 100, "tenant": api.tenant}
        for sid in (ghost, theirs.json()["session_id"]):
            await redis.set(live.state_key(prefix, sid), json.dumps(forged))
        answers = [
            (await client.get(f"{API}/{sid}/{what}")).status_code
            for sid in (ghost, theirs.json()["session_id"])
            for what in ("queue-status", "result", "events")
        ]
        odd_ids = [
            (await client.get(f"{API}/{sid}/queue-status")).status_code
            for sid in ("not-a-uuid", "%00", "1' OR '1'='1")
        ]
    assert answers == [404] * 6
    assert odd_ids == [404] * 3


# --- Idempotency-Key ---------------------------------------------------------------------------


@on_both_transports
async def test_empty_and_blank_idempotency_keys_are_422(api, pool):
    """`Idempotency-Key:` with nothing (or only spaces) would merge unrelated requests."""
    exchanges = [
        await raw_request(
            api.port,
            _head(
                f"{API}/analyze-async",
                {
                    "X-API-Key": KEY,
                    "Idempotency-Key": key,
                    "Content-Type": "application/json",
                    "Content-Length": "16",
                },
            )
            + b'{"content": "x"}',
        )
        for key in ("", "   ")
    ]
    assert [e.status for e in exchanges] == [422, 422]
    assert all(b"idempotency-key" in e.body for e in exchanges)
    await nothing_kept(api, pool)


@on_both_transports
async def test_a_reused_key_with_another_body_is_409(api, pool):
    """Same key, different content: 409, and only the first request's work exists."""
    headers = {"Idempotency-Key": "order-1"}
    async with api.client() as client:
        first = await client.post(f"{API}/analyze-async", json={"content": "a"}, headers=headers)
        again = await client.post(
            f"{API}/analyze-async", json={"text": "a", "plan_type": 6}, headers=headers
        )
        other = await client.post(f"{API}/analyze-async", json={"content": "b"}, headers=headers)
    assert first.status_code == 202 and again.status_code == 202
    assert again.json()["session_id"] == first.json()["session_id"]
    assert again.json()["poll_url"] == first.json()["poll_url"]
    assert other.status_code == 409 and "Idempotency-Key" in other.json()["detail"]
    rows = await pool.fetchval("SELECT count(*) FROM sessions WHERE tenant = $1", api.tenant)
    assert rows == 1 and sum((await queue_depths(api.settings)).values()) == 4


async def test_replaying_a_finished_session_returns_its_verdict(world, pool):
    """Analysed in-process (no broker), then replayed with the same key: 200 with the verdict
    and the links, as GET result shows it."""
    tenant = svc.unique("tenant-")
    settings = await world(api_keys=hashed({KEY: {"tenant": tenant, "plan": 6}}))
    offline = settings.model_copy(update={"amqp_url": "amqp://guest:guest@127.0.0.1:1/"})
    headers = {"Idempotency-Key": "once"}
    async with serving(offline, tenant, broker=False) as served, served.client() as client:
        first = await client.post(f"{API}/analyze-async", json={"content": "hi"}, headers=headers)
        replay = await client.post(f"{API}/analyze-async", json={"content": "hi"}, headers=headers)
        result = await client.get(f"{API}/{first.json()['session_id']}/result")
    assert first.status_code == 200 and replay.status_code == 200, replay.text
    body = replay.json()
    assert body["session_id"] == first.json()["session_id"] and body["verdict"]["label"]
    assert body["result_url"].endswith("/result")
    assert {k: v for k, v in body.items() if not k.endswith("_url")} == result.json()


# --- what the API shows about itself ----------------------------------------------------------


async def test_metrics_and_slash_redirects_are_not_on_the_api_port(api):
    """/metrics and /metrics/ are 404 on the API; no path redirects to a Host-made Location."""
    async with api.client() as client:
        answers = [
            await client.get(path, headers={"Host": "evil.example"})
            for path in ("/metrics", "/metrics/", f"{API}/analyze-async/", "/healthz/")
        ]
    assert [r.status_code for r in answers] == [404, 404, 404, 404]
    assert not any("location" in r.headers for r in answers)


async def test_responses_say_nosniff_and_session_data_no_store(api):
    """nosniff on every answer (errors too); no-store on everything under the API path."""
    async with api.client() as client:
        created = await client.post(f"{API}/analyze-async", json={"content": "x"})
        sid = created.json()["session_id"]
        session_data = [
            created,
            await client.get(f"{API}/{sid}/queue-status"),
            await client.get(f"{API}/{sid}/result"),
            await client.get(f"{API}/{uuid.uuid4()}/result"),
            await client.post(f"{API}/analyze-async", json={}, headers={"X-API-Key": "nope"}),
        ]
        health = await client.get("/healthz")
    for response in [*session_data, health]:
        assert response.headers["x-content-type-options"] == "nosniff"
    for response in session_data:
        assert response.headers["cache-control"] == "no-store"


async def test_an_unexpected_failure_is_a_generic_500_with_a_reference(api, capsys):
    """The client gets a reference, not the exception; the log has both."""

    async def broken(*args: Any) -> bool:
        raise RuntimeError("password=hunter2 at db.internal")

    api.app.state.pipeline.tenants.owns = broken
    async with api.client() as client:
        response = await client.get(f"{API}/{uuid.uuid4()}/queue-status")
    assert response.status_code == 500
    detail = response.json()["detail"]
    assert "hunter2" not in response.text and "RuntimeError" not in response.text
    assert "reference" in detail and response.headers["x-content-type-options"] == "nosniff"
    reference = detail.split("reference ")[1].split()[0]
    logged = "".join(capsys.readouterr())
    assert reference in logged and "hunter2" in logged


# --- server-sent events -----------------------------------------------------------------------


@pytest.mark.parametrize("live_state_too", [True, False])
async def test_an_event_stream_ends_cleanly_when_its_session_vanishes(
    api, pool, redis, caplog, live_state_too
):
    """Row deleted mid-stream (its live state gone too, or still cached in Redis): an `end`
    event, then a complete response, and no error in the log."""
    async with api.client() as client:
        sid = (await client.post(f"{API}/analyze-async", json={"content": "x"})).json()[
            "session_id"
        ]
        events: list[str] = []
        async with client.stream("GET", f"{API}/{sid}/events") as stream:
            async for line in stream.aiter_lines():
                events.append(line)
                first_event = [e for e in events if e.startswith("data:")] == [line]
                if line.startswith("data:") and first_event:
                    await pool.execute("DELETE FROM sessions WHERE id = $1::uuid", sid)
                    if live_state_too:
                        await redis.delete(live.state_key(api.settings.key_prefix, sid))
    assert events[0].startswith("retry: ") and "event: progress" in events
    assert "event: end" in events
    assert "no longer exists" in events[events.index("event: end") + 1]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


async def test_event_streams_are_capped_per_tenant_and_never_switch_rate_limits_off(world):
    """One tenant holding many event streams: past API_MAX_STREAMS_PER_TENANT a stream is
    refused (429); streams past API_MAX_EVENT_STREAMS follow PostgreSQL instead of Redis; and
    while they are open, rate limits are still counted — they run on connections the streams
    cannot take (a shared pool once ran dry under ~150 streams and the limits failed open)."""
    tenant = svc.unique("tenant-")
    settings = await world(
        api_keys=hashed({KEY: {"tenant": tenant, "plan": 6}}),
        api_max_streams_per_tenant=3,
        api_max_event_streams=1,
        rate_limits_by_plan={6: "4/minute"},
    )
    async with serving(settings, tenant) as served, served.client() as http:
        sid = (
            await http.post(f"{API}/analyze-async", json={"content": "still processing"})
        ).json()["session_id"]
        url = f"{served.base}{API}/{sid}/events"
        async with contextlib.AsyncExitStack() as streams:
            readers = []  # kept: a reader dropped early closes its response
            for _ in range(3):  # no worker runs: each stays open
                stream = await streams.enter_async_context(http.stream("GET", url))
                assert stream.status_code == 200
                readers.append(stream.aiter_lines())
                assert (await anext(readers[-1])).startswith("retry: ")
                assert await anext(readers[-1]) == ""
                assert (await anext(readers[-1])).startswith("event: progress")
            refused = await http.get(url)
            assert refused.status_code == 429 and "event streams" in refused.json()["detail"]
            codes = [
                (await http.post(f"{API}/analyze-async", json={"content": f"n{i}"})).status_code
                for i in range(4)
            ]
        assert codes == [202, 202, 202, 429]  # 4 a minute, one used before the streams


JSON_TYPE = {"Content-Type": "application/json"}


@pytest.mark.parametrize(
    ("body", "headers", "says"),
    [
        (b'{"content": "x"}', {**JSON_TYPE, "Content-Encoding": "gzip"}, "uncompressed"),
        (b'{"content": "x"}', {"Content-Type": "text/plain"}, "Content-Type: application/json"),
        (b'{"content": "x"}', {}, "Content-Type: application/json"),
        # json.loads reads UTF-16, whose bytes the value count would misread
        ('{"content": "x\u0122", "y": [' + "[]," * 5000 + "[]]}", JSON_TYPE, "UTF-8"),
    ],
    ids=["gzip", "text-plain", "no-type", "utf-16"],
)
async def test_a_body_the_api_cannot_read_as_sent_is_415(api, pool, body, headers, says):
    """A compressed body was read as if plain (202), a body without a JSON media type got a
    422 about a "dictionary", and one in UTF-16 slipped past the value count: 415, in the
    client's terms."""
    if isinstance(body, str):
        body = body.encode("utf-16")
    async with api.client() as client:
        response = await client.post(f"{API}/analyze-async", content=body, headers=headers)
    assert response.status_code == 415, response.text
    assert says in response.json()["detail"]
    await nothing_kept(api, pool)


@pytest.mark.parametrize(
    "headers",
    [
        [("X-API-Key", KEY), ("X-API-Key", "bogus")],
        [("Authorization", f"Bearer {KEY}"), ("Authorization", "Bearer bogus")],
    ],
    ids=["x-api-key", "authorization"],
)
async def test_credentials_sent_twice_are_400(api, pool, headers):
    """Two keys were taken as the first one; behind a proxy that adds its own header that
    could make a request another caller's: 400, before anything is read."""
    async with httpx.AsyncClient(base_url=api.base) as client:
        response = await client.post(
            f"{API}/analyze-async",
            content=b'{"content": "x"}',
            headers=[*headers, ("Content-Type", "application/json")],
        )
    assert response.status_code == 400 and "one API key" in response.json()["detail"]
    await nothing_kept(api, pool)


async def test_queue_status_answers_the_id_in_the_form_the_api_writes_it(api, pool):
    """`{…}`, a URN, capitals or no hyphens name the same session: answered as the API
    writes the id (they were echoed back as sent, and missed the live cache)."""
    async with api.client() as client:
        sid = (await client.post(f"{API}/analyze-async", json={"content": "x"})).json()[
            "session_id"
        ]
        forms = [f"{{{sid.upper()}}}", f"urn:uuid:{sid}", sid.replace("-", ""), sid]
        answers = [(await client.get(f"{API}/{form}/queue-status")).json() for form in forms]
    assert [a["session_id"] for a in answers] == [sid] * 4


async def test_streams_asked_for_at_once_never_pass_the_tenants_cap(world):
    """The cap is counted as a stream is granted, not as it starts: 12 asked for at once
    against a cap of 4 open 4 (a hostile probe once opened 35 against 32), and every count
    ends with its stream."""
    tenant = svc.unique("tenant-")
    settings = await world(
        api_keys=hashed({KEY: {"tenant": tenant, "plan": 6}}), api_max_streams_per_tenant=4
    )
    async with serving(settings, tenant) as served, served.client() as http:
        sid = (
            await http.post(f"{API}/analyze-async", json={"content": "still processing"})
        ).json()["session_id"]
        url = f"{served.base}{API}/{sid}/events"
        async with contextlib.AsyncExitStack() as streams:
            opened = await asyncio.gather(
                *(streams.enter_async_context(http.stream("GET", url)) for _ in range(12))
            )
            codes = sorted(stream.status_code for stream in opened)
        assert codes == [200] * 4 + [429] * 8, codes
        counts = served.app.state.pipeline.streams
        await eventually(lambda: _true(not counts), 10)


async def test_one_sessions_token_holds_a_few_streams_and_its_tenants_key_still_streams(api):
    """A leaked events link cannot take its tenant's every stream: a token holds at most
    TOKEN_STREAMS_PER_SESSION at once, and the tenant's own key still opens one (a hostile
    probe opened 32 with one token, and the tenant's key was then refused)."""
    async with api.client() as client:
        posted = (await client.post(f"{API}/analyze-async", json={"content": "x"})).json()
        second = (await client.post(f"{API}/analyze-async", json={"content": "y"})).json()
    token_url = f"{api.base}{posted['events_url']}"
    async with httpx.AsyncClient() as anonymous, api.client() as keyed:
        async with contextlib.AsyncExitStack() as streams:
            opened = await asyncio.gather(
                *(streams.enter_async_context(anonymous.stream("GET", token_url)) for _ in range(6))
            )
            codes = sorted(stream.status_code for stream in opened)
            assert codes == [200] * TOKEN_STREAMS_PER_SESSION + [429] * (
                6 - TOKEN_STREAMS_PER_SESSION
            ), codes
            own = await streams.enter_async_context(
                keyed.stream("GET", f"{API}/{second['session_id']}/events")
            )
            assert own.status_code == 200
    pipeline = api.app.state.pipeline
    await eventually(lambda: _true(not pipeline.token_streams and not pipeline.streams), 10)


async def test_reads_with_one_sessions_token_are_rate_limited(api):
    """A final session's token answers its result and closes, so no stream cap bounds its
    reads (a hostile probe read one 433 times a second): TOKEN_READ_LIMIT does, per session,
    and the tenant's key reads on."""
    async with api.client() as client:
        posted = (await client.post(f"{API}/analyze-async", json={"content": "x"})).json()
    url = f"{api.base}{posted['events_url']}"
    codes, refusals = [], []
    async with httpx.AsyncClient() as anonymous:
        for _ in range(12):  # each opened and closed at once, well within a second
            async with anonymous.stream("GET", url) as stream:
                codes.append(stream.status_code)
                if stream.status_code == 429:
                    refusals.append((await stream.aread()).decode())
    assert codes[:5] == [200] * 5 and 429 in codes, codes
    assert "too many reads with this events token" in refusals[0]
    async with api.client() as client:
        assert (await client.get(f"{API}/{posted['session_id']}/result")).status_code == 202


async def test_a_tokens_stream_ends_when_the_token_expires(api):
    """The token's expiry was checked only as a stream opened: one opened 20 s before it
    expired kept its keep-alives (and its tenant's stream) long after. Now it ends then,
    with an `end` event that says what to do."""
    async with api.client() as client:
        sid = (await client.post(f"{API}/analyze-async", json={"content": "x"})).json()[
            "session_id"
        ]
    pipeline = api.app.state.pipeline
    grant = Grant(sid, api.tenant, 6, int(time.time()) + 2)
    url = f"{api.base}{API}/{sid}/events?token={issue(pipeline.events_key, grant)}"
    lines: list[str] = []
    async with httpx.AsyncClient() as anonymous, anonymous.stream("GET", url) as stream:
        assert stream.status_code == 200
        async with asyncio.timeout(20):  # the session never finishes: no worker runs
            async for line in stream.aiter_lines():
                lines.append(line)
    assert "event: end" in lines
    assert "token has expired" in lines[lines.index("event: end") + 1]


@pytest.mark.parametrize(("allowed", "throttled"), [(None, True), ("127.0.0.1", False)])
async def test_a_client_cannot_choose_the_address_it_is_throttled_under(world, allowed, throttled):
    """Unknown keys are counted by the client's address. A loopback client sending a new
    X-Forwarded-For with each guess is still one address unless a proxy is named in
    API_FORWARDED_ALLOW_IPS (then the header is the client's address, as a proxy says)."""
    tenant = svc.unique("tenant-")
    settings = await world(
        api_keys=hashed({KEY: {"tenant": tenant, "plan": 6}}),
        auth_failure_limit="3/minute",
        api_forwarded_allow_ips=allowed,
    )
    async with serving(settings, tenant) as served, served.client() as http:
        codes = [
            (
                await http.get(
                    f"{API}/{uuid.uuid4()}/result",
                    headers={"X-API-Key": f"guess-{i}", "X-Forwarded-For": f"198.51.100.{i}"},
                )
            ).status_code
            for i in range(5)
        ]
    assert codes == ([401, 401, 401, 429, 429] if throttled else [401] * 5)
