"""`verdict up`: the compose.yaml application services as local processes, restarted on crash."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import yaml

from shared.constants import Transport

# Compose services with this label set to "skip" are not run by `verdict up`.
SKIP_LABEL = "verdict.up"
# A crashed process is restarted after this pause, like compose's `restart: unless-stopped`.
RESTART_DELAY_S = 1.0
# After SIGTERM a process gets this long before SIGKILL (the workers' grace period fits in it).
STOP_TIMEOUT_S = 40.0


@dataclass(frozen=True)
class Service:
    name: str
    argv: tuple[str, ...]
    replicas: int


@dataclass(frozen=True)
class Plan:
    one_shots: tuple[Service, ...]
    services: tuple[Service, ...]


def plan_from_compose(path: Path) -> Plan:
    """Services whose command is `verdict …`; `restart: "no"` ones run once, first, in order.
    Jobs labelled `verdict.up: skip` (provisioning a deployment's roles) are left out."""
    return plan_from_document(yaml.safe_load(path.read_text()))


def plan_from_document(doc: dict[str, Any]) -> Plan:
    one_shots: list[Service] = []
    services: list[Service] = []
    for name, spec in (doc.get("services") or {}).items():
        command = spec.get("command") or []
        if not command or command[0] != "verdict":
            continue  # infrastructure (rabbitmq, redis, postgres) comes from the environment
        if (spec.get("labels") or {}).get(SKIP_LABEL) == "skip":
            continue
        argv = (sys.executable, "-m", "ops.cli", *map(str, command[1:]))
        replicas = int((spec.get("deploy") or {}).get("replicas", 1))
        service = Service(name, argv, replicas)
        (one_shots if str(spec.get("restart", "")) == "no" else services).append(service)
    return Plan(tuple(one_shots), tuple(services))


def plan_for_transport(plan: Plan, transport: Transport) -> Plan:
    """On the postgres transport there is no broker to declare a topology on: the
    `verdict topology …` jobs are left out (the migrations make the queue table)."""
    if transport == "rabbitmq":
        return plan
    one_shots = tuple(s for s in plan.one_shots if s.argv[3:4] != ("topology",))
    return Plan(one_shots, plan.services)


def compact_plan(plan: Plan) -> Plan:
    """The plan for a small machine: one process of each service, and every worker's
    components in one `verdict worker --components a,b,…` process (in plan order, each once,
    each with its own concurrency and prefetch defaults: a worker service's own
    `--prefetch`/`--concurrency` are not carried over) instead of a service per component."""
    workers = [s for s in plan.services if s.argv[3:4] == ("worker",)]
    others = [Service(s.name, s.argv, 1) for s in plan.services if s not in workers]
    if not workers:
        return Plan(plan.one_shots, tuple(others))
    names = [c for s in workers for c in worker_components(s.argv[4:])]
    components = ",".join(dict.fromkeys(names))
    group = Service("workers", (*workers[0].argv[:4], "--components", components), 1)
    first = plan.services.index(workers[0])
    return Plan(plan.one_shots, (*others[:first], group, *others[first:]))


# `verdict worker` options that take a value (the rest of its arguments are components).
_WORKER_VALUE_OPTIONS = ("--prefetch", "--concurrency", "--components")


def worker_components(args: Iterable[str]) -> list[str]:
    """The components a `verdict worker` command line names: its COMPONENT argument or its
    `--components a,b` list (`--components=a,b` too), its other options left out."""
    found: list[str] = []
    taking: str | None = None
    for arg in args:
        if taking is not None:
            if taking == "--components":
                found += [c.strip() for c in arg.split(",") if c.strip()]
            taking = None
        elif arg.startswith("--"):
            option, has_value, value = arg.partition("=")
            if option == "--components" and has_value:
                found += [c.strip() for c in value.split(",") if c.strip()]
            elif option in _WORKER_VALUE_OPTIONS and not has_value:
                taking = option
        else:
            found.append(arg)
    return found


@dataclass
class Child:
    service: Service
    replica: int
    process: subprocess.Popen[bytes] | None = None
    log: IO[bytes] | None = None
    metrics_port: int | None = None

    @property
    def label(self) -> str:
        return f"{self.service.name}-{self.replica}"


def metrics_ports(labels: list[str], base: int | None) -> dict[str, int]:
    """Each replica's own metrics port: `base`, `base + 1`, … in plan order (none without a
    base). One METRICS_PORT shared by every replica would let only the first one bind it."""
    return {} if base is None else {label: base + n for n, label in enumerate(labels)}


class Supervisor:
    def __init__(
        self, plan: Plan, log_dir: Path | None = None, metrics_base: int | None = None
    ) -> None:
        self.plan = plan
        self.log_dir = log_dir
        self.metrics_base = metrics_base
        self._stopping = False
        self._children: list[Child] = []

    def run(self) -> int:
        """Run the one-shots, then every replica until SIGTERM/SIGINT; the exit status."""
        signal.signal(signal.SIGTERM, self._stop)
        signal.signal(signal.SIGINT, self._stop)
        if self.log_dir:
            self.log_dir.mkdir(parents=True, exist_ok=True)
        for job in self.plan.one_shots:
            code = subprocess.call(job.argv)
            if code != 0:
                _say(f"{job.name} failed with exit status {code}")
                return code
        children = [Child(s, i) for s in self.plan.services for i in range(1, s.replicas + 1)]
        ports = metrics_ports([c.label for c in children], self.metrics_base)
        for child in children:
            child.metrics_port = ports.get(child.label)
        self._children = children
        if self.log_dir and ports:
            (self.log_dir / "metrics.json").write_text(json.dumps(ports, indent=1))
        for child in children:
            self._start(child)
        _say(f"running {len(children)} processes: {', '.join(c.label for c in children)}")
        while not self._stopping:
            time.sleep(0.2)
            for child in children:
                self._restart_if_dead(child)
        return self._shutdown(children)

    def _stop(self, signum: int, frame: object) -> None:
        self._stopping = True

    def _start(self, child: Child) -> None:
        out: IO[bytes] | None = None
        if self.log_dir:
            child.log = child.log or open(self.log_dir / f"{child.label}.log", "ab")  # noqa: SIM115
            out = child.log
        # Own process group: a terminal's Ctrl-C reaches only the supervisor, which then
        # stops the children in order.
        env = None
        if child.metrics_port is not None:  # the API reads its own variable; others ignore it
            port = str(child.metrics_port)
            env = {**os.environ, "METRICS_PORT": port, "API_METRICS_PORT": port}
        child.process = subprocess.Popen(
            child.service.argv, stdout=out, stderr=out, start_new_session=True, env=env
        )
        self._write_pids()

    def _write_pids(self) -> None:
        """`pids.json` in the log folder: which pid runs which replica (for operators and chaos)."""
        if self.log_dir and self._children:
            pids = {c.label: c.process.pid for c in self._children if c.process}
            # Written aside and renamed: a reader (chaos.py) never sees it empty mid-write.
            staged = self.log_dir / "pids.json.tmp"
            staged.write_text(json.dumps(pids, indent=1))
            staged.replace(self.log_dir / "pids.json")

    def _restart_if_dead(self, child: Child) -> None:
        assert child.process is not None
        code = child.process.poll()
        if code is None or self._stopping:
            return
        _say(f"{child.label} (pid {child.process.pid}) exited with {code}; restarting")
        time.sleep(RESTART_DELAY_S)
        if not self._stopping:
            self._start(child)

    def _shutdown(self, children: list[Child]) -> int:
        """SIGTERM every child, SIGKILL what is left at the deadline; the exit status says
        whether every child stopped cleanly (each one's is logged and kept in `exits.json`)."""
        _say("stopping")
        live = [c for c in children if c.process and c.process.poll() is None]
        for child in live:
            assert child.process is not None
            child.process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        codes: dict[str, int] = {}
        for child in live:
            assert child.process is not None
            try:
                codes[child.label] = child.process.wait(
                    timeout=max(0.1, deadline - time.monotonic())
                )
            except subprocess.TimeoutExpired:
                child.process.kill()
                child.process.wait()
                codes[child.label] = KILLED_AT_DEADLINE
        for child in children:
            if child.log:
                child.log.close()
        for label, code in codes.items():
            if code != 0:
                _say(f"{label} did not stop cleanly: {describe_exit(code)}")
        if self.log_dir:
            (self.log_dir / "exits.json").write_text(json.dumps(codes, indent=1))
        status = shutdown_status(codes.values())
        _say("stopped" if status == 0 else "stopped, not cleanly")
        return status


# Recorded for a child still running at the stop deadline (then killed): not a clean stop.
KILLED_AT_DEADLINE = -int(signal.SIGKILL)


def shutdown_status(codes: Iterable[int]) -> int:
    """0 when every child exited 0 on SIGTERM; else 1."""
    return 0 if all(code == 0 for code in codes) else 1


def describe_exit(code: int) -> str:
    """`exit status N`, or the signal that ended the process (Popen reports it as -N)."""
    if code < 0:
        return f"killed by {signal.Signals(-code).name}"
    return f"exit status {code}"


def _say(text: str) -> None:
    print(f"[verdict up] {text}", file=sys.stderr, flush=True)
