"""Where a worker's or aggregator's metrics listen (shared.metrics.serve)."""

from __future__ import annotations

import contextlib
import socket

from shared import metrics
from shared.settings import Settings


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_metrics_listen_on_loopback_unless_told_otherwise():
    """They listened on every interface: a hostile probe read queue depths and the review
    backlog from the machine's other address."""
    assert Settings.model_fields["metrics_host"].default == "127.0.0.1"
    server = metrics.serve(_free_port())
    assert server is not None
    try:
        assert server.server_address[0] == "127.0.0.1"
    finally:
        with contextlib.suppress(Exception):
            server.shutdown()
            server.server_close()


def test_no_port_serves_nothing():
    assert metrics.serve(None) is None
