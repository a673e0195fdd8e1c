"""Broker failover: the list of node URLs a process tries, and the hook it rotates them in."""

import pytest
from aio_pika.robust_connection import RobustConnection
from pydantic import ValidationError

from shared.broker import FailoverConnection
from shared.settings import Settings, broker_urls

BASE = {"redis_url": "redis://x", "database_url": "postgresql://x"}


def test_amqp_hosts_reuse_the_credentials_vhost_and_options_of_amqp_url():
    """Each node gets AMQP_URL's user, password, vhost and query; AMQP_URL's own node first,
    no node twice."""
    urls = broker_urls("amqp://u:p%40w@a:5672/v?heartbeat=5", "b:5673, c:5674,a:5672")
    assert urls == (
        "amqp://u:p%40w@a:5672/v?heartbeat=5",
        "amqp://u:p%40w@b:5673/v?heartbeat=5",
        "amqp://u:p%40w@c:5674/v?heartbeat=5",
    )


def test_without_amqp_hosts_there_is_one_node():
    """A one-node deployment changes nothing."""
    assert Settings(amqp_url="amqp://h/", **BASE).amqp_urls() == ("amqp://h/",)


def test_amqp_hosts_are_host_port_pairs_only():
    """A URL or credentials in AMQP_HOSTS are refused: they come from AMQP_URL alone."""
    with pytest.raises(ValidationError, match="amqp_hosts"):
        Settings(amqp_url="amqp://h/", amqp_hosts="amqp://u:p@b/", **BASE)


def test_the_reconnect_hook_failover_overrides_still_exists():
    """FailoverConnection rotates nodes in aio-pika's private connect step: an aio-pika that
    renamed it would silently reconnect to one node only."""
    assert hasattr(RobustConnection, "_RobustConnection__connect_transport")
    assert "_RobustConnection__connect_transport" in vars(FailoverConnection)
