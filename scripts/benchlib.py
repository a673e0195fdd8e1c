"""What the benchmarks share: percentiles, an isolated world, process groups, HTTP sessions.

Pure helpers first (unit-tested in tests/unit/test_benchlib.py), then the I/O. A world is
a fresh topology prefix and database on the loopback services, removed at the end; every
process is started in its own process group and the whole group is killed on exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import click
import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from owned import owner_mark, terminate_on_signals  # noqa: E402, F401 (re-exported)
from sandbox import (  # noqa: E402
    LOOPBACK,
    delete_broker_objects,
    delete_redis_keys,
    free_port,
    signing_env,
)

from shared import db as database  # noqa: E402
from shared.api_keys import hashed  # noqa: E402
from shared.broker import connect  # noqa: E402
from shared.ephemera import NOTIFY_CHANNEL, decode_message  # noqa: E402
from shared.settings import Settings, load_settings  # noqa: E402
from topology.broker import declare  # noqa: E402
from topology.spec import from_settings  # noqa: E402

ANALYZE = "/api/v3/pipeline/analyze-async"
BENCH_KEY = "bench-enterprise"
# How a live state that is not final yet reads (shared.live serializes with json.dumps).
PROCESSING = b'"status": "processing"'
# After SIGTERM a process group gets this long before SIGKILL; workers drain in well under it.
STOP_TIMEOUT_S = 15.0
# One no-op worker per analysis component: (component, concurrency, prefetch per plan queue).
NOOP_WORKERS = [(c, 8, 10) for c in ("techniques", "ai_tampered", "claims", "domain")]
# The same four components served by one process (`verdict worker --components …`).
NOOP_WORKERS_GROUPED = [(",".join(c for c, _, _ in NOOP_WORKERS), 8, 10)]
WORKER_SHAPES = {"apart": NOOP_WORKERS, "grouped": NOOP_WORKERS_GROUPED}
# The benchmarks' choice between them.
worker_shape_option = click.option(
    "--workers",
    "worker_shape",
    type=click.Choice(sorted(WORKER_SHAPES)),
    default="apart",
    show_default=True,
    help="a process per component (as in compose.yaml), or one process for all four",
)


# --- pure helpers -------------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100), linear between closest ranks, as numpy's default."""
    if not values:
        raise ValueError("percentile of no values")
    if not 0 <= q <= 100:
        raise ValueError(f"percentile {q} is outside 0..100")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def summarize(values_ms: Sequence[float]) -> dict[str, float]:
    """Count, p50, p95, p99 and max of latencies in milliseconds, rounded to 0.1 ms."""
    if not values_ms:
        return {"n": 0}
    return {
        "n": len(values_ms),
        "p50_ms": round(percentile(values_ms, 50), 1),
        "p95_ms": round(percentile(values_ms, 95), 1),
        "p99_ms": round(percentile(values_ms, 99), 1),
        "max_ms": round(max(values_ms), 1),
    }


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    """numerator / denominator to two places, None when either is missing or zero."""
    if not numerator or not denominator:
        return None
    return round(numerator / denominator, 2)


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain-text table, columns padded to their widest cell; None prints as a dash."""
    cells = [[str(h) for h in headers]] + [["-" if c is None else str(c) for c in r] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(line.rstrip() for line in lines)


def api_keys(tenant: str = "bench") -> dict[str, dict[str, Any]]:
    """One enterprise key: a body plan_type may lower the plan, so it serves every tier."""
    return hashed({BENCH_KEY: {"tenant": tenant, "plan": 6}})


def session_body(plan: int, content: str = "x" * 200) -> dict[str, Any]:
    """An analyze-async request body for a text session on `plan`."""
    return {"input_type": "text", "content": content, "plan_type": plan}


# --- an isolated world ----------------------------------------------------------------------


@dataclass(frozen=True)
class World:
    """A topology prefix and a database of one benchmark run, and how processes reach them."""

    prefix: str
    database: str
    amqp_url: str
    redis_url: str
    admin_url: str
    api_port: int
    extra_env: Mapping[str, str] = field(default_factory=dict)
    # Fresh signing keys, the same for every process of the world.
    signing: Mapping[str, str] = field(default_factory=signing_env)

    @property
    def database_url(self) -> str:
        return urlunsplit(urlsplit(self.admin_url)._replace(path=f"/{self.database}"))

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.api_port}"

    def env(self, **overrides: str) -> dict[str, str]:
        """The environment of a pipeline process of this world."""
        return {
            **os.environ,
            "AMQP_URL": self.amqp_url,
            "REDIS_URL": self.redis_url,
            "DATABASE_URL": self.database_url,
            "TOPOLOGY_PREFIX": self.prefix,
            "API_KEYS": json.dumps(api_keys()),
            **self.signing,
            # One key floods every tier at the pipeline's full rate: quotas would measure
            # themselves, not the pipeline.
            "QUOTAS_ENABLED": "false",
            "API_PORT": str(self.api_port),
            "SESSION_DEADLINE_S": "3600",
            "LOG_LEVEL": "WARNING",
            "LOG_JSON": "true",
            # A benchmark killed outright leaves its pipeline to the next sweep (owned.py).
            **owner_mark(),
            **self.extra_env,
            **overrides,
        }

    def settings(self) -> Settings:
        return load_settings(
            amqp_url=self.amqp_url,
            redis_url=self.redis_url,
            database_url=self.database_url,
            topology_prefix=self.prefix,
            task_signing_key=self.signing["TASK_SIGNING_KEY"],
            task_verify_key=self.signing["TASK_VERIFY_KEY"],
            media_signing_key=self.signing["MEDIA_SIGNING_KEY"],
            media_verify_key=self.signing["MEDIA_VERIFY_KEY"],
            result_keys=json.loads(self.signing["RESULT_KEYS"]),
            events_token_key=self.signing["EVENTS_TOKEN_KEY"],
        )


def transport_env(transport: str) -> dict[str, str]:
    """The pipeline's environment for a transport of bench.py's: `postgres-alone` is the
    postgres transport with REDIS_URL unset (no broker, no Redis)."""
    if transport == "postgres-alone":
        return {"TRANSPORT": "postgres", "REDIS_URL": ""}
    return {"TRANSPORT": transport}


def new_world(stem: str = "bench") -> World:
    urls = {name: os.environ.get(name, default) for name, default in LOOPBACK.items()}
    for url in urls.values():
        host = urlsplit(url).hostname
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise SystemExit(f"benchmarks run on loopback services only, not {host}")
    tag = uuid.uuid4().hex[:8]
    return World(
        prefix=f"{stem}{tag}",
        database=f"verdict_{stem}_{tag}",
        amqp_url=urls["AMQP_URL"],
        redis_url=urls["REDIS_URL"],
        admin_url=urls["DATABASE_URL"],
        api_port=free_port(),
    )


async def create_world(world: World) -> None:
    """Create and migrate the database, declare the topology."""
    admin = await asyncpg.connect(world.admin_url)
    try:
        await admin.execute(f'CREATE DATABASE "{world.database}"')
    finally:
        await admin.close()
    await database.migrate(world.database_url)
    connection = await connect(world.amqp_url, "bench-declare")
    try:
        await declare(await connection.channel(), from_settings(world.settings()))
    finally:
        await connection.close()


async def destroy_world(world: World) -> None:
    """Drop the database, the prefix's queues and exchanges and its Redis keys."""
    admin = await asyncpg.connect(world.admin_url)
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{world.database}" WITH (FORCE)')
    finally:
        await admin.close()
    await delete_broker_objects(world.amqp_url, (world.prefix,))
    await delete_redis_keys(world.redis_url, world.prefix)


async def purge_queues(world: World, names: Sequence[str]) -> None:
    connection = await connect(world.amqp_url, "bench-purge")
    try:
        channel = await connection.channel()
        for name in names:
            await (await channel.get_queue(name, ensure=False)).purge()
    finally:
        await connection.close()


# --- processes ------------------------------------------------------------------------------


@dataclass
class Running:
    name: str
    process: subprocess.Popen[bytes]
    log: IO[bytes]


class ProcessGroup:
    """Child processes, each leading its own process group; all of them die with this one."""

    def __init__(self, log_dir: Path | None = None) -> None:
        self.log_dir = log_dir or Path(tempfile.mkdtemp(prefix="verdict-bench-"))
        self._running: list[Running] = []

    def start(
        self, name: str, argv: Sequence[str], env: Mapping[str, str], cwd: Path = ROOT
    ) -> Running:
        log = (self.log_dir / f"{name}.log").open("ab")
        process = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own group: killing it takes its children too
        )
        running = Running(name, process, log)
        self._running.append(running)
        return running

    def pid(self, name: str) -> int:
        """The pid of the process started as `name`: the leader of its process group."""
        return next(r.process.pid for r in self._running if r.name == name)

    def check_alive(self) -> None:
        """Raise when a started process has exited, naming its log."""
        for r in self._running:
            if r.process.poll() is not None:
                log = self.log_dir / f"{r.name}.log"
                tail = log.read_text(errors="replace")[-2000:]
                raise RuntimeError(f"{r.name} exited with {r.process.returncode}; log:\n{tail}")

    def stop(self, names: Sequence[str] | None = None) -> None:
        """SIGTERM the groups (all, or those named), SIGKILL what outlives STOP_TIMEOUT_S."""
        chosen = [r for r in self._running if names is None or r.name in names]
        for r in chosen:
            _signal_group(r.process, signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        for r in chosen:
            with contextlib.suppress(subprocess.TimeoutExpired):
                r.process.wait(max(0.1, deadline - time.monotonic()))
            _signal_group(r.process, signal.SIGKILL)  # stragglers, and any orphaned children
            r.process.wait()
            r.log.close()
            self._running.remove(r)

    def __enter__(self) -> ProcessGroup:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _signal_group(process: subprocess.Popen[bytes], sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, sig)


def python(*args: str) -> list[str]:
    return [sys.executable, *args]


def start_api_and_aggregators(
    world: World, group: ProcessGroup, aggregators: int, env: Mapping[str, str] | None = None
) -> None:
    """`python -m ops.cli api` and `aggregators` × `python -m ops.cli aggregator`."""
    group.start("api", python("-m", "ops.cli", "api"), world.env(**(env or {})))
    start_aggregators(world, group, aggregators, env)


def start_aggregators(
    world: World, group: ProcessGroup, count: int, env: Mapping[str, str] | None = None
) -> list[str]:
    """`count` × `python -m ops.cli aggregator`; their names, to stop them later."""
    environment = world.env(**(env or {}))
    names = [f"aggregator-{i}" for i in range(count)]
    for name in names:
        group.start(name, python("-m", "ops.cli", "aggregator"), environment)
    return names


def start_workers(
    world: World,
    group: ProcessGroup,
    worker_args: Sequence[tuple[str, int, int]],
    env: Mapping[str, str] | None = None,
) -> list[str]:
    """Start no-op workers, one process per entry (`component` may name several, separated by
    commas: one process serves them all); their names, to stop them later."""
    environment = world.env(**(env or {}))
    launcher = str(ROOT / "scripts" / "bench_worker.py")
    names = []
    for i, (component, concurrency, prefetch) in enumerate(worker_args):
        argv = python(launcher, component, "--concurrency", str(concurrency))
        name = f"worker-{component.replace(',', '+')}-{i}"
        group.start(name, [*argv, "--prefetch", str(prefetch)], environment)
        names.append(name)
    return names


async def wait_until_ready(world: World, group: ProcessGroup, timeout_s: float = 30) -> None:
    """The API answers /healthz, every worker and aggregator consumes its queues, and every
    analysis component has an online worker in the registry and in the API's view of it (the
    API refuses sessions no online worker can serve, and a worker announces itself only once
    it consumes)."""
    deadline = time.monotonic() + timeout_s
    async with httpx.AsyncClient(base_url=world.api_url, timeout=2) as http:
        while True:
            group.check_alive()
            with contextlib.suppress(httpx.HTTPError):
                # The API's own view last: it says whether a POST now would be taken. (On the
                # postgres transport nothing consumes a broker queue: a worker announces itself
                # once it claims.)
                on_table = world.extra_env.get("TRANSPORT") == "postgres"
                consumed = on_table or await _consumed(world)
                if consumed and await _announced(world) and await _accepts_text(http):
                    return
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"pipeline not ready within {timeout_s}s; logs in {group.log_dir}"
                )
            await asyncio.sleep(0.2)


async def _accepts_text(http: httpx.AsyncClient) -> bool:
    """The API answers /healthz and would take a text session now (its registry view)."""
    answer = await http.get("/healthz")
    return answer.status_code == 200 and bool(answer.json().get("accepts_text"))


async def _consumed(world: World) -> bool:
    """Every task queue of the four analysis components and the results queue have a consumer."""
    connection = await connect(world.amqp_url, "bench-ready")
    try:
        channel = await connection.channel()
        for queue in from_settings(world.settings()).queues:
            if ".media_preprocess." in queue.name or not queue.name.startswith(world.prefix + "."):
                continue
            if ".retry." in queue.name:
                continue
            declared = await channel.declare_queue(queue.name, passive=True)
            if not declared.declaration_result.consumer_count:
                return False
        return True
    finally:
        await connection.close()


async def _announced(world: World) -> bool:
    """Every analysis component has a worker the registry shows online."""
    from redis.asyncio import Redis

    from shared.constants import ANALYSIS_COMPONENTS
    from shared.ephemera import Ephemera
    from shared.house import TableShelf, Unawaited, redis_house
    from shared.registry import online_by_component, registry

    prefix = world.settings().key_prefix
    if world.extra_env.get("REDIS_URL") == "":  # PostgreSQL alone: the registry is there
        conn = await asyncpg.connect(world.database_url)
        try:
            shelf = TableShelf(Ephemera(conn), Unawaited())
            records = await registry(shelf, prefix, time.time())
        finally:
            await conn.close()
        return all(online_by_component(records, ANALYSIS_COMPONENTS).values())
    redis = Redis.from_url(world.redis_url)
    try:
        records = await registry(redis_house(redis).shelf, prefix, time.time())
    finally:
        await redis.aclose()
    return all(online_by_component(records, ANALYSIS_COMPONENTS).values())


# --- sessions over HTTP ---------------------------------------------------------------------


def client(world: World, connections: int) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        base_url=world.api_url,
        headers={"X-API-Key": BENCH_KEY},
        timeout=httpx.Timeout(60.0),
        limits=httpx.Limits(max_connections=connections, max_keepalive_connections=connections),
    )


async def post_session(http: httpx.AsyncClient, plan: int) -> tuple[str, float]:
    """POST one session; its id and the wall-clock time the request was sent."""
    sent = time.time()
    response = await http.post(ANALYZE, json=session_body(plan))
    if response.status_code != 202:
        raise RuntimeError(f"analyze-async answered {response.status_code}: {response.text}")
    return response.json()["session_id"], sent


async def finished(pool: asyncpg.Pool, ids: Sequence[str]) -> dict[str, tuple[float, float]]:
    """Sessions among `ids` that are final: id → (created_at, finished_at) as epoch seconds."""
    rows = await pool.fetch(
        "SELECT id::text, extract(epoch FROM created_at) AS c, extract(epoch FROM finished_at) AS f"
        " FROM sessions WHERE id = ANY($1::uuid[]) AND finished_at IS NOT NULL",
        list(ids),
    )
    return {r["id"]: (float(r["c"]), float(r["f"])) for r in rows}


async def wait_all_final(
    pool: asyncpg.Pool, ids: Sequence[str], timeout_s: float
) -> dict[str, tuple[float, float]]:
    """Wait until every session of `ids` is final; their (created, finished) epoch times.

    The world's database holds only this run's sessions, so a count is enough to wait on:
    polling the ids themselves would cost the client more CPU than the pipeline it measures.
    """
    deadline = time.monotonic() + timeout_s
    while await open_sessions(pool):
        if time.monotonic() > deadline:
            raise RuntimeError(f"sessions still open after {timeout_s}s")
        await asyncio.sleep(0.1)
    return await finished(pool, ids)


async def warm_up(world: World, pool: asyncpg.Pool, plan: int = 6, count: int = 20) -> None:
    """A few sessions first, so connection set-up and first-call costs stay out of the figures."""
    async with client(world, 4) as http:
        posted = await asyncio.gather(*(post_session(http, plan) for _ in range(count)))
    await wait_all_final(pool, [sid for sid, _ in posted], timeout_s=30)


async def open_sessions(pool: asyncpg.Pool, plan: int | None = None) -> int:
    """Sessions of the world (of one plan, or all) that are still processing."""
    count: int = await pool.fetchval(
        "SELECT count(*) FROM sessions"
        " WHERE status = 'processing' AND ($1::int IS NULL OR plan = $1)",
        plan,
    )
    return count


async def queue_depths(world: World, names: Sequence[str]) -> dict[str, int]:
    """Ready messages per queue (passive declares: exact, unlike the management stats)."""
    connection = await connect(world.amqp_url, "bench-depths")
    try:
        channel = await connection.channel()
        depths = {}
        for name in names:
            declared = await channel.declare_queue(name, passive=True)
            depths[name] = declared.declaration_result.message_count or 0
        return depths
    finally:
        await connection.close()


async def consumer_count(amqp_url: str, name: str) -> int:
    """Consumers of queue `name` (a passive declare: no management plugin needed); 0 while
    the queue does not exist yet."""
    import aiormq

    connection = await connect(amqp_url, "bench-consumers")
    try:
        channel = await connection.channel()
        try:
            declared = await channel.declare_queue(name, passive=True)
        except aiormq.exceptions.ChannelNotFoundEntity:
            return 0
        return declared.declaration_result.consumer_count or 0
    finally:
        await connection.close()


class FinalEvents:
    """When each session's final state was announced on Redis (the live-state channel).

    One pattern subscription: waiting costs the pipeline nothing, unlike polling its API.
    """

    def __init__(self, world: World) -> None:
        self.world = world
        self.seen: dict[str, float] = {}
        self._waiting: dict[str, asyncio.Future[float]] = {}
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> FinalEvents:
        from redis.asyncio import Redis

        if self.world.extra_env.get("REDIS_URL") == "":  # PostgreSQL alone: over NOTIFY
            self._listener = await asyncpg.connect(self.world.database_url)
            await self._listener.add_listener(NOTIFY_CHANNEL, self._notified)
            return self
        self._redis = Redis.from_url(self.world.redis_url)
        self._pubsub = self._redis.pubsub()
        await self._pubsub.psubscribe(f"{self.world.prefix}:events:*")
        self._task = asyncio.create_task(self._listen())
        return self

    async def _listen(self) -> None:
        async for message in self._pubsub.listen():
            if message["type"] != "pmessage" or PROCESSING in message["data"]:
                continue
            self._final(message["channel"].rsplit(b":", 1)[1].decode())

    def _notified(self, _conn: object, _pid: int, _channel: str, payload: str) -> None:
        message = decode_message(payload)
        if message is None:
            return
        channel, data = message
        events = f"{self.world.prefix}:events:"
        if channel.startswith(events) and PROCESSING.decode() not in data:
            self._final(channel.removeprefix(events))

    def _final(self, session_id: str) -> None:
        self.seen.setdefault(session_id, time.time())
        waiter = self._waiting.pop(session_id, None)
        if waiter is not None and not waiter.done():
            waiter.set_result(self.seen[session_id])

    async def wait(self, session_id: str, timeout_s: float = 30) -> float:
        """The wall-clock time the session's final state was announced, once it is."""
        if session_id in self.seen:
            return self.seen[session_id]
        waiter = self._waiting.setdefault(session_id, asyncio.get_running_loop().create_future())
        return await asyncio.wait_for(waiter, timeout_s)

    async def __aexit__(self, *exc: object) -> None:
        if self._task is None:
            await self._listener.close()
            return
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        await self._pubsub.aclose()
        await self._redis.aclose()


async def hops(pool: asyncpg.Pool, sent: Mapping[str, float]) -> dict[str, dict[str, float]]:
    """Where final sessions spent their time: the API (POST sent → row created), to the first
    component result recorded, and from it to the verdict (the fan-in of the other three)."""
    rows = await pool.fetch(
        "SELECT s.id::text AS id, extract(epoch FROM s.created_at) AS created,"
        " extract(epoch FROM min(r.recorded_at)) AS first,"
        " extract(epoch FROM s.finished_at) AS finished"
        " FROM sessions s JOIN component_results r ON r.session_id = s.id"
        " WHERE s.id = ANY($1::uuid[]) AND s.finished_at IS NOT NULL"
        " GROUP BY s.id, s.created_at, s.finished_at",
        list(sent),
    )
    spans: dict[str, list[float]] = {"api": [], "to_first_result": [], "fan_in": []}
    for r in rows:
        created, first, done = float(r["created"]), float(r["first"]), float(r["finished"])
        spans["api"].append((created - sent[r["id"]]) * 1000)
        spans["to_first_result"].append((first - created) * 1000)
        spans["fan_in"].append((done - first) * 1000)
    return {name: summarize(values) for name, values in spans.items()}
