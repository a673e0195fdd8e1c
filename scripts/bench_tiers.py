"""Plan tiers under a freemium flood, scheduler on and off in one run (issue 4). A benchmark.

    flock /tmp/verdict-heavy.lock python scripts/bench_tiers.py [--flood 6000] [--rate 5]

Processes (no-op executors, loopback services, a fresh topology prefix and database that
are removed at the end, every process group killed on exit):

    python -m ops.cli api                       1
    python -m ops.cli aggregator                --aggregators (default 2, as compose.yaml)
    python scripts/bench_worker.py COMPONENT --concurrency C --prefetch P
        one per analysis component (--replicas), with compose.yaml's settings:
        techniques 4/5, ai_tampered 4/5, claims 3/3, domain 8/10 (concurrency/prefetch)

For each mode (SCHEDULER_ENABLED=true, then false; workers and aggregators restart):

1. idle: enterprise sessions at --rate per second for --idle-s, nothing else running;
2. flood: the workers stop, --flood freemium sessions are POSTed over HTTP (an enterprise
   key with plan_type 1, --in-flight at a time), the workers start again on that backlog;
3. after --warmup-s, freemium completions are counted for --unloaded-s (its unloaded rate),
   then enterprise sessions trickle in at --rate for --trickle-s while freemium
   completions are counted again (its rate under the trickle);
4. the workers and aggregators stop and the rest of the backlog is purged.

An enterprise session's latency is from its POST being sent to `finished_at` in Postgres
(same machine, same clock); the moment its final state was announced on Redis is reported
beside it. Targets: enterprise p95 under the flood within 3x its idle p95; freemium
throughput under the trickle above 80% of its unloaded rate, counted three ways: tasks the
workers take, results the aggregators store and sessions finalized.
"""

from __future__ import annotations

import asyncio
import json
import signal
import time
from dataclasses import asdict, dataclass
from typing import Any

import asyncpg
import benchlib as lib
import click
import httpx

from shared.constants import ANALYSIS_COMPONENTS, PLANS
from shared.names import Names

FREEMIUM, ENTERPRISE = 1, 6
# compose.yaml's worker settings: (concurrency, prefetch per plan queue).
COMPOSE_WORKERS = {"techniques": (4, 5), "ai_tampered": (4, 5), "claims": (3, 3), "domain": (8, 10)}
MODES = {"scheduler on": "true", "scheduler off": "false"}


@dataclass(frozen=True)
class Options:
    flood: int
    rate: float
    idle_s: float
    warmup_s: float
    unloaded_s: float
    trickle_s: float
    in_flight: int
    replicas: int
    aggregators: int
    work_ms: float
    modes: tuple[str, ...]


@dataclass
class Trickle:
    """Enterprise sessions sent at a steady rate: id → wall-clock time its POST was sent."""

    sent: dict[str, float]

    def latencies(
        self, finals: dict[str, tuple[float, float]], events: dict[str, float]
    ) -> dict[str, Any]:
        db = [(finals[s][1] - t) * 1000 for s, t in self.sent.items() if s in finals]
        seen = [(events[s] - t) * 1000 for s, t in self.sent.items() if s in events]
        return {
            "post_to_final": lib.summarize(db),
            "post_to_announced": lib.summarize(seen),
            "unfinished": len(self.sent) - len(db),
        }


async def trickle(http: httpx.AsyncClient, rate: float, seconds: float) -> Trickle:
    """POST enterprise sessions every 1/rate s; a slow answer never delays the next send."""
    start = time.monotonic()

    async def at(offset: float) -> tuple[str, float]:
        await asyncio.sleep(max(0.0, start + offset - time.monotonic()))
        return await lib.post_session(http, ENTERPRISE)

    sends = [at(i / rate) for i in range(int(rate * seconds))]
    return Trickle(dict(await asyncio.gather(*sends)))


async def flood(http: httpx.AsyncClient, n: int, in_flight: int) -> float:
    """POST n freemium sessions, in_flight at a time; the rate they were accepted at."""
    gate = asyncio.Semaphore(in_flight)

    async def one() -> None:
        async with gate:
            await lib.post_session(http, FREEMIUM)

    started = time.monotonic()
    await asyncio.gather(*(one() for _ in range(n)))
    return round(n / (time.monotonic() - started), 1)


async def finished_in(pool: asyncpg.Pool, plan: int, start: float, end: float) -> int:
    count: int = await pool.fetchval(
        "SELECT count(*) FROM sessions WHERE plan = $1"
        " AND finished_at >= to_timestamp($2) AND finished_at < to_timestamp($3)",
        plan,
        start,
        end,
    )
    return count


async def applied_in(pool: asyncpg.Pool, plan: int, start: float, end: float) -> int:
    """Component results of `plan` sessions the aggregators stored in [start, end)."""
    count: int = await pool.fetchval(
        "SELECT count(*) FROM component_results r JOIN sessions s ON s.id = r.session_id"
        " WHERE s.plan = $1 AND r.recorded_at >= to_timestamp($2)"
        " AND r.recorded_at < to_timestamp($3)",
        plan,
        start,
        end,
    )
    return count


async def wait_finished(
    pool: asyncpg.Pool, ids: list[str], timeout_s: float
) -> dict[str, tuple[float, float]]:
    deadline = time.monotonic() + timeout_s
    while True:
        done = await lib.finished(pool, ids)
        if len(done) == len(ids) or time.monotonic() > deadline:
            return done
        await asyncio.sleep(0.2)


class Bench:
    """One world, its API and aggregators; workers restarted per mode and phase."""

    def __init__(self, world: lib.World, group: lib.ProcessGroup, options: Options) -> None:
        self.world = world
        self.group = group
        self.options = options
        names = Names(world.prefix)
        self.task_queues = [names.task_queue(c, p) for c in ANALYSIS_COMPONENTS for p in PLANS]
        self.freemium_queues = [names.task_queue(c, FREEMIUM) for c in ANALYSIS_COMPONENTS]
        self.results_queue = names.results
        self.results_queues = [names.results, names.urgent_results]

    def worker_args(self) -> list[tuple[str, int, int]]:
        return [
            (c, *COMPOSE_WORKERS[c])
            for c in ANALYSIS_COMPONENTS
            for _ in range(self.options.replicas)
        ]

    async def start_workers(self, scheduler: str) -> list[str]:
        env = {"SCHEDULER_ENABLED": scheduler, "BENCH_WORK_MS": str(self.options.work_ms)}
        names = lib.start_workers(self.world, self.group, self.worker_args(), env)
        await lib.wait_until_ready(self.world, self.group)
        return names

    def start_aggregators(self, scheduler: str) -> list[str]:
        env = {"SCHEDULER_ENABLED": scheduler}
        return lib.start_aggregators(self.world, self.group, self.options.aggregators, env)

    async def mode(
        self, scheduler: str, pool: asyncpg.Pool, events: lib.FinalEvents
    ) -> dict[str, Any]:
        o = self.options
        aggregators = self.start_aggregators(scheduler)
        async with lib.client(self.world, max(o.in_flight, 8)) as http:
            workers = await self.start_workers(scheduler)
            idle = await trickle(http, o.rate, o.idle_s)
            idle_finals = await wait_finished(pool, list(idle.sent), 30)
            self.group.stop(workers)
            accepted_per_s = await flood(http, o.flood, o.in_flight)
            workers = await self.start_workers(scheduler)
            await asyncio.sleep(o.warmup_s)
            before = await self.backlog()
            u0 = time.time()
            await asyncio.sleep(o.unloaded_s)
            middle = await self.backlog()
            t0 = time.time()
            loaded = await trickle(http, o.rate, o.trickle_s)
            t1 = time.time()
            after = await self.backlog()
            loaded_finals = await wait_finished(pool, list(loaded.sent), 60)
            self.group.check_alive()
            self.group.stop(workers)
        # What is left of the flood is dropped: the next mode starts from empty queues.
        await lib.purge_queues(self.world, [*self.task_queues, *self.results_queues])
        self.group.stop(aggregators)
        unloaded_rate = await finished_in(pool, FREEMIUM, u0, t0) / (t0 - u0)
        trickle_rate = await finished_in(pool, FREEMIUM, t0, t1) / (t1 - t0)
        tasks_alone = taken(before, middle) / (t0 - u0)
        tasks_trickle = taken(middle, after) / (t1 - t0)
        applied_alone = await applied_in(pool, FREEMIUM, u0, t0) / (t0 - u0)
        applied_trickle = await applied_in(pool, FREEMIUM, t0, t1) / (t1 - t0)
        idle_lat = idle.latencies(idle_finals, events.seen)
        idle_lat["hops"] = await lib.hops(pool, idle.sent)
        flood_lat = loaded.latencies(loaded_finals, events.seen)
        flood_lat["hops"] = await lib.hops(pool, loaded.sent)
        return {
            "enterprise_idle": idle_lat,
            "enterprise_under_flood": flood_lat,
            "p95_ratio": lib.ratio(
                flood_lat["post_to_final"].get("p95_ms"), idle_lat["post_to_final"].get("p95_ms")
            ),
            "freemium_per_s_unloaded": round(unloaded_rate, 1),
            "freemium_per_s_under_trickle": round(trickle_rate, 1),
            "freemium_ratio": lib.ratio(trickle_rate, unloaded_rate),
            # The workers' and the aggregators' side of it.
            "freemium_tasks_per_s": {
                "unloaded": round(tasks_alone),
                "under_trickle": round(tasks_trickle),
                "ratio": lib.ratio(tasks_trickle, tasks_alone),
            },
            "freemium_results_per_s": {
                "unloaded": round(applied_alone),
                "under_trickle": round(applied_trickle),
                "ratio": lib.ratio(applied_trickle, applied_alone),
            },
            "flood_accepted_per_s": accepted_per_s,
            "backlog_before_windows": before,
            "backlog_after_trickle": after,
        }

    async def backlog(self) -> dict[str, int]:
        """Freemium tasks still queued and results waiting for the aggregator."""
        depths = await lib.queue_depths(self.world, [*self.freemium_queues, self.results_queue])
        results = depths.pop(self.results_queue)
        return {"freemium_tasks_queued": sum(depths.values()), "results_queued": results}


def taken(earlier: dict[str, int], later: dict[str, int]) -> int:
    """Freemium tasks the workers took off their queues between two backlog readings."""
    return earlier["freemium_tasks_queued"] - later["freemium_tasks_queued"]


async def run(options: Options) -> dict[str, Any]:
    world = lib.new_world("bench")
    await lib.create_world(world)
    try:
        with lib.ProcessGroup() as group:
            # The flood is queued while the workers are stopped, which the API refuses when it
            # checks for online workers (issue 15), and which admission would hold to its
            # limit (dispatcher/admission.py): the backlog is the point here, what the tier
            # scheduler makes of one.
            no_guard = {"API_CHECK_WORKERS": "false", "ADMISSION_LIMIT": "0"}
            lib.start_api_and_aggregators(world, group, 0, no_guard)
            bench = Bench(world, group, options)
            pool = await asyncpg.create_pool(world.database_url, min_size=1, max_size=2)
            try:
                async with lib.FinalEvents(world) as events:
                    modes = {}
                    for label in options.modes:
                        modes[label] = await bench.mode(MODES[label], pool, events)
            finally:
                await pool.close()
        return {"setup": setup(options), "modes": modes, "log_dir": str(group.log_dir)}
    finally:
        await lib.destroy_world(world)


def setup(options: Options) -> dict[str, Any]:
    return {
        **asdict(options),
        "workers": {
            c: {"concurrency": cc, "prefetch": p} for c, (cc, p) in COMPOSE_WORKERS.items()
        },
    }


def targets(modes: dict[str, Any]) -> dict[str, Any]:
    return {
        label: {
            "enterprise_p95_within_3x_idle": (m["p95_ratio"] or 99) <= 3,
            "freemium_above_80_percent": min(
                m["freemium_tasks_per_s"]["ratio"] or 0,
                m["freemium_results_per_s"]["ratio"] or 0,
                m["freemium_ratio"] or 0,
            )
            > 0.8,
        }
        for label, m in modes.items()
    }


def report(result: dict[str, Any]) -> str:
    rows = []
    for label, m in result["modes"].items():
        idle, loaded = (
            m["enterprise_idle"]["post_to_final"],
            m["enterprise_under_flood"]["post_to_final"],
        )
        rows.append(
            [
                label,
                idle.get("p50_ms"),
                idle.get("p95_ms"),
                loaded.get("p50_ms"),
                loaded.get("p95_ms"),
                m["p95_ratio"],
                m["freemium_tasks_per_s"]["ratio"],
                m["freemium_results_per_s"]["ratio"],
                m["freemium_ratio"],
            ]
        )
    headers = [
        "",
        "ent idle p50",
        "ent idle p95",
        "ent flood p50",
        "ent flood p95",
        "p95 x idle",
        "free tasks",
        "free results",
        "free sessions",
    ]
    lines = [
        lib.table(headers, rows),
        "",
        "free: freemium rate under the trickle / its rate alone (tasks taken, results stored,"
        " sessions finalized)",
        "targets: p95 x idle <= 3; free tasks, results and sessions > 0.8",
    ]
    for label, m in result["modes"].items():
        seen = m["enterprise_under_flood"]["post_to_announced"]
        lines.append(
            f"{label}: backlog at the windows {m['backlog_before_windows']} -> "
            f"{m['backlog_after_trickle']}; freemium tasks taken per s "
            f"{m['freemium_tasks_per_s']}, results stored per s {m['freemium_results_per_s']}, "
            f"sessions per s {m['freemium_per_s_unloaded']} -> "
            f"{m['freemium_per_s_under_trickle']}; "
            f"flood accepted at {m['flood_accepted_per_s']}/s; "
            f"under flood, POST to Redis announcement p50 {seen.get('p50_ms')} "
            f"p95 {seen.get('p95_ms')} ms"
        )
        for phase in ("enterprise_idle", "enterprise_under_flood"):
            spans = m[phase]["hops"]
            text = ", ".join(
                f"{k} p50 {v.get('p50_ms')} p95 {v.get('p95_ms')}" for k, v in spans.items()
            )
            lines.append(f"{label}, {phase} hops (ms): {text}")
        if not m["backlog_after_trickle"]["freemium_tasks_queued"]:
            lines.append(
                f"{label}: WARNING the backlog ran out before the trickle ended; raise --flood"
            )
    return "\n".join(lines)


@click.command()
@click.option("--flood", default=6000, show_default=True, help="freemium sessions per mode")
@click.option("--rate", default=5.0, show_default=True, help="enterprise sessions per second")
@click.option("--idle-s", default=10.0, show_default=True, help="idle trickle length")
@click.option("--warmup-s", default=3.0, show_default=True, help="workers on the backlog first")
@click.option("--unloaded-s", default=10.0, show_default=True, help="freemium-only window")
@click.option("--trickle-s", default=20.0, show_default=True, help="enterprise trickle window")
@click.option("--in-flight", default=8, show_default=True, help="concurrent flood POSTs")
@click.option("--replicas", default=1, show_default=True, help="workers per component")
@click.option("--aggregators", default=2, show_default=True, help="as in compose.yaml")
@click.option("--work-ms", default=0.0, show_default=True, help="executor sleep per task")
@click.option(
    "--mode",
    "modes",
    type=click.Choice(list(MODES)),
    multiple=True,
    default=list(MODES),
    show_default=True,
    help="run only these modes",
)
@click.option("--timeout", "timeout_s", default=900, show_default=True, help="hard limit, s")
def main(timeout_s: int, **values: Any) -> None:
    """Enterprise latency and freemium throughput under a freemium flood, scheduler on/off."""
    options = Options(**{**values, "modes": tuple(values["modes"])})
    with lib.terminate_on_signals():
        signal.alarm(timeout_s)
        try:
            result = asyncio.run(run(options))
        finally:
            signal.alarm(0)
    result["targets"] = targets(result["modes"])
    click.echo(report(result))
    click.echo(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
