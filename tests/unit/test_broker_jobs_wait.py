"""One-shot broker jobs (`verdict topology declare`, `topology provision`) wait for a RabbitMQ
that does not answer yet — starting beside them, or its name not yet resolvable on a container
network — and fail at once on anything else."""

from __future__ import annotations

import asyncio

import pytest

from ops import cli
from shared.errors import BrokerUnavailable, ManagementUnreachable, TopologyError


def run(attempt):
    return asyncio.run(cli._when_broker_up(attempt))


def failing(errors: list[Exception]):
    """An attempt that raises each of `errors` in turn, then answers how often it ran."""
    calls = []

    async def attempt() -> int:
        calls.append(1)
        if errors:
            raise errors.pop(0)
        return len(calls)

    return attempt


def test_a_broker_or_management_api_not_up_yet_is_tried_again(monkeypatch):
    monkeypatch.setattr(cli, "BROKER_RETRY_S", 0.01)
    errors = [BrokerUnavailable("no route"), ManagementUnreachable("name not resolved")]
    assert run(failing(errors)) == 3


def test_any_other_failure_ends_the_job_at_once(monkeypatch):
    monkeypatch.setattr(cli, "BROKER_RETRY_S", 0.01)
    with pytest.raises(TopologyError, match="403"):
        run(failing([TopologyError("PUT /users/x: 403")]))


def test_the_wait_is_bounded(monkeypatch):
    monkeypatch.setattr(cli, "BROKER_RETRY_S", 0.01)
    monkeypatch.setattr(cli, "BROKER_WITHIN_S", 0.05)
    with pytest.raises(BrokerUnavailable):
        run(failing([BrokerUnavailable("down")] * 1000))
