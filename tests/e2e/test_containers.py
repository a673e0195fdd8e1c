"""compose.yaml run for real: containers of every service with their replica counts, driven like
a deployment is. Without Docker: podman's Docker-compatible API serves docker-compose, and the
three services come from local Debian images (scripts/containers,
tests/containers/compose.override.yaml). A machine that cannot run containers fails here with
the reason; the test never skips."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import secrets
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
import yaml

from shared.api_keys import hashed
from shared.constants import PLANS
from shared.names import Names
from tests import services as svc
from tests.e2e.conftest import API, free_port

# The first preparation of a machine builds every image (about 4.5 min here, bounded by
# PREPARE_TIMEOUT_S); the stack then takes some 4 min to become healthy.
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(1800)]
PREPARE_TIMEOUT_S = 1200

ROOT = Path(__file__).resolve().parents[2]
# Image sizes, build times, time to healthy, consumer counts: appended by every run.
FIGURES = ROOT / "artifacts" / "containers.log"
COMPOSE = ROOT / "compose.yaml"
OVERRIDE = ROOT / "tests" / "containers" / "compose.override.yaml"
PREFIX = "analysis"
# Project names: this prefix, the test process's id (a later run removes the projects of a
# process that died before its teardown), a random suffix.
PROJECT = "verdict-e2e"
KEY = "container-test-key"
HEADERS = {"X-API-Key": KEY}
TEXTS = (
    "Guvernul a anunțat astăzi bugetul pentru 2025, cu o creștere de 3% a investițiilor.",
    "SHOCKING!!! They don't want you to know the TRUTH. Share before it's deleted: https://bit.ly/abc",
    "The city council met on Tuesday to discuss the new bus routes, see https://www.reuters.com/x",
)
# Podman runs health checks from systemd timers; where there is no systemd (this kind of VM)
# the test runs each container's own check at its own interval, the first one this soon after
# the container is seen (not a whole 30 s interval later, as Docker would). More often would
# not help: each check of a worker starts a Python process, and 13 of them every few seconds
# are more than two cores can run.
FIRST_PROBE_S = 5.0


# Podman 4.3 reads /proc/PID/cgroup of a container process and fails the whole API call with
# ESRCH when that process has just exited (a one-shot job container, say); 4.4 treats it as
# gone (containers/podman#16504). The compose command is then simply run again.
ENGINE_RACE = re.compile(r"read /proc/\d+/cgroup: no such process")
ENGINE_RETRIES = 2


@dataclass
class Stack:
    """One compose project of compose.yaml under test, and how to reach it."""

    project: str
    files: tuple[Path, ...]  # the compose file and its test override
    env_file: Path
    docker_host: str
    env: dict[str, str]
    replicas: dict[str, int]
    restart_policy: Path
    timings: dict[str, float] = field(default_factory=dict)

    def compose(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        """docker-compose on this project; fails the test with its output when it fails.
        Run again (it is idempotent) when podman 4.3 lost its race with a process that had
        just exited (ENGINE_RACE), at most ENGINE_RETRIES times."""
        argv = ["docker-compose", "--compatibility", "-p", self.project]
        argv += ["--env-file", str(self.env_file), *_file_args(self.files)]
        argv += ["-f", str(self.restart_policy)]
        for _ in range(ENGINE_RETRIES + 1):
            done = subprocess.run(
                [*argv, *args],
                cwd=ROOT,
                env={**os.environ, "DOCKER_HOST": self.docker_host},
                capture_output=True,
                text=True,
                timeout=timeout,
            )
            if done.returncode == 0 or not ENGINE_RACE.search(done.stderr):
                break
            retried = f"engine_race_retries ({args[0]})"
            self.timings[retried] = self.timings.get(retried, 0) + 1
        assert done.returncode == 0, (
            f"docker-compose {' '.join(args)}:\n{done.stderr}{self._failed_jobs_said()}"
        )
        return done

    def _failed_jobs_said(self) -> str:
        """What each container that exited non-zero wrote last (a job that failed `up`)."""
        failed = [
            c
            for c in self.containers()
            if c["State"]["Status"] == "exited" and c["State"]["ExitCode"] != 0
        ]
        return "".join(
            f"\n--- {c['Name']} exited {c['State']['ExitCode']} ---\n"
            f"{_last_words(c['Id'], 40, timestamps=True)}"
            for c in failed
        )

    @property
    def api(self) -> str:
        return f"http://127.0.0.1:{self.env['API_HOST_PORT']}"

    @property
    def database_url(self) -> str:
        e = self.env
        return (
            f"postgresql://{e['POSTGRES_ADMIN_USER']}:{e['POSTGRES_ADMIN_PASSWORD']}"
            f"@127.0.0.1:{e['POSTGRES_HOST_PORT']}/{e['POSTGRES_DB']}"
        )

    def management(self, path: str) -> Any:
        auth = (self.env["RABBITMQ_ADMIN_USER"], self.env["RABBITMQ_ADMIN_PASSWORD"])
        url = f"http://127.0.0.1:{self.env['RABBITMQ_MANAGEMENT_HOST_PORT']}/api{path}"
        r = httpx.get(url, auth=auth, timeout=10)
        r.raise_for_status()
        return r.json()

    def containers(self, service: str | None = None) -> list[dict[str, Any]]:
        """`podman inspect` of this project's containers (of one service when named)."""
        labels = [f"label=com.docker.compose.project={self.project}"]
        if service:
            labels.append(f"label=com.docker.compose.service={service}")
        filters = [arg for label in labels for arg in ("--filter", label)]
        ids = _podman("ps", "-aq", *filters).split()
        return json.loads(_podman("inspect", *ids)) if ids else []


def _file_args(files: tuple[Path, ...]) -> list[str]:
    return [arg for path in files for arg in ("-f", str(path))]


def _podman(*args: str) -> str:
    done = subprocess.run(["podman", *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"podman {' '.join(args)}:\n{done.stderr}"
    return done.stdout


def _last_words(container: str, lines: int = 80, timestamps: bool = False) -> str:
    """The last `lines` a container wrote, stdout and stderr together."""
    done = subprocess.run(
        [
            "podman",
            "logs",
            *(["--timestamps"] if timestamps else []),
            "--tail",
            str(lines),
            container,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=120,
    )
    return done.stdout


def _events(container: str, since: float) -> str:
    """The engine's events for a container since `since` (a start, a death and its exit
    code, a restart), one per line: what the container's own log cannot say."""
    done = subprocess.run(
        [
            *("podman", "events", "--stream=false", "--since", str(int(since) - 1)),
            *("--filter", f"container={container}", "--filter", "type=container"),
            *("--format", "{{.Time}} {{.Status}} exit={{.ContainerExitCode}}"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return (done.stdout + done.stderr).strip()


def _app_containers(stack: Stack) -> list[dict[str, Any]]:
    """The containers of the application services (not the brokers, the database, the jobs)."""
    return [
        c
        for c in stack.containers()
        if c["Config"]["Labels"]["com.docker.compose.service"] in stack.replicas
    ]


def _finished_at(container: dict[str, Any]) -> float:
    """When a container's process exited (podman's RFC 3339 time, nanoseconds), in epoch
    seconds."""
    stamp = container["State"]["FinishedAt"]  # e.g. 2026-12-01T05:30:05.197240043Z
    found = re.fullmatch(r"([^.]+?)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)", stamp)
    assert found, stamp
    whole, fraction, zone = found.groups()
    parsed = datetime.fromisoformat(whole + ("+00:00" if zone == "Z" else zone))
    return parsed.timestamp() + float(f"0.{fraction or 0}")


def _to_log(config: pytest.Config, text: str) -> None:
    """Keep `text`, the figures a run should keep, in FIGURES, and write it to the run's
    output even when the test passes (a passing test's prints show only with -s, and output
    capture would swallow a plain write to the terminal) where pytest runs in one process."""
    FIGURES.parent.mkdir(parents=True, exist_ok=True)
    with FIGURES.open("a", encoding="utf-8") as figures:
        figures.write(text.rstrip("\n") + "\n")
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return  # a test process of pytest-xdist writes its terminal output nowhere
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    capture = config.pluginmanager.get_plugin("capturemanager")
    if reporter is None or capture is None:
        print(text)
        return
    with capture.global_and_fixture_disabled():
        reporter.write_line(text)


def _prepare(config: pytest.Config) -> tuple[str, float]:
    """scripts/containers: the machine, the images; returns DOCKER_HOST and the seconds it took."""
    start = time.monotonic()
    try:
        done = subprocess.run(
            [str(ROOT / "scripts" / "containers")],
            capture_output=True,
            text=True,
            timeout=PREPARE_TIMEOUT_S,
        )
    except FileNotFoundError as exc:  # pragma: no cover - a checkout without its scripts
        pytest.fail(f"cannot prepare containers: {exc}", pytrace=False)
    if done.returncode != 0:
        pytest.fail(f"this machine cannot run the containers:\n{done.stderr}", pytrace=False)
    _to_log(config, done.stderr)  # image sizes and build times
    lines = [line for line in done.stdout.splitlines() if line.startswith("DOCKER_HOST=")]
    return lines[-1].split("=", 1)[1], time.monotonic() - start


# The ports compose.yaml publishes (each `{NAME}_HOST_PORT`).
PUBLISHED = ("API", "RABBITMQ", "RABBITMQ_MANAGEMENT", "POSTGRES")


def _secrets_env(compose: Path, published: tuple[str, ...]) -> dict[str, str]:
    """Every variable a compose file requires (each `${NAME:?…}`), with freshly generated
    credentials and keys: a secret added to the file later is generated here too."""
    required = set(re.findall(r"\$\{([A-Z0-9_]+):\?", compose.read_text()))
    signing = svc.signing_env()
    env = {k: signing[k] for k in signing if k != "RESULT_KEYS"}
    env |= {
        f"RESULT_KEY_{component.upper()}": key
        for component, key in json.loads(signing["RESULT_KEYS"]).items()
    }
    env |= {
        "RABBITMQ_ADMIN_USER": "admin",
        "POSTGRES_ADMIN_USER": "postgres",
        "POSTGRES_DB": "verdict",
        "TOPOLOGY_PREFIX": PREFIX,
        "DEPLOY_API_KEYS": json.dumps(hashed({KEY: {"tenant": "containers", "plan": 6}})),
    }
    # Passwords, cookies and the other keys: random, URL-safe (they go into URLs).
    env |= {name: secrets.token_urlsafe(32) for name in required - set(env)}
    # Published on loopback, on ports of their own: the machine's own services keep theirs.
    for name in published:
        env[f"{name}_HOST_PORT"] = str(free_port())
    return env


def _replicas(compose: Path) -> dict[str, int]:
    """Replica count of every long-running service of a compose file."""
    services = yaml.safe_load(compose.read_text())["services"]
    return {
        name: int((spec.get("deploy") or {}).get("replicas", 1))
        for name, spec in services.items()
        if "deploy" in spec
    }


def _restart_on_failure(folder: Path, services: dict[str, int]) -> Path:
    """An override giving every application service `restart: on-failure`.

    compose.yaml says `unless-stopped`. Podman 4.3 (Debian 12's) can start such a container
    again when its process exits during `podman stop`, because the stop marks the container
    stopped by the user only after the restart policy has looked (containers/podman#17069,
    fixed in 4.4): the restarted process then stops with 137, which is the engine's race,
    not ours. With `on-failure` a process that exits 0 on SIGTERM is never restarted, and a
    crash (the kill test's SIGKILL) still is; a restart during the stop now means a process
    did not exit 0, and the stop test says so."""
    path = folder / "restart-policy.yaml"
    policy = {"services": {name: {"restart": "on-failure"} for name in services}}
    path.write_text(yaml.safe_dump(policy))
    return path


class HealthProbes:
    """Runs each running container's own health check (podman's API) while the stack is up."""

    def __init__(self, stack: Stack) -> None:
        self.stack = stack
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.next_probe: dict[str, float] = {}

    def __enter__(self) -> HealthProbes:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopped.set()
        self.thread.join(30)

    def _run(self) -> None:
        socket_path = self.stack.docker_host.removeprefix("unix://")
        transport = httpx.HTTPTransport(uds=socket_path)
        with httpx.Client(transport=transport, base_url="http://podman", timeout=30) as api:
            while not self.stopped.wait(1):
                try:
                    self._probe_due(api)
                except (httpx.HTTPError, KeyError, ValueError):
                    continue  # a container went away or the socket is busy: next round

    def _probe_due(self, api: httpx.Client) -> None:
        label = f"com.docker.compose.project={self.stack.project}"
        filters = json.dumps({"label": [label], "status": ["running"]})
        listed = api.get("/v4.0.0/libpod/containers/json", params={"filters": filters})
        for container in listed.json():
            cid = container["Id"]
            now = time.monotonic()
            if cid not in self.next_probe:
                self.next_probe[cid] = now + FIRST_PROBE_S
            if self.next_probe[cid] > now:
                continue
            config = api.get(f"/v4.0.0/libpod/containers/{cid}/json").raise_for_status()
            config = config.json()["Config"]
            interval = (config.get("Healthcheck") or {}).get("Interval")
            if not interval:
                self.next_probe[cid] = float("inf")  # no health check (a one-shot job)
                continue
            self.next_probe[cid] = now + interval / 1e9
            api.get(f"/v4.0.0/libpod/containers/{cid}/healthcheck")


def _remove_abandoned(docker_host: str) -> None:
    """Projects of earlier runs whose test process died before its teardown (a hard kill)."""
    listed = _podman("ps", "-a", "--format", '{{ index .Labels "com.docker.compose.project" }}')
    for project in set(listed.split()):
        parts = project.split("-")
        if project.startswith(PROJECT) and len(parts) == 4 and not _alive(int(parts[2])):
            _cleanup(project, docker_host)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _cleanup(project: str, docker_host: str, stack: Stack | None = None) -> None:
    """Everything of the project goes, whatever state a failure left it in."""
    if stack:
        files = ["--env-file", str(stack.env_file), *_file_args(stack.files)]
        down = ["down", "-v", "--remove-orphans", "-t", "10"]
        subprocess.run(
            ["docker-compose", "-p", project, *files, *down],
            cwd=ROOT,
            env={**os.environ, "DOCKER_HOST": docker_host},
            capture_output=True,
            timeout=300,
        )
    label = f"label=com.docker.compose.project={project}"
    for kind in ("container", "volume", "network"):
        every = ["-a"] if kind == "container" else []
        listed = subprocess.run(
            ["podman", kind, "ls", "-q", "--filter", label, *every],
            capture_output=True,
            text=True,
        ).stdout.split()
        if listed:
            subprocess.run(["podman", kind, "rm", "-f", *listed], capture_output=True)


@contextlib.contextmanager
def stack_of(
    compose: Path,
    override: Path,
    published: tuple[str, ...],
    tmp_path_factory: pytest.TempPathFactory,
    pytestconfig: pytest.Config,
) -> Iterator[Stack]:
    """A compose file up (with its test override) under a project of its own, every service
    healthy; torn down after."""
    docker_host, prepared_s = _prepare(pytestconfig)
    folder = tmp_path_factory.mktemp("containers")
    env = _secrets_env(compose, published)
    env_file = folder / "env"
    env_file.write_text("".join(f"{k}={v}\n" for k, v in env.items()))
    env_file.chmod(0o600)
    _remove_abandoned(docker_host)
    project = f"{PROJECT}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    replicas = _replicas(compose)
    policy = _restart_on_failure(folder, replicas)
    stack = Stack(project, (compose, override), env_file, docker_host, env, replicas, policy)
    stack.timings["prepare_s"] = prepared_s
    try:
        with HealthProbes(stack):
            start = time.monotonic()
            stack.compose("up", "-d")
            _wait_all_healthy(stack)
            stack.timings["healthy_s"] = time.monotonic() - start
            yield stack
    finally:
        _cleanup(stack.project, docker_host, stack)
        timings = json.dumps(stack.timings)
        _to_log(pytestconfig, f"container stack timings ({compose.name}): {timings}")


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config) -> Iterator[Stack]:
    """compose.yaml up under a project of its own, every service healthy; torn down after."""
    with stack_of(COMPOSE, OVERRIDE, PUBLISHED, tmp_path_factory, pytestconfig) as up:
        yield up


def _wait(check: Callable[[], Any], timeout: float, what: str) -> Any:
    """The first truthy result of `check`, polled until `timeout`; else fails naming `what`."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = check()
        except (httpx.HTTPError, OSError) as exc:
            last = exc
        if last and not isinstance(last, Exception):
            return last
        time.sleep(1)
    raise AssertionError(f"{what} within {timeout} s; last: {last!r}")


def _unhealthy(stack: Stack) -> list[str]:
    """Long-running containers not (yet) healthy, and one-shot jobs that did not exit 0."""
    problems = []
    for c in stack.containers():
        state = c["State"]
        if c["Config"].get("Healthcheck", {}).get("Test") in (None, ["NONE"]):
            if state["Status"] != "exited" or state["ExitCode"] != 0:
                problems.append(f"{c['Name']}: job {state['Status']} ({state['ExitCode']})")
        elif state.get("Health", {}).get("Status") != "healthy":
            problems.append(f"{c['Name']}: {state.get('Health', {}).get('Status')}")
    return problems


def _wait_all_healthy(stack: Stack, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while problems := _unhealthy(stack):
        assert time.monotonic() < deadline, f"not healthy within {timeout} s: {problems}"
        time.sleep(1)


def _consumers(stack: Stack) -> dict[str, int]:
    queues = stack.management("/queues/verdict?columns=name,consumers")
    return {q["name"]: q["consumers"] for q in queues}


def _component_consumers(stack: Stack, component: str) -> set[int]:
    """The consumer counts seen on one component's plan queues (one value when all agree)."""
    names = Names(PREFIX)
    counts = _consumers(stack)
    return {counts.get(names.task_queue(component, plan), 0) for plan in PLANS}


def _submit(stack: Stack, count: int, plans: tuple[int, ...] = (1, 3, 6)) -> dict[str, int]:
    """`count` sessions spread over `plans`, POSTed to the API container: session id → plan."""
    submitted: dict[str, int] = {}
    with httpx.Client(base_url=stack.api, timeout=30) as client:
        for i in range(count):
            plan = plans[i % len(plans)]
            body = {"content": f"{TEXTS[i % len(TEXTS)]} #{i}", "plan_type": plan}
            r = client.post(f"{API}/analyze-async", json=body, headers=HEADERS)
            assert r.status_code == 202, r.text
            submitted[r.json()["session_id"]] = plan
    return submitted


def _verdict_rows(stack: Stack, sids: list[str]) -> int:
    async def count() -> int:
        conn = await asyncpg.connect(stack.database_url)
        try:
            return await conn.fetchval(
                "SELECT count(*) FROM verdicts WHERE session_id = ANY($1::uuid[])",
                [uuid.UUID(s) for s in sids],
            )
        finally:
            await conn.close()

    return asyncio.run(count())


def _all_verdicts(stack: Stack, sids: list[str], timeout: float = 180) -> None:
    _wait(
        lambda: _verdict_rows(stack, sids) == len(sids),
        timeout,
        f"a verdict row for each of {len(sids)} sessions",
    )


def test_every_service_is_healthy_by_its_own_healthcheck_with_loopback_ports(stack):
    """Each long-running container reports healthy from its own check, each one-shot job exited
    0, and every published port is bound to 127.0.0.1."""
    assert _unhealthy(stack) == []
    services = {c["Config"]["Labels"]["com.docker.compose.service"] for c in stack.containers()}
    assert set(stack.replicas) | {"rabbitmq", "redis", "postgres"} <= services
    bindings = [
        b["HostIp"]
        for c in stack.containers()
        for ports in (c["HostConfig"].get("PortBindings") or {}).values()
        for b in ports or []
    ]
    assert bindings and set(bindings) == {"127.0.0.1"}


def test_each_plan_queue_has_as_many_consumers_as_its_service_has_replicas(stack, pytestconfig):
    """The management API shows, on every plan queue of each component, one consumer per
    replica compose.yaml gives that component's worker service; the aggregators likewise."""
    observed = {}
    for service, replicas in stack.replicas.items():
        if not service.startswith("worker-"):
            continue
        component = service.removeprefix("worker-").replace("-", "_")
        counts = _component_consumers(stack, component)
        observed[component] = counts
        assert counts == {replicas}, f"{service}: {counts} consumers, {replicas} replicas"
    names = Names(PREFIX)
    results = _consumers(stack)
    assert results[names.results] == results[names.urgent_results] == stack.replicas["aggregator"]
    _to_log(pytestconfig, f"consumers per plan queue: {observed}")


def test_sessions_on_several_plans_reach_verdicts_in_postgres(stack):
    """Sessions on plans 1, 3 and 6 POSTed to the API container end with a verdict row each,
    and the API reports them completed."""
    submitted = _submit(stack, 9)
    _all_verdicts(stack, list(submitted))
    with httpx.Client(base_url=stack.api, timeout=30) as client:
        for sid, plan in submitted.items():
            body = client.get(f"{API}/{sid}/result", headers=HEADERS).json()
            assert body["status"] == "completed" and body["plan_type"] == plan, body


def _scale(stack: Stack, service: str, replicas: int) -> None:
    """`up --scale` of one service alone: the one-shot jobs it depends on are not run again."""
    scale = ["--scale", f"{service}={replicas}"]
    stack.compose("up", "-d", "--no-deps", "--no-recreate", *scale, service)


def test_scaling_a_worker_up_adds_consumers_and_down_loses_no_task(stack):
    """`--scale worker-claims=4` gives each claims queue 4 consumers; scaling it to 1 while
    sessions are in flight leaves 1 consumer and every session still reaches its verdict."""
    replicas = stack.replicas["worker-claims"]
    _scale(stack, "worker-claims", replicas + 1)
    _wait(lambda: _component_consumers(stack, "claims") == {replicas + 1}, 120, "claims scaled up")

    submitted = _submit(stack, 30)
    _scale(stack, "worker-claims", 1)
    _wait(lambda: _component_consumers(stack, "claims") == {1}, 120, "claims scaled down")
    _all_verdicts(stack, list(submitted))

    _scale(stack, "worker-claims", replicas)
    _wait(lambda: _component_consumers(stack, "claims") == {replicas}, 120, "claims restored")


def test_a_killed_worker_container_restarts_and_every_session_completes(stack):
    """A worker container killed under load (SIGKILL to its process, as a crash or the OOM
    killer does) is started again by its restart policy, its consumers come back, and every
    session reaches its verdict. Not `podman kill`: podman 4.3 counts that as a user's stop
    and restarts nothing, as after `compose stop`."""
    victim = stack.containers("worker-techniques")[0]
    restarts = victim["RestartCount"]
    submitted = _submit(stack, 30)
    os.kill(victim["State"]["Pid"], signal.SIGKILL)
    _wait(
        lambda: [
            c
            for c in stack.containers("worker-techniques")
            if c["Id"] == victim["Id"] and c["State"]["Running"] and c["RestartCount"] > restarts
        ],
        120,
        "the killed worker restarted",
    )
    replicas = stack.replicas["worker-techniques"]
    _wait(lambda: _component_consumers(stack, "techniques") == {replicas}, 120, "its consumers")
    _all_verdicts(stack, list(submitted))


def test_compose_stop_exits_0_everywhere_and_a_second_up_finds_topology_and_schema(stack):
    """`compose stop` ends every app container with exit 0 (SIGTERM handled); a second `up`
    finds the queues and tables still there (migrations: none pending), and sessions accepted
    just before the stop reach their verdicts after it."""
    _wait_all_healthy(stack)  # every process past its start (the restarted worker too)
    submitted = _submit(stack, 12)
    restarts = {c["Name"]: c["RestartCount"] for c in _app_containers(stack)}
    stopping = time.time()
    stack.compose("stop", timeout=600)
    stack.timings["stop_s"] = time.time() - stopping
    app = _app_containers(stack)
    # When each app container exited, counted from the start of `compose stop` (which stops
    # a container after those that depend on it: a figure, not the container's own grace).
    took = {c["Name"]: _finished_at(c) - stopping for c in app}
    if took:
        last = max(took, key=took.__getitem__)
        stack.timings[f"last_app_exit_s ({last})"] = took[last]
    exits = {c["Name"]: (c["State"]["Status"], c["State"]["ExitCode"]) for c in app}
    # Restarted during the stop: a process that exited non-zero (restart: on-failure).
    restarted = [c for c in app if c["RestartCount"] != restarts.get(c["Name"])]
    unclean = [c for c in app if (c["State"]["Status"], c["State"]["ExitCode"]) != ("exited", 0)]
    if not exits or unclean or restarted:
        # What an unclean one wrote last, with times (a process still stopping logs its
        # stacks), and the engine's events of its stop, whole: the stack is removed with
        # the test.
        said = "".join(
            f"\n--- {c['Name']}, {took[c['Name']]:.1f} s after the stop began, restarts "
            f"{restarts.get(c['Name'])} -> {c['RestartCount']} ---\n"
            f"{_events(c['Id'], stopping)}\n{_last_words(c['Id'], timestamps=True)}"
            for c in {c["Name"]: c for c in unclean + restarted}.values()
        )
        pytest.fail(f"not every app container exited 0 once: {exits}{said}", pytrace=False)

    stack.compose("up", "-d", "--no-recreate", "rabbitmq", "postgres")
    _wait(lambda: stack.management("/queues/verdict"), 120, "the management API back")
    names = Names(PREFIX)
    queues = {q["name"] for q in stack.management("/queues/verdict")}
    assert {names.task_queue("claims", 1), names.results, names.dlq} <= queues

    start = time.monotonic()
    stack.compose("up", "-d", "--no-recreate")
    _wait_all_healthy(stack)
    stack.timings["second_up_healthy_s"] = time.monotonic() - start
    migrate = stack.containers("migrate")[0]
    log = _podman("logs", migrate["Id"])
    assert "none pending" in log.splitlines()[-1], log
    _all_verdicts(stack, list(submitted))
