"""In one run: this pipeline against the Celery chord and Dramatiq group peers and the raw
broker ceiling.

    flock /tmp/verdict-heavy.lock python scripts/bench.py [--sessions 2000] [--idle 200]

All on the loopback services, no-op executors everywhere, one after the other:

(a) this pipeline, in a fresh topology prefix and database removed afterwards (--transport
    postgres: on PostgreSQL's job_queue instead of RabbitMQ; both: one after the other):
      python -m ops.cli api                                  (1 process)
      python -m ops.cli aggregator                           (--aggregators, default 2)
      python scripts/bench_worker.py COMPONENT --concurrency 8 --prefetch 10
                                                             (one per analysis component;
                                                             --workers grouped: one process
                                                             for all four, as
                                                             `verdict worker --components`)
    throughput: --sessions POSTs over HTTP, --in-flight at a time (httpx's pool costs the
    client ~6 ms of CPU per request at 64 in flight against ~1 ms at 8, CPU the pipeline
    then lacks on a 2-core machine), until every session is final: first POST sent to the
    last `finished_at`. Idle latency: --idle sessions one at a time, POST sent to the
    session's `finished_at` in Postgres (same machine, same clock); beside it, POST to the
    final state's announcement on Redis (what /events streams), and a short pass where the
    client polls GET …/result every 2 ms instead.
(b) the peers, the same job in the tools a user would pick instead, from the folder of peer
    baselines named by VERDICT_PEER_DIR (they are not part of this project; read-only, no
    bytecode is written there), run from that folder with the peer venv's executables
    (VERDICT_PEER_VENV, default ~/peer-venv):
      Celery chord:   celery -A peer worker -c 2;  python drive.py N;  python latency.py M
      Dramatiq group: dramatiq dramatiq_peer -p 2 -t 8;
                      python dramatiq_drive.py throughput N;  python dramatiq_drive.py latency M
(c) the ceiling of the message shape on RabbitMQ alone (its `rawlimit*` objects are deleted):
      python raw_limit.py N

The peer venv: python3 -m venv ~/peer-venv && ~/peer-venv/bin/pip install celery redis \
"psycopg[binary]" aio-pika "dramatiq[rabbitmq,redis]". Prints a table, then the JSON summary
(also written to --out): throughput over the chord's (target >= 2), over the Dramatiq
group's (>= 1.2) and the raw ceiling's (>= 0.6); idle p50 against the faster peer's (<= 1);
p99 under the throughput load (<= 1 s).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import asyncpg
import benchlib as lib
import click
import httpx


def peer_dir() -> Path:
    """The peer baselines, which are not part of this project: the folder VERDICT_PEER_DIR
    names."""
    named = os.environ.get("VERDICT_PEER_DIR")
    if not named:
        raise SystemExit(
            "set VERDICT_PEER_DIR to the folder of the peer baselines "
            "(peer.py, drive.py, dramatiq_peer.py …)"
        )
    folder = Path(named)
    if not (folder / "peer.py").is_file():
        raise SystemExit(f"no peer baselines in {folder}: VERDICT_PEER_DIR names another folder")
    return folder


PEER_VENV = Path(os.environ.get("VERDICT_PEER_VENV") or Path.home() / "peer-venv")
# How often the polling client re-reads GET …/result: fine enough to resolve a 10 ms target.
RESULT_POLL_S = 0.002
# Pause between idle sessions, so each one finds the pipeline quiet.
IDLE_GAP_S = 0.02


# --- (a) this pipeline --------------------------------------------------------------------


async def ours(
    sessions: int,
    idle: int,
    in_flight: int,
    aggregators: int,
    worker_shape: str = "apart",
    transport: str = "rabbitmq",
) -> dict[str, Any]:
    world = replace(lib.new_world("bench"), extra_env=lib.transport_env(transport))
    await lib.create_world(world)
    try:
        with lib.ProcessGroup() as group:
            lib.start_api_and_aggregators(world, group, aggregators)
            lib.start_workers(world, group, lib.WORKER_SHAPES[worker_shape])
            await lib.wait_until_ready(world, group)
            pool = await asyncpg.create_pool(world.database_url, min_size=1, max_size=2)
            try:
                await lib.warm_up(world, pool)
                throughput = await _throughput(world, pool, sessions, in_flight)
                group.check_alive()
                latency = await _idle_latency(world, pool, idle)
                polled = await _polled_latency(world, pool, max(1, idle // 4))
                group.check_alive()
            finally:
                await pool.close()
        return {
            "transport": transport,
            "processes": {"aggregators": aggregators, "workers": worker_shape},
            "throughput": throughput,
            "idle": latency,
            "idle_polled": polled,
            "log_dir": str(group.log_dir),
        }
    finally:
        await lib.destroy_world(world)


async def _throughput(
    world: lib.World, pool: asyncpg.Pool, n: int, in_flight: int
) -> dict[str, Any]:
    gate = asyncio.Semaphore(in_flight)

    async def one(http: httpx.AsyncClient) -> tuple[str, float]:
        async with gate:
            return await lib.post_session(http, 6)

    async with lib.client(world, in_flight) as http:
        posted = await asyncio.gather(*(one(http) for _ in range(n)))
    done = await lib.wait_all_final(pool, [sid for sid, _ in posted], timeout_s=600)
    start = min(sent for _, sent in posted)
    end = max(f for _, f in done.values())
    latencies = [(done[sid][1] - sent) * 1000 for sid, sent in posted]
    return {
        "sessions": n,
        "in_flight": in_flight,
        "seconds": round(end - start, 2),
        "sessions_per_s": round(n / (end - start), 1),
        "post_to_final": lib.summarize(latencies),
    }


async def _idle_latency(world: lib.World, pool: asyncpg.Pool, n: int) -> dict[str, Any]:
    """One session at a time; the client learns of the verdict from the Redis announcement."""
    to_final, announced, server = [], [], []
    async with lib.client(world, 2) as http, lib.FinalEvents(world) as events:
        for _ in range(n):
            sid, sent = await lib.post_session(http, 6)
            announced.append((await events.wait(sid) - sent) * 1000)
            created, finished = (await lib.finished(pool, [sid]))[sid]
            to_final.append((finished - sent) * 1000)
            server.append((finished - created) * 1000)
            await asyncio.sleep(IDLE_GAP_S)
    return {
        "post_to_final": lib.summarize(to_final),
        "post_to_announced": lib.summarize(announced),
        "created_to_final": lib.summarize(server),
    }


async def _polled_latency(world: lib.World, pool: asyncpg.Pool, n: int) -> dict[str, Any]:
    """The same, but the client polls GET …/result: the polling itself loads the pipeline."""
    seen, to_final = [], []
    async with lib.client(world, 2) as http:
        for _ in range(n):
            sid, sent = await lib.post_session(http, 6)
            seen.append((await _seen_final(http, sid) - sent) * 1000)
            to_final.append(((await lib.finished(pool, [sid]))[sid][1] - sent) * 1000)
            await asyncio.sleep(IDLE_GAP_S)
    return {"post_to_seen_by_poll": lib.summarize(seen), "post_to_final": lib.summarize(to_final)}


async def _seen_final(http: httpx.AsyncClient, sid: str) -> float:
    """Poll GET …/result until it answers 200 (final); the wall-clock time it did."""
    while True:
        if (await http.get(f"/api/v3/pipeline/{sid}/result")).status_code == 200:
            return time.time()
        await asyncio.sleep(RESULT_POLL_S)


# --- (b) the Celery chord peer and (c) the raw ceiling ---------------------------------------


def peer_env() -> dict[str, str]:
    return {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}


def peer_python(script: str, *args: str | int, timeout_s: float) -> dict[str, Any]:
    """Run one of the peers' scripts with `args`; the JSON line it prints."""
    python = PEER_VENV / "bin" / "python"
    out = subprocess.run(
        [str(python), script, *map(str, args)],
        cwd=peer_dir(),
        env=peer_env(),
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=True,
        start_new_session=True,
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


async def chord(n: int, latency_n: int) -> dict[str, Any]:
    if not (PEER_VENV / "bin" / "celery").exists():
        raise SystemExit(f"no peer venv at {PEER_VENV}: see this script's docstring")
    with lib.ProcessGroup() as group:
        celery = [str(PEER_VENV / "bin" / "celery"), "-A", "peer", "worker", "-c", "2"]
        group.start("celery", celery, peer_env(), cwd=peer_dir())
        await _wait_for_consumer(group, "celery")
        peer_python("latency.py", 20, timeout_s=120)  # warm-up: connections, the Postgres table
        drive = await asyncio.to_thread(peer_python, "drive.py", n, timeout_s=900)
        latency = await asyncio.to_thread(peer_python, "latency.py", latency_n, timeout_s=600)
    return {"drive": drive, "latency": latency, "log_dir": str(group.log_dir)}


async def _wait_for_consumer(group: lib.ProcessGroup, queue: str, timeout_s: float = 60) -> None:
    """Ready once the peer's queue has a consumer."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        group.check_alive()
        if await lib.consumer_count(lib.LOOPBACK["AMQP_URL"], queue) > 0:
            return
        await asyncio.sleep(0.5)
    raise RuntimeError(f"no consumer on {queue!r} within {timeout_s}s")


async def dramatiq_group(n: int, latency_n: int) -> dict[str, Any]:
    """The same job as a Dramatiq group with a completion callback (confirms, Redis results)."""
    if not (PEER_VENV / "bin" / "dramatiq").exists():
        raise SystemExit(f"no dramatiq in the peer venv at {PEER_VENV}: see the docstring")
    with lib.ProcessGroup() as group:
        command = [str(PEER_VENV / "bin" / "dramatiq"), "dramatiq_peer", "-p", "2", "-t", "8"]
        group.start("dramatiq", command, peer_env(), cwd=peer_dir())
        await _wait_for_consumer(group, "default")
        peer_python("dramatiq_drive.py", "latency", 20, timeout_s=120)  # warm-up
        drive = await asyncio.to_thread(
            peer_python, "dramatiq_drive.py", "throughput", n, timeout_s=900
        )
        latency = await asyncio.to_thread(
            peer_python, "dramatiq_drive.py", "latency", latency_n, timeout_s=600
        )
    await lib.delete_broker_objects(lib.LOOPBACK["AMQP_URL"], ("default",))
    return {"drive": drive, "latency": latency, "log_dir": str(group.log_dir)}


async def raw(n: int) -> dict[str, Any]:
    try:
        return await asyncio.to_thread(peer_python, "raw_limit.py", n, timeout_s=600)
    finally:
        await lib.delete_broker_objects(lib.LOOPBACK["AMQP_URL"], ("rawlimit",))


# --- report -------------------------------------------------------------------------------


def summary(
    us: dict[str, Any],
    peer: dict[str, Any],
    group: dict[str, Any],
    ceiling: dict[str, Any],
    others: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The ratios issue 17 sets its targets in, all from this one run (`us`: the first
    transport measured; `others`: the other one, with its own ratios)."""
    our_rate = us["throughput"]["sessions_per_s"]
    # When a client can know: the final state announced, after the verdict's commit (the
    # row's finished_at is stamped inside the transaction, before its commit). The peers'
    # figures are likewise the verdict row seen by a client.
    our_p50 = us["idle"]["post_to_announced"]["p50_ms"]
    our_idle_p99 = us["idle"]["post_to_announced"]["p99_ms"]
    load_p99 = us["throughput"]["post_to_final"]["p99_ms"]
    faster_peer_p50 = min(peer["latency"]["p50_ms"], group["latency"]["p50_ms"])
    vs_chord = lib.ratio(our_rate, peer["drive"]["sessions_per_s"]) or 0
    vs_group = lib.ratio(our_rate, group["drive"]["sessions_per_s"]) or 0
    vs_raw = lib.ratio(our_rate, ceiling["sessions_per_s"]) or 0
    also = [
        {
            **other,
            "throughput_vs_chord": lib.ratio(
                other["throughput"]["sessions_per_s"], peer["drive"]["sessions_per_s"]
            ),
            "throughput_vs_dramatiq_group": lib.ratio(
                other["throughput"]["sessions_per_s"], group["drive"]["sessions_per_s"]
            ),
        }
        for other in others or []
    ]
    return {
        "ours": us,
        "ours_other_transports": also,
        "chord": peer,
        "dramatiq_group": group,
        "raw_ceiling": ceiling,
        "throughput_vs_chord": vs_chord,
        "throughput_vs_dramatiq_group": vs_group,
        "throughput_vs_raw_ceiling": vs_raw,
        "idle_p50_ms": our_p50,
        "idle_p50_vs_faster_peer": lib.ratio(our_p50, faster_peer_p50),
        "targets": {
            "throughput_vs_chord_at_least_2": vs_chord >= 2,
            "throughput_vs_dramatiq_group_at_least_1_2": vs_group >= 1.2,
            "throughput_vs_raw_ceiling_at_least_0_6": vs_raw >= 0.6,
            "idle_p50_at_most_the_faster_peers": our_p50 <= faster_peer_p50,
            "idle_p99_at_most_twice_its_p50": our_idle_p99 <= 2 * our_p50,
            "load_p99_at_most_1_s": load_p99 <= 1000,
        },
    }


def report(s: dict[str, Any]) -> str:
    us, ceiling = s["ours"], s["raw_ceiling"]
    idle = us["idle"]
    rows = [
        [
            f"this pipeline ({run['transport']})",
            run["throughput"]["sessions_per_s"],
            run["throughput"]["post_to_final"]["p50_ms"],
            run["throughput"]["post_to_final"]["p99_ms"],
            run["idle"]["post_to_announced"]["p50_ms"],
            run["idle"]["post_to_announced"]["p99_ms"],
        ]
        for run in (us, *s["ours_other_transports"])
    ]
    rows += [
        *(
            [
                name,
                s[key]["drive"]["sessions_per_s"],
                s[key]["drive"].get("p50_ms"),
                s[key]["drive"].get("p99_ms"),
                s[key]["latency"]["p50_ms"],
                s[key]["latency"]["p99_ms"],
            ]
            for name, key in (("celery chord", "chord"), ("dramatiq group", "dramatiq_group"))
        ),
        ["raw shape", ceiling["sessions_per_s"], ceiling["p50_ms"], ceiling["p99_ms"], None, None],
    ]
    headers = ["", "sessions/s", "load p50 ms", "load p99 ms", "idle p50 ms", "idle p99 ms"]
    poll = us["idle_polled"]
    met = ", ".join(f"{k}: {'yes' if v else 'NO'}" for k, v in s["targets"].items())
    lines = [
        lib.table(headers, rows),
        "",
        f"throughput vs chord: {s['throughput_vs_chord']}x (target >= 2), vs Dramatiq group: "
        f"{s['throughput_vs_dramatiq_group']}x (target >= 1.2), vs raw ceiling: "
        f"{s['throughput_vs_raw_ceiling']}x (target >= 0.6)",
        f"idle POST to the final state announced (what /events streams), p50: "
        f"{s['idle_p50_ms']} ms = {s['idle_p50_vs_faster_peer']}x the faster peer's (target "
        f"<= 1); to the row's finished_at p50 {idle['post_to_final']['p50_ms']} ms",
        f"a client polling GET …/result every 2 ms: seen p50 "
        f"{poll['post_to_seen_by_poll']['p50_ms']} ms, final p50 "
        f"{poll['post_to_final']['p50_ms']} ms",
        f"targets: {met}",
    ]
    return "\n".join(lines)


@click.command()
@click.option("--sessions", default=2000, show_default=True, help="throughput sessions (ours)")
@click.option("--idle", default=200, show_default=True, help="idle-latency sessions (ours)")
@click.option("--in-flight", default=8, show_default=True, help="concurrent POSTs")
@click.option("--aggregators", default=2, show_default=True, help="as in compose.yaml")
@lib.worker_shape_option
@click.option("--chord-sessions", default=2000, show_default=True, help="drive.py N")
@click.option("--chord-idle", default=200, show_default=True, help="latency.py N")
@click.option("--raw-sessions", default=4000, show_default=True, help="raw_limit.py N")
@click.option(
    "--out", type=click.Path(dir_okay=False, path_type=Path), help="also write the JSON here"
)
@click.option("--timeout", "timeout_s", default=1500, show_default=True, help="hard limit, s")
@click.option(
    "--transport",
    type=click.Choice(["rabbitmq", "postgres", "postgres-alone", "both", "all"]),
    default="rabbitmq",
    show_default=True,
    help="what carries our tasks and results (TRANSPORT; postgres-alone: postgres without "
    "Redis); both: rabbitmq and postgres in turn, all: the three, the RabbitMQ figures first "
    "(the targets are read on them)",
)
def main(
    sessions: int,
    idle: int,
    in_flight: int,
    aggregators: int,
    worker_shape: str,
    chord_sessions: int,
    chord_idle: int,
    raw_sessions: int,
    out: Path | None,
    timeout_s: int,
    transport: str,
) -> None:
    """Ours vs the Celery chord vs the Dramatiq group vs the raw ceiling; a table, and the
    JSON summary (printed, and written to --out)."""
    with lib.terminate_on_signals():
        signal.alarm(timeout_s)
        try:
            transports = {
                "both": ["rabbitmq", "postgres"],
                "all": ["rabbitmq", "postgres", "postgres-alone"],
            }.get(transport, [transport])
            runs = [
                asyncio.run(ours(sessions, idle, in_flight, aggregators, worker_shape, t))
                for t in transports
            ]
            peer = asyncio.run(chord(chord_sessions, chord_idle))
            group = asyncio.run(dramatiq_group(chord_sessions, chord_idle))
            ceiling = asyncio.run(raw(raw_sessions))
        finally:
            signal.alarm(0)
    result = summary(runs[0], peer, group, ceiling, runs[1:])
    click.echo(report(result))
    click.echo(json.dumps(result, indent=2))
    if out is not None:
        out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
