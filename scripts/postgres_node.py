"""A PostgreSQL server of its own (tests and the chaos script): its own data directory and
port, so it can be restarted or crashed for real (a fast shutdown ends every session with
57P01) without touching the shared server."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

BIN = Path("/usr/lib/postgresql")


def _pg_bin(tool: str) -> str:
    """The server tool of the newest installed major version (Debian's layout), else PATH."""
    versions = sorted(BIN.glob("*/bin"), key=lambda p: int(p.parent.name)) if BIN.is_dir() else []
    for directory in reversed(versions):
        if (directory / tool).exists():
            return str(directory / tool)
    found = shutil.which(tool)
    if found is None:
        raise RuntimeError(f"{tool} not found: a test-owned PostgreSQL needs the server binaries")
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class OwnedPostgres:
    """One throwaway cluster; `restart()` is a real fast shutdown and start."""

    def __init__(self, root: Path, options: str = "", auth_host: str = "trust") -> None:
        self.root = root
        self.options = options
        self.auth_host = auth_host  # how TCP clients authenticate; the socket is always trust
        self.data = root / "data"
        self.port = _free_port()
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _as_owner(self, *args: str) -> None:
        # The server refuses to run as root: run its tools as the `postgres` user when root.
        prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        subprocess.run([*prefix, *args], check=True, capture_output=True, timeout=120)

    def init(self) -> None:
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres", "postgres")
        self._as_owner(
            _pg_bin("initdb"),
            "-D",
            str(self.data),
            "--auth-local=trust",
            f"--auth-host={self.auth_host}",
            "-U",
            "postgres",
            "--no-sync",
        )

    def socket_url(self, database: str = "postgres") -> str:
        """The superuser over the server's Unix socket (trusted whatever `auth_host` says)."""
        return f"postgresql://postgres@/{database}?host={self.root}&port={self.port}"

    def tcp_url(self, user: str, password: str, database: str) -> str:
        """`user` over TCP on loopback, authenticating as `auth_host` requires."""
        return f"postgresql://{user}:{password}@127.0.0.1:{self.port}/{database}"

    def start(self) -> None:
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
        options = f"{options} {self.options}"
        self._as_owner(
            _pg_bin("pg_ctl"),
            "-D",
            str(self.data),
            "-o",
            options,
            "-w",
            "-t",
            "60",
            "-l",
            str(self.root / "server.log"),
            "start",
        )

    def stop(self, mode: str = "fast") -> None:
        self._as_owner(_pg_bin("pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop")


@contextmanager
def owned_postgres(options: str = "", auth_host: str = "trust") -> Iterator[OwnedPostgres]:
    """A started cluster (`options`: more server flags), stopped and removed afterwards."""
    root = Path(tempfile.mkdtemp(prefix="verdict-pg-"))
    if os.geteuid() == 0:  # the server, running as `postgres`, keeps its socket here
        root.chmod(0o755)
    server = OwnedPostgres(root, options, auth_host)
    try:
        server.init()
        server.start()
        yield server
    finally:
        with contextlib.suppress(subprocess.CalledProcessError):  # already stopped
            server.stop("immediate")
        shutil.rmtree(root, ignore_errors=True)
