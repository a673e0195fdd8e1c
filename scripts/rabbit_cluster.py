#!/usr/bin/env python3
"""A three-node RabbitMQ cluster on loopback, for the quorum-queue tests and the node-loss chaos.

Three nodes of scripts/rabbit_node.py (each its own node name, AMQP, distribution and
management ports and data directory), the second and third joined to the first
(`rabbitmqctl -n … stop_app; join_cluster; start_app`, the join resetting the node).

    scripts/rabbit_cluster.py start vclu --port 5800   # prints the nodes' URLs as JSON
    scripts/rabbit_cluster.py stop vclu --port 5800    # stops the nodes, removes their data

Node i listens for AMQP on PORT + 3·i, its management API on that + 10000 and its Erlang
distribution on that + 20000; loopback only.
"""

from __future__ import annotations

import argparse
import json
import random
import socket
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from rabbit_node import RabbitNode

NODES = 3
# Room between nodes' AMQP ports, so a TLS listener (AMQP port + 1) would still fit.
PORT_STEP = 3


def free_cluster_port(nodes: int = NODES) -> int:
    """A base AMQP port whose every node's AMQP, management and distribution ports are free."""
    for _ in range(100):
        base = random.randint(5700, 5990 - PORT_STEP * nodes)
        ports = [
            base + PORT_STEP * i + offset for i in range(nodes) for offset in (0, 10000, 20000)
        ]
        if all(_free(p) for p in ports):
            return base
    raise RuntimeError("no free ports for a private RabbitMQ cluster")


def _free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@dataclass(frozen=True)
class RabbitCluster:
    """Nodes `{name}1..{name}N`; the first is the one the others join."""

    name: str
    port: int
    size: int = NODES
    owned: bool = True  # as RabbitNode.owned

    @property
    def nodes(self) -> tuple[RabbitNode, ...]:
        return tuple(
            RabbitNode(f"{self.name}{i + 1}", self.port + PORT_STEP * i, owned=self.owned)
            for i in range(self.size)
        )

    @property
    def amqp_url(self) -> str:
        return self.nodes[0].amqp_url

    @property
    def amqp_hosts(self) -> str:
        """Every node as `host:port`, the AMQP_HOSTS setting."""
        return ",".join(f"127.0.0.1:{n.port}" for n in self.nodes)

    @property
    def management_url(self) -> str:
        return self.nodes[0].management_url

    def start(self) -> RabbitCluster:
        """Boot every node (in parallel), then join the others to the first."""
        first, *others = self.nodes
        try:
            with ThreadPoolExecutor(self.size) as pool:
                list(pool.map(RabbitNode.start, self.nodes))
            for node in others:
                node.stop_app()
                # join_cluster resets the node first (rabbitmqctl(8)): no `reset` of our own.
                node.ctl("join_cluster", first.node)
                node.start_app()
        except Exception:
            self.stop()
            raise
        return self

    def running(self) -> list[str]:
        """Node names the first live node reports running (`cluster_status`)."""
        for node in self.nodes:
            out = node.ctl("cluster_status", "--formatter", "json", timeout=30, check=False)
            if out is not None:
                return sorted(json.loads(out).get("running_nodes", []))
        return []

    def stop(self) -> None:
        """Stop every node and remove its data directory."""
        with ThreadPoolExecutor(self.size) as pool:
            list(pool.map(RabbitNode.stop, self.nodes))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=("start", "stop"))
    parser.add_argument("name", help="short name, e.g. vclu: nodes vclu1, vclu2, vclu3")
    parser.add_argument("--port", type=int, default=5800, help="first AMQP port (default 5800)")
    args = parser.parse_args(argv)
    cluster = RabbitCluster(args.name, args.port, owned=False)
    if args.action == "stop":
        cluster.stop()
        return 0
    cluster.start()
    report = {
        "running_nodes": cluster.running(),
        "amqp_url": cluster.amqp_url,
        "amqp_hosts": cluster.amqp_hosts,
        "management_url": cluster.management_url,
    }
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
