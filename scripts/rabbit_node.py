#!/usr/bin/env python3
"""A RabbitMQ node of our own on loopback, beside the machine's broker.

Its own node name, AMQP, distribution and management ports, and data directory, so a test or a
chaos run can stop, restart or kill it without disturbing the broker everyone else uses (a
`scripts/up` pipeline, a colleague's tests). It reuses the installed server and the `rabbitmq`
user's Erlang cookie, so `rabbitmqctl -n NAME` reaches it.

    scripts/rabbit_node.py start vchaos --port 5690    # prints its AMQP and management URLs
    scripts/rabbit_node.py stop vchaos

Loopback only: every listener binds 127.0.0.1.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import pwd
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from owned import owner_mark

SERVER = Path("/usr/lib/rabbitmq/bin")  # Debian's layout; PATH otherwise
BASE = Path(
    os.environ.get("VERDICT_RABBIT_NODES", Path(tempfile.gettempdir()) / "verdict-rabbit-nodes")
)
# The guest user may connect from loopback only (RabbitMQ's default), which is all we use.
USER, PASSWORD = "guest", "guest"
BOOT_TIMEOUT_S = 120


def _tool(name: str) -> str:
    local = SERVER / name
    return str(local) if local.exists() else (shutil.which(name) or name)


def free_node_port(tls: bool = False) -> int:
    """An AMQP port whose management (+10000) and distribution (+20000) ports, and with `tls`
    the TLS port (+1), are free on loopback right now."""
    offsets = (0, 1, 10000, 20000) if tls else (0, 10000, 20000)
    for _ in range(50):
        port = random.randint(5700, 5990)
        try:
            for offset in offsets:
                with socket.socket() as s:
                    s.bind(("127.0.0.1", port + offset))
        except OSError:
            continue
        return port
    raise RuntimeError("no free ports for a private RabbitMQ node")


@dataclass(frozen=True)
class RabbitNode:
    """One node: `name` (short, becomes `name@localhost`) and its AMQP port; the distribution
    port is the AMQP port + 20000 and management the AMQP port + 10000."""

    name: str
    port: int
    # (CA, certificate, key) PEM paths: a TLS listener on `tls_port` beside the plain one.
    tls: tuple[str, str, str] | None = None
    # A definitions file (`verdict topology export`) the node loads when it boots.
    definitions: str | None = None
    # Whether the node names the process that starts it as its owner (scripts/owned.py):
    # stopped by the next sweep once that process is gone. A node started from the command
    # line outlives the command, and is not.
    owned: bool = True

    @property
    def node(self) -> str:
        return f"{self.name}@localhost"

    @property
    def home(self) -> Path:
        return BASE / self.name

    @property
    def amqp_url(self) -> str:
        return f"amqp://{USER}:{PASSWORD}@127.0.0.1:{self.port}/"

    @property
    def tls_port(self) -> int:
        return self.port + 1

    @property
    def amqps_url(self) -> str:
        """TLS on `localhost` (the name its certificate carries), trusting the given CA."""
        assert self.tls is not None, "started without TLS"
        return f"amqps://{USER}:{PASSWORD}@localhost:{self.tls_port}/?cafile={self.tls[0]}"

    @property
    def management_url(self) -> str:
        return f"http://{USER}:{PASSWORD}@127.0.0.1:{self.port + 10000}"

    def _env(self) -> dict[str, str]:
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": self._owner_home(),
            "RABBITMQ_NODENAME": self.node,
            "RABBITMQ_DIST_PORT": str(self.port + 20000),
            "RABBITMQ_CONFIG_FILE": str(self.home / "rabbitmq.conf"),
            "RABBITMQ_MNESIA_BASE": str(self.home / "mnesia"),
            "RABBITMQ_LOG_BASE": str(self.home / "log"),
            "RABBITMQ_ENABLED_PLUGINS_FILE": str(self.home / "enabled_plugins"),
            "RABBITMQ_PID_FILE": str(self.home / "pid"),
            **(owner_mark() if self.owned else {}),
        }

    @staticmethod
    def _owner_home() -> str:
        try:
            return pwd.getpwnam("rabbitmq").pw_dir
        except KeyError:
            return os.environ.get("HOME", "/tmp")

    def _run(self, *argv: str, timeout: float = 120, check: bool = True) -> str | None:
        """The command's output; None when it failed and `check` is off."""
        # The server and its CLI run as `rabbitmq` (its cookie) when we are root.
        as_owner = ["runuser", "-u", "rabbitmq", "--"] if os.geteuid() == 0 else []
        try:
            done = subprocess.run(
                [*as_owner, "env", *(f"{k}={v}" for k, v in self._env().items()), *argv],
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            # The CLI's own Erlang VM can take that long on a loaded machine: a failed try.
            if check:
                raise RuntimeError(f"{' '.join(argv[:3])}: no answer in {timeout:.0f}s") from exc
            return None
        if done.returncode != 0:
            if check:
                raise RuntimeError(f"{' '.join(argv[:3])}: {done.stderr.strip()[-500:]}")
            return None
        return done.stdout

    def ctl(self, *args: str, timeout: float = 120, check: bool = True) -> str | None:
        """`rabbitmqctl -n NODE ARGS`."""
        return self._run(_tool("rabbitmqctl"), "-n", self.node, *args, timeout=timeout, check=check)

    def start(self) -> RabbitNode:
        """Write its configuration, start it detached and wait until it serves AMQP and HTTP."""
        for sub in ("mnesia", "log"):
            (self.home / sub).mkdir(parents=True, exist_ok=True)
        (self.home / "rabbitmq.conf").write_text(self._config())
        (self.home / "enabled_plugins").write_text("[rabbitmq_management].\n")
        if os.geteuid() == 0:
            shutil.chown(BASE, "rabbitmq", "rabbitmq")
            for path in [self.home, *self.home.rglob("*")]:
                shutil.chown(path, "rabbitmq", "rabbitmq")
        # A pid file left by an earlier VM of this name (killed) is not this one's.
        (self.home / "pid").unlink(missing_ok=True)
        self._run(_tool("rabbitmq-server"), "-detached")
        try:
            self.wait_ready()
        except Exception:
            self.stop()
            raise
        return self

    def _config(self) -> str:
        lines = [
            f"listeners.tcp.default = 127.0.0.1:{self.port}",
            "management.tcp.ip = 127.0.0.1",
            f"management.tcp.port = {self.port + 10000}",
        ]
        if self.definitions:
            lines.append(f"load_definitions = {self.definitions}")
        if self.tls:
            ca, cert, key = self.tls
            lines += [
                f"listeners.ssl.default = 127.0.0.1:{self.tls_port}",
                f"ssl_options.cacertfile = {ca}",
                f"ssl_options.certfile = {cert}",
                f"ssl_options.keyfile = {key}",
                # Clients prove who they are with their password, not a certificate.
                "ssl_options.verify = verify_none",
                "ssl_options.fail_if_no_peer_cert = false",
            ]
        return "\n".join(lines) + "\n"

    def wait_ready(self, timeout: float = BOOT_TIMEOUT_S, booted: bool = False) -> None:
        """Until the node has booted (unless `booted`: `start_app` returns once the app
        runs) and its management API answers."""
        deadline = time.monotonic() + timeout
        # Until the VM has registered with epmd, await_startup fails at once: ask again.
        while not booted and (
            self.ctl("await_startup", "--timeout", "10", timeout=60, check=False) is None
        ):
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.node} did not boot within {timeout:.0f}s")
            time.sleep(1)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self._management_answers():
                return
            time.sleep(0.5)
        raise RuntimeError(f"{self.node}: management API did not answer")

    def _management_answers(self) -> bool:
        request = urllib.request.Request(f"http://127.0.0.1:{self.port + 10000}/api/overview")
        token = f"{USER}:{PASSWORD}".encode()
        request.add_header("Authorization", "Basic " + base64.b64encode(token).decode())
        try:
            with urllib.request.urlopen(request, timeout=2) as answer:
                return bool(answer.status == 200)
        except OSError:
            return False

    def stop_app(self) -> None:
        """The broker application stops; the Erlang VM stays (`rabbitmqctl stop_app`)."""
        self.ctl("stop_app")

    def start_app(self) -> None:
        self.ctl("start_app")
        self.wait_ready(booted=True)

    def kill(self) -> None:
        """`kill -9` of the node's Erlang VM: no shutdown, no goodbye to its peers; its data
        directory stays, so `start()` brings it back with what it had."""
        pid = int((self.home / "pid").read_text().strip())
        os.kill(pid, signal.SIGKILL)
        while _alive(pid):
            time.sleep(0.1)

    def stop(self) -> None:
        """Do away with the node and its data directory. Nothing of it is kept, so there is
        nothing to stop gracefully: its VM is killed (a `rabbitmqctl stop` is an Erlang VM
        of its own and a graceful shutdown, seconds each). When no live VM of this node's
        name owns the pid file (not written yet, killed already), `rabbitmqctl stop`."""
        pid = self._own_pid()
        if pid is not None:
            os.kill(pid, signal.SIGKILL)
            deadline = time.monotonic() + 30
            while _alive(pid) and time.monotonic() < deadline:
                time.sleep(0.1)
        else:
            self.ctl("stop", timeout=60, check=False)
        shutil.rmtree(self.home, ignore_errors=True)

    def _own_pid(self) -> int | None:
        """The pid in the node's pid file when that process was started for this node (its
        environment names it: `_env`), not a pid the system has since given to another."""
        try:
            pid = int((self.home / "pid").read_text().strip())
            environment = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except (OSError, ValueError):
            return None
        return pid if f"RABBITMQ_NODENAME={self.node}".encode() in environment else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A killed child of ours stays a zombie until reaped; it serves nothing either way.
    try:
        return "zombie" not in Path(f"/proc/{pid}/status").read_text().lower()
    except FileNotFoundError:
        return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=("start", "stop"))
    parser.add_argument("name", help="short node name, e.g. vchaos")
    parser.add_argument("--port", type=int, default=5690, help="AMQP port (default 5690)")
    args = parser.parse_args(argv)
    node = RabbitNode(args.name, args.port, owned=False)
    if args.action == "start":
        node.start()
        print(
            json.dumps(
                {
                    "node": node.node,
                    "amqp_url": node.amqp_url,
                    "management_url": node.management_url,
                }
            )
        )
    else:
        node.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
