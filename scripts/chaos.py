#!/usr/bin/env python3
"""Chaos scenario: sessions keep flowing while processes and services are knocked over.

Runs `verdict up` (compose.yaml's replicas) on a fresh topology prefix, database and Redis
database, submits sessions over HTTP on every plan, and meanwhile:
  - kills -9 a random worker of every component and the aggregator, repeatedly
    (the supervisor restarts them, like compose's `restart: unless-stopped`),
  - restarts RabbitMQ once (`rabbitmqctl stop_app` / `start_app`) — with --own-broker a node
    of its own on other ports (scripts/rabbit_node.py), so the machine's broker is untouched;
    with --transport postgres (tasks and results as rows of job_queue, no broker) it crashes
    and restarts a PostgreSQL server of the run's own instead,
  - flushes the run's Redis database once (with --without-redis, on the postgres transport,
    there is none: what Redis holds lives in PostgreSQL, and crashes with it),
  - injects poison messages into plan queues.
With --cluster PORT it runs in quorum mode on a three-node cluster of its own
(scripts/rabbit_cluster.py) and, instead of the process kills and the RabbitMQ restart,
kill -9s the Erlang VM of the first node (every client's first address and every queue's
leader), restarts it, then kill -9s the second and leaves it down to the end; the report adds
the longest stall of accepted→final.

Then it checks: every accepted session is `completed` (the session deadline is far beyond the
settle time, so a lost task cannot hide behind the janitor ending its session `partial`), no
component timed out, no session has two verdicts, every verdict agrees with its component
rows, and the DLQ holds exactly the injected poison. It prints the
counts as JSON and exits 1 when a check fails.

    scripts/chaos.py --sessions 300 --poison 6

Loopback services only (AMQP_URL, REDIS_URL, DATABASE_URL or the local defaults); bounded
by --sessions and --timeout; it removes its database, queues and processes afterwards, on
SIGTERM too. What a run killed outright (SIGKILL) leaves running, the next run stops first
(scripts/owned.py).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import aio_pika
import asyncpg
import httpx
from redis.asyncio import Redis

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import owned  # noqa: E402
import sandbox  # noqa: E402
from postgres_node import OwnedPostgres, owned_postgres  # noqa: E402
from rabbit_cluster import RabbitCluster  # noqa: E402
from rabbit_node import RabbitNode  # noqa: E402

from aggregator.verdict import compute, outcome_of  # noqa: E402
from shared import db as database  # noqa: E402
from shared.api_keys import hashed  # noqa: E402
from shared.broker import Publisher, connect  # noqa: E402
from shared.constants import REASON_HEADER  # noqa: E402
from shared.errors import BrokerUnavailable, QueueFull  # noqa: E402
from shared.job_queue import TablePublisher  # noqa: E402
from shared.names import Names  # noqa: E402
from shared.settings import Settings  # noqa: E402
from topology.spec import from_settings  # noqa: E402

API = "/api/v3/pipeline"
KEY = "chaos-enterprise"
# The Redis database the scenario may flush: never the default one of a developer
# (--redis-db picks another, so two runs side by side do not flush each other's keys).
CHAOS_REDIS_DB = 11
TEXTS = [
    "Guvernul a anunțat bugetul pe 2025: investițiile cresc cu 3%, potrivit ministerului.",
    "SHOCKING!!! They HIDE the truth from you. Share before it's deleted: https://bit.ly/x1",
    "The council met on Tuesday to discuss bus routes; minutes at https://www.reuters.com/a",
    "URGENT! Doar azi: medicii nu vor să știi acest leac minune. Distribuie acum!!!",
]


@dataclass
class Tally:
    sent: int = 0
    accepted_async: list[str] = field(default_factory=list)
    finished_sync: list[str] = field(default_factory=list)
    refused_503: int = 0
    # POSTs sent again, with the same Idempotency-Key, after the connection failed mid-way.
    resent_after_transport_error: int = 0
    errors: list[str] = field(default_factory=list)
    poison: list[bytes] = field(default_factory=list)
    kills: dict[str, int] = field(default_factory=dict)
    events: dict[str, float] = field(default_factory=dict)
    accepted_at: list[float] = field(default_factory=list)
    broker_back_at: float | None = None
    node_losses: list[dict[str, object]] = field(default_factory=list)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def with_db(url: str, db: str) -> str:
    return urlunsplit(urlsplit(url)._replace(path=f"/{db}"))


# The session deadline is this many times the settle timeout: the janitor must never end a
# session during the run, or a lost task would pass as a `partial` session.
DEADLINE_FACTOR = 20
# The postgres run's own server admits this many connections. Its fourteen processes may
# hold, at a burst, as many as their pools allow (152 by the README's table of connections),
# more than a default server's 100; a deployment sizes max_connections the same way.
OWN_SERVER_CONNECTIONS = 300


async def main(args: argparse.Namespace) -> int:
    if args.transport == "postgres":  # a PostgreSQL server of its own, restarted mid-run
        with owned_postgres(f"-c max_connections={OWN_SERVER_CONNECTIONS}") as pg:
            return await scenario(args, None, 0.0, pg)
    node: RabbitNode | RabbitCluster | None = None
    if args.cluster:
        node = RabbitCluster(f"vchc{args.cluster}", args.cluster)
    elif args.own_broker:
        node = RabbitNode(f"vchaos{args.own_broker}", args.own_broker)
    if node is not None:
        booting = time.monotonic()
        await asyncio.to_thread(node.start)
        boot_s = round(time.monotonic() - booting, 1)
    try:
        return await scenario(args, node, boot_s if node else 0.0)
    finally:
        if node is not None:
            await asyncio.to_thread(node.stop)


async def scenario(
    args: argparse.Namespace,
    node: RabbitNode | RabbitCluster | None,
    boot_s: float,
    pg: OwnedPostgres | None = None,
) -> int:
    """`pg`: the postgres transport, on a server of this run's own (it is restarted)."""
    amqp = node.amqp_url if node else os.environ.get("AMQP_URL", sandbox.LOOPBACK["AMQP_URL"])
    if pg is not None:
        amqp = ""  # no broker at all
    management = node.management_url if node else os.environ.get("RABBITMQ_MANAGEMENT_URL")
    cluster = node if isinstance(node, RabbitCluster) else None
    redis_url = (
        ""
        if args.without_redis
        else with_db(os.environ.get("REDIS_URL", sandbox.LOOPBACK["REDIS_URL"]), str(args.redis_db))
    )
    admin_db = pg.url if pg else os.environ.get("DATABASE_URL", sandbox.LOOPBACK["DATABASE_URL"])
    prefix, db_name = sandbox.unique("chaos"), sandbox.unique("verdict_chaos_")
    database_url = await sandbox.create_database(with_db(admin_db, "postgres"), db_name)
    port = free_port()
    logs = Path(tempfile.mkdtemp(prefix="verdict-chaos-"))
    env = {
        **os.environ,
        "AMQP_URL": amqp,
        "REDIS_URL": redis_url,
        "DATABASE_URL": database_url,
        "TOPOLOGY_PREFIX": prefix,
        "API_PORT": str(port),
        "API_KEYS": json.dumps(hashed({KEY: {"tenant": "chaos", "plan": 6}})),
        **sandbox.signing_env(),
        # Chaos checks that nothing is lost; a 429 from a quota would only blur the tally.
        "QUOTAS_ENABLED": "false",
        # A killed worker's lock must not hold its task for long; the watchdog renews it.
        "LOCK_TTL_MS": "3000",
        "LOCK_RETRY_MS": "500",
        "RETRY_BASE_MS": "500",
        "SESSION_DEADLINE_S": str(args.timeout * DEADLINE_FACTOR),
        "JANITOR_INTERVAL_S": "2",
        "SHUTDOWN_GRACE_S": "5",
        "LOG_JSON": "true",
        # Stopped by the next run's sweep if this one is killed before it can stop them.
        **owned.owner_mark(),
    }
    if pg is not None:  # a killed worker's rows return as soon as its lease lapses
        env |= {"TRANSPORT": "postgres", "JOB_LEASE_S": "3", "JOB_POLL_S": "1"}
    if management:
        env["RABBITMQ_MANAGEMENT_URL"] = management
    if cluster is not None:
        env |= {"AMQP_HOSTS": cluster.amqp_hosts, "QUEUE_TYPE": "quorum"}
    settings = Settings(
        transport="postgres" if pg else "rabbitmq",
        amqp_url=amqp,
        amqp_hosts=env.get("AMQP_HOSTS"),
        queue_type=env.get("QUEUE_TYPE", "classic"),
        redis_url=redis_url,
        database_url=database_url,
        topology_prefix=prefix,
        # The retry tiers the pipeline declares, so their depths can be read too.
        retry_base_ms=int(env["RETRY_BASE_MS"]),
        lock_retry_ms=int(env["LOCK_RETRY_MS"]),
    )
    up = subprocess.Popen(
        [sys.executable, "-m", "ops.cli", "up", "--log-dir", str(logs)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=open(logs / "up.log", "wb"),  # noqa: SIM115
        start_new_session=True,
    )
    tally = Tally()
    try:
        base = f"http://127.0.0.1:{port}"
        await wait_ready(base, up, logs)
        started = time.monotonic()
        if cluster is not None:
            chaos = lose_nodes(args, settings, tally, cluster)
        else:
            chaos = make_chaos(args, settings, logs, tally, node, pg)
        await asyncio.gather(submit_all(base, args, tally), chaos)
        tally.events["submitted_s"] = round(time.monotonic() - started, 1)
        report = await settle_and_check(settings, tally, args.timeout, started)
    finally:
        stop(up)
        # A cluster of its own goes with all its queues; a shared broker keeps only ours.
        broker = not cluster and pg is None
        await cleanup(settings, None if cluster else management, admin_db, db_name, broker)
    if node is not None:
        report["timings_s"]["broker_boot_s"] = boot_s
    report["logs"] = str(logs)
    print(json.dumps(report, indent=2))
    return 0 if report["ok"] else 1


async def wait_ready(base: str, up: subprocess.Popen, logs: Path, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    async with httpx.AsyncClient(timeout=2) as client:
        while time.monotonic() < deadline:
            if up.poll() is not None:
                raise SystemExit(f"verdict up exited:\n{(logs / 'up.log').read_text()}")
            try:
                health = (await client.get(f"{base}/healthz")).json()
                carried = health.get("rabbitmq") or health.get("transport") == "postgres"
                if carried and health.get("accepts_text"):
                    await asyncio.sleep(3)  # consumers registered
                    return
            except (httpx.HTTPError, ValueError):
                pass
            await asyncio.sleep(0.5)
    raise SystemExit("pipeline not ready")


def log_resend(exc: Exception) -> None:
    print(f"chaos: POST sent again after {exc!r}", file=sys.stderr)


async def submit_all(base: str, args: argparse.Namespace, tally: Tally) -> None:
    """POST sessions over plans 1..6 at a steady pace; a 503 is retried after Retry-After,
    and a POST whose connection failed is sent again under its Idempotency-Key (the API may
    have accepted it: the key makes the second send return that same session)."""
    gate = asyncio.Semaphore(8)
    interval = args.duration / args.sessions

    async def one(i: int, client: httpx.AsyncClient) -> None:
        body = {"content": f"{TEXTS[i % len(TEXTS)]} #{i}", "plan_type": 1 + i % 6}
        headers = {"X-API-Key": KEY, "Idempotency-Key": f"chaos-{uuid.uuid4()}"}
        async with gate:
            tally.sent += 1
            # A 503 says "try again": a client keeps trying for as long as the run waits for
            # its sessions (a Redis flush empties the worker registry until every worker's next
            # beat, up to 30 s and longer on a loaded machine), and says so if it gives up.
            give_up_at = time.monotonic() + args.timeout
            while time.monotonic() < give_up_at:
                try:
                    r = await client.post(f"{API}/analyze-async", json=body, headers=headers)
                except httpx.TransportError as exc:  # cut mid-way: the API restarting, say
                    tally.resent_after_transport_error += 1
                    log_resend(exc)
                    await asyncio.sleep(1.0)
                    continue
                except httpx.HTTPError as exc:
                    tally.errors.append(f"POST: {exc!r}")
                    return
                if r.status_code == 202:
                    tally.accepted_async.append(r.json()["session_id"])
                    tally.accepted_at.append(time.monotonic())
                    return
                if r.status_code == 200 and r.json().get("mode") == "sync":
                    tally.finished_sync.append(r.json()["session_id"])
                    return
                if r.status_code == 503:
                    tally.refused_503 += 1
                    await asyncio.sleep(min(2.0, float(r.headers.get("Retry-After", "1"))))
                    continue
                tally.errors.append(f"POST {r.status_code}: {r.text[:200]}")
                return
            tally.errors.append(f"POST: still 503 after {args.timeout:.0f} s")

    async with httpx.AsyncClient(base_url=base, timeout=60) as client:
        pending = []
        for i in range(args.sessions):
            pending.append(asyncio.create_task(one(i, client)))
            await asyncio.sleep(interval)
        await asyncio.gather(*pending)


async def make_chaos(
    args: argparse.Namespace,
    settings: Settings,
    logs: Path,
    tally: Tally,
    node: RabbitNode | RabbitCluster | None,
    pg: OwnedPostgres | None = None,
) -> None:
    """Kill every kind of process at least once, restart RabbitMQ once (on the postgres
    transport: PostgreSQL, crashed and started again), flush Redis once."""
    groups = [
        "worker-media-preprocess",
        "worker-techniques",
        "worker-ai-tampered",
        "worker-claims",
        "worker-domain",
        "aggregator",
    ]
    plan = [*random.sample(groups, len(groups)), *random.choices(groups, k=args.extra_kills)]
    step = args.duration / (len(plan) + 2)
    for n, group in enumerate(plan):
        await asyncio.sleep(step)
        kill_one(group, logs, tally)
        if n == len(plan) // 3:
            if pg is not None:
                await restart_postgres(tally, pg)
            else:
                await restart_rabbitmq(tally, node)
            await inject_poison(settings, args.poison, tally)
        if n == 2 * len(plan) // 3 and settings.redis_url:
            await flush_redis(settings, tally)


async def lose_nodes(
    args: argparse.Namespace, settings: Settings, tally: Tally, cluster: RabbitCluster
) -> None:
    """kill -9 the first node, restart it, kill -9 the second (down to the end); poison
    injected while the first is down."""
    first, second, _ = cluster.nodes
    step = args.duration / 4
    await asyncio.sleep(step)
    await node_lost(first, tally)
    await inject_poison(settings, args.poison, tally)
    await asyncio.sleep(step)
    restarting = time.monotonic()
    await asyncio.to_thread(first.start)
    tally.events["node_restart_s"] = round(time.monotonic() - restarting, 1)
    tally.node_losses.append({"node": first.node, "event": "restarted", "at": time.monotonic()})
    await asyncio.sleep(step)
    await node_lost(second, tally)


async def node_lost(node: RabbitNode, tally: Tally) -> None:
    await asyncio.to_thread(node.kill)
    tally.kills[node.node] = tally.kills.get(node.node, 0) + 1
    tally.node_losses.append({"node": node.node, "event": "killed", "at": time.monotonic()})


def kill_one(group: str, logs: Path, tally: Tally) -> None:
    pids = json.loads((logs / "pids.json").read_text())
    victims = [(label, pid) for label, pid in pids.items() if label.rsplit("-", 1)[0] == group]
    _, pid = random.choice(victims)
    try:
        os.kill(pid, signal.SIGKILL)
        tally.kills[group] = tally.kills.get(group, 0) + 1
    except ProcessLookupError:
        pass


async def restart_rabbitmq(tally: Tally, node: RabbitNode | RabbitCluster | None) -> None:
    started = time.monotonic()
    if isinstance(node, RabbitNode):
        await asyncio.to_thread(node.stop_app)
        await asyncio.sleep(3)
        await asyncio.to_thread(node.start_app)
    else:
        await run("rabbitmqctl", "stop_app")
        await asyncio.sleep(3)
        await run("rabbitmqctl", "start_app")
    tally.broker_back_at = time.monotonic()
    tally.events["rabbitmq_down_s"] = round(time.monotonic() - started, 1)


async def restart_postgres(tally: Tally, pg: OwnedPostgres) -> None:
    """Crash the server (immediate: no checkpoint, every session cut) and start it again."""
    started = time.monotonic()
    await asyncio.to_thread(pg.stop, "immediate")
    await asyncio.sleep(3)
    await asyncio.to_thread(pg.start)
    tally.broker_back_at = time.monotonic()
    tally.events["postgres_down_s"] = round(time.monotonic() - started, 1)


async def flush_redis(settings: Settings, tally: Tally) -> None:
    redis = Redis.from_url(settings.redis_url)
    try:
        await redis.flushdb()
    finally:
        await redis.aclose()
    tally.events["redis_flushed"] = 1


def poison_of(i: int, names: Names) -> tuple[bytes, str]:
    body = json.dumps({"poison": i, "nonce": uuid.uuid4().hex}).encode()
    return body, names.task_queue(random.choice(["techniques", "claims", "domain"]), 1 + i % 6)


async def inject_poison(settings: Settings, count: int, tally: Tally) -> None:
    names = Names(settings.topology_prefix)
    if settings.transport == "postgres":
        pool = await database.create_pool(settings.database_url, max_size=1)
        try:
            rows = TablePublisher(pool, names)
            for i in range(count):
                body, key = poison_of(i, names)
                for _ in range(20):  # the server may still be starting
                    try:
                        await rows.send(names.exchange, key, aio_pika.Message(body))
                    except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError):
                        await asyncio.sleep(0.5)
                        continue
                    tally.poison.append(body)
                    break
        finally:
            await pool.close()
        return
    connection = await connect(settings.amqp_urls(), "chaos-poison")
    try:
        publisher = await Publisher(connection, names, 5).open()
        for i in range(count):
            body, key = poison_of(i, names)
            # Right after a node loss a quorum queue may nack until its new leader is elected.
            message = aio_pika.Message(body, delivery_mode=2)
            for _ in range(20):
                try:
                    await publisher.send(names.exchange, key, message)
                except (QueueFull, BrokerUnavailable):
                    await asyncio.sleep(0.5)
                    continue
                tally.poison.append(body)
                break
    finally:
        await connection.close()


async def run(*argv: str) -> None:
    process = await asyncio.create_subprocess_exec(
        *argv, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
    )
    await asyncio.wait_for(process.wait(), 120)


async def observe(settings: Settings) -> asyncpg.Connection:
    """The script's own connection for its checks, waiting out a server that is restarting
    or has no connection to spare (the pipeline's processes meet the same and wait too)."""
    deadline = time.monotonic() + 60
    while True:
        try:
            return await asyncpg.connect(settings.database_url, timeout=10)
        except database.UNAVAILABLE:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.5)


async def settle_and_check(
    settings: Settings, tally: Tally, timeout: float, started: float
) -> dict:
    """Wait for every accepted session to be final, then check what the pipeline claims."""
    accepted = tally.accepted_async + tally.finished_sync
    conn = await observe(settings)
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            open_ = await conn.fetchval(
                "SELECT count(*) FROM sessions"
                " WHERE status = 'processing' AND id = ANY($1::uuid[])",
                accepted,
            )
            if open_ == 0:
                break
            await asyncio.sleep(0.5)
        tally.events["all_final_s"] = round(time.monotonic() - started, 1)
        statuses = dict(
            await conn.fetch(
                "SELECT status, count(*) FROM sessions WHERE id = ANY($1::uuid[]) GROUP BY status",
                accepted,
            )
        )
        mismatches = await verdict_mismatches(conn, accepted, settings)
        timed_out = await conn.fetchval(
            "SELECT count(DISTINCT session_id) FROM component_results WHERE status = 'timeout'"
        )
        # The janitor marks what a session never received `timeout`; anything else is a
        # component's own outcome.
        components = dict(
            await conn.fetch(
                "SELECT status, count(*) FROM component_results"
                " WHERE session_id = ANY($1::uuid[]) GROUP BY status",
                accepted,
            )
        )
        # What an unfinished session holds: its plan, age and each component's row, to tell a
        # lost task from a lost result when a run fails.
        unfinished = [
            {
                "id": str(row["id"]),
                "plan": row["plan"],
                "age_s": round(float(row["age_s"]), 1),
                "components": dict(zip(row["components"], row["states"], strict=True)),
            }
            for row in await conn.fetch(
                "SELECT s.id, s.plan, extract(epoch FROM now() - s.created_at) AS age_s,"
                " coalesce(array_agg(r.component) FILTER (WHERE r.component IS NOT NULL),"
                " '{}') AS components,"
                " coalesce(array_agg(r.status) FILTER (WHERE r.component IS NOT NULL),"
                " '{}') AS states"
                " FROM sessions s LEFT JOIN component_results r ON r.session_id = s.id"
                " WHERE s.id = ANY($1::uuid[]) AND s.status = 'processing'"
                " GROUP BY s.id, s.plan, s.created_at LIMIT 5",
                accepted,
            )
        ]
        # From acceptance (the row is written before the tasks are published) to final.
        stall = await conn.fetchrow(
            "SELECT max(extract(epoch FROM finished_at - created_at)) AS longest,"
            " percentile_cont(0.5) WITHIN GROUP"
            " (ORDER BY extract(epoch FROM finished_at - created_at)) AS median"
            " FROM sessions WHERE id = ANY($1::uuid[])",
            accepted,
        )
        orphans = await conn.fetchval(
            "SELECT count(*) FROM sessions s WHERE NOT (s.id = ANY($1::uuid[]))", accepted
        )
        # Keys hold (session, day) unique, not the session across days: count, do not assume.
        duplicated_verdicts = await conn.fetchval(
            "SELECT count(*) FROM (SELECT 1 FROM verdicts WHERE session_id = ANY($1::uuid[])"
            " GROUP BY session_id HAVING count(*) > 1) d",
            accepted,
        )
        duplicated_components = await conn.fetchval(
            "SELECT count(*) FROM (SELECT 1 FROM component_results"
            " WHERE session_id = ANY($1::uuid[])"
            " GROUP BY session_id, component HAVING count(*) > 1) d",
            accepted,
        )
    finally:
        await conn.close()
    stranded = await wait_for_queues(settings, len(tally.poison), deadline=time.monotonic() + 60)
    dlq, withdrawn = await drain_dlq(settings)
    if tally.broker_back_at is not None:
        after = [t for t in tally.accepted_at if t >= tally.broker_back_at]
        if after:
            restarted = "postgres" if settings.transport == "postgres" else "rabbitmq"
            tally.events[f"first_202_after_{restarted}_restart_s"] = round(
                min(after) - tally.broker_back_at, 2
            )
    final = sum(n for status, n in statuses.items() if status != "processing")
    report = {
        "sessions_sent": tally.sent,
        "accepted_202": len(tally.accepted_async),
        "finished_sync_200": len(tally.finished_sync),
        "retried_after_503": tally.refused_503,
        "resent_after_transport_error": tally.resent_after_transport_error,
        "finished": final,
        "lost": len(accepted) - final,
        "not_completed": len(accepted) - statuses.get("completed", 0),
        "by_status": statuses,
        "unfinished": unfinished,
        "components_by_status": components,
        "finalized_by_deadline": timed_out,
        "duplicated_verdicts": duplicated_verdicts,
        "duplicated_component_rows": duplicated_components,
        "verdicts_disagreeing_with_components": mismatches,
        "sessions_not_acknowledged_to_client": orphans,
        "poison_injected": len(tally.poison),
        "stranded_in_queues": stranded,
        "dead_lettered": len(dlq),
        "dead_lettered_results_of_withdrawn_sessions": withdrawn,
        "dead_letters_that_are_not_the_poison": len([b for b in dlq if b not in tally.poison]),
        "kills": tally.kills,
        "accepted_to_final_s": {
            "longest": round(float(stall["longest"] or 0), 2),
            "median": round(float(stall["median"] or 0), 2),
        },
        "client_errors": tally.errors[:10],
        "timings_s": tally.events,
    }
    report["ok"] = (
        report["lost"] == 0
        and report["not_completed"] == 0
        and timed_out == 0
        and not mismatches
        and duplicated_verdicts == duplicated_components == 0
        and not tally.errors
        and sorted(dlq) == sorted(tally.poison)
        and (withdrawn == 0 or tally.refused_503 > 0)
        and stranded == 0
    )
    return report


def _json_object(value: str | dict | None) -> dict:
    """A jsonb column as read without a codec (text) or with one (dict)."""
    return json.loads(value) if isinstance(value, str) else dict(value or {})


async def verdict_mismatches(conn: asyncpg.Connection, sids: list[str], settings: Settings) -> int:
    """Sessions whose verdict differs from one recomputed from their component rows."""
    rows = await conn.fetch(
        """
        SELECT s.id, s.status, v.score, v.label,
               (SELECT count(*) FROM verdicts v2 WHERE v2.session_id = s.id) AS verdicts,
               array_agg(r.component) AS components, array_agg(r.status) AS states,
               array_agg(r.score) AS scores, array_agg(r.data) AS data
        FROM sessions s JOIN verdicts v ON v.session_id = s.id
        JOIN component_results r ON r.session_id = s.id
        WHERE s.id = ANY($1::uuid[]) GROUP BY s.id, s.status, v.score, v.label
        """,
        sids,
    )
    bad = 0
    for row in rows:
        outcomes = {
            c: outcome_of({"status": st, "score": sc, "data": _json_object(d)})
            for c, st, sc, d in zip(
                row["components"], row["states"], row["scores"], row["data"], strict=True
            )
        }
        expected = compute(outcomes, settings.verdict_weights)
        same_score = (expected.score is None and row["score"] is None) or (
            expected.score is not None
            and row["score"] is not None
            and abs(expected.score - row["score"]) < 0.01
        )
        if (
            row["verdicts"] != 1
            or not same_score
            or expected.label != row["label"]
            or expected.session_status != row["status"]
        ):
            bad += 1
    return bad + (len(sids) - len(rows))


async def wait_for_queues(settings: Settings, poison: int, deadline: float) -> int:
    """Until the plan queues are empty and the DLQ holds at least the injected poison; the
    messages still in plan, results and retry queues then (stranded: 0)."""
    names = Names(settings.topology_prefix)
    if settings.transport == "postgres":
        return await wait_for_rows(settings, poison, deadline)
    connection = await connect(settings.amqp_urls(), "chaos-depths")
    try:
        channel = await connection.channel()
        queues = [q.name for q in from_settings(settings).queues]
        depth: dict[str, int] = {}
        while time.monotonic() < deadline:
            for name in queues:
                declared = await channel.declare_queue(name, passive=True)
                depth[name] = declared.declaration_result.message_count or 0
            dead = depth.pop(names.dlq)
            if dead >= poison and not any(depth.values()):
                break
            await asyncio.sleep(0.5)
    finally:
        await connection.close()
    return sum(depth.values())


async def wait_for_rows(settings: Settings, poison: int, deadline: float) -> int:
    """wait_for_queues on the postgres transport: rows not yet completed nor dead."""
    conn = await observe(settings)
    try:
        while True:
            counts = dict(
                await conn.fetch(
                    "SELECT status, count(*) FROM job_queue WHERE queue LIKE $1 || '%'"
                    " GROUP BY status",
                    settings.topology_prefix,
                )
            )
            open_ = sum(n for status, n in counts.items() if status not in ("completed", "error"))
            if (counts.get("error", 0) >= poison and not open_) or time.monotonic() > deadline:
                return open_
            await asyncio.sleep(0.5)
    finally:
        await conn.close()


async def drain_dlq(settings: Settings) -> tuple[list[bytes], int]:
    """The dead letters' bodies, and apart the results of sessions the API withdrew: it
    answered 503 when one of a session's tasks was refused (a full queue, or a quorum queue
    electing its leader after a node loss), and the tasks already confirmed still ran."""
    if settings.transport == "postgres":
        conn = await observe(settings)
        try:
            rows = await conn.fetch(
                "SELECT body, coalesce(reason, '') AS reason FROM job_queue"
                " WHERE status = 'error' AND queue LIKE $1 || '%' ORDER BY id",
                settings.topology_prefix,
            )
        finally:
            await conn.close()
        kept = [r["body"] for r in rows if "withdrawn session" not in r["reason"]]
        return kept, len(rows) - len(kept)
    connection = await connect(settings.amqp_urls(), "chaos-dlq")
    bodies, withdrawn = [], 0
    try:
        channel = await connection.channel()
        queue = await channel.get_queue(Names(settings.topology_prefix).dlq)
        while (message := await queue.get(fail=False, no_ack=True)) is not None:
            reason = str((message.headers or {}).get(REASON_HEADER, ""))
            if "withdrawn session" in reason:
                withdrawn += 1
            else:
                bodies.append(message.body)
    finally:
        await connection.close()
    return bodies, withdrawn


def stop(up: subprocess.Popen) -> None:
    if up.poll() is None:
        up.send_signal(signal.SIGTERM)
        try:
            up.wait(90)
        except subprocess.TimeoutExpired:
            os.killpg(up.pid, signal.SIGKILL)


async def cleanup(
    settings: Settings, management: str | None, admin_db: str, db_name: str, broker: bool
) -> None:
    await sandbox.drop_database(with_db(admin_db, "postgres"), db_name)
    if broker:
        await sandbox.delete_broker_objects(
            settings.amqp_url, (settings.topology_prefix,), management
        )
    if not settings.redis_url:
        return
    redis = Redis.from_url(settings.redis_url)
    try:
        await redis.flushdb()
    finally:
        await redis.aclose()


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--sessions", type=int, default=300, help="sessions to submit (default 300)")
    p.add_argument("--duration", type=float, default=30.0, help="seconds to spread them over")
    p.add_argument("--poison", type=int, default=6, help="poison messages to inject")
    p.add_argument("--extra-kills", type=int, default=6, help="kills beyond one per process kind")
    p.add_argument("--timeout", type=float, default=180.0, help="seconds to wait for every session")
    p.add_argument(
        "--cluster",
        type=int,
        default=0,
        metavar="PORT",
        help="quorum mode on a three-node cluster of its own from this AMQP port; lose nodes",
    )
    p.add_argument(
        "--own-broker",
        type=int,
        default=0,
        metavar="PORT",
        help="run on a RabbitMQ node of its own with this AMQP port (default: AMQP_URL's broker)",
    )
    p.add_argument(
        "--redis-db",
        type=int,
        default=CHAOS_REDIS_DB,
        metavar="N",
        help=f"the Redis database the run uses and flushes, 1..15 (default {CHAOS_REDIS_DB})",
    )
    p.add_argument(
        "--transport",
        choices=("rabbitmq", "postgres"),
        default="rabbitmq",
        help="postgres: the pipeline on PostgreSQL's job_queue, on a server of its own that the "
        "run crashes and starts again instead of restarting RabbitMQ",
    )
    p.add_argument(
        "--without-redis",
        action="store_true",
        help="with --transport postgres: no Redis at all (REDIS_URL unset); heartbeats, live "
        "news, attempts and rate-limit windows live in the crashed PostgreSQL too",
    )
    args = p.parse_args(argv)
    if args.without_redis and args.transport != "postgres":
        p.error("--without-redis needs --transport postgres (RabbitMQ workers lock in Redis)")
    if args.transport == "postgres" and (args.cluster or args.own_broker):
        p.error("--transport postgres uses no broker: no --cluster, no --own-broker")
    if not 1 <= args.redis_db <= 15:
        p.error("--redis-db: 1..15 (0 is a developer's default database)")
    if not 1 <= args.sessions <= 5000 or args.timeout > 1800:
        p.error("keep it bounded: 1..5000 sessions, timeout up to 1800 s")
    return args


def run_once(argv: list[str] | None = None) -> int:
    """Parse, sweep what killed runs left behind, then run the scenario; SIGTERM, SIGHUP and
    SIGALRM stop it through its `finally` blocks (pipeline, node, database), as an error."""
    args = parse(argv)
    gone = owned.sweep()
    if gone:
        print(f"stopped {len(gone)} process(es) left by killed runs", file=sys.stderr)
    with owned.terminate_on_signals():
        return asyncio.run(main(args))


if __name__ == "__main__":
    sys.exit(run_once())
