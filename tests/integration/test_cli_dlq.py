"""`verdict dlq list|replay` as an operator types them, against the real broker."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from shared.settings import Settings
from tests.integration.conftest import publisher_for, queue_depths
from topology.spec import Names

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def verdict(settings: Settings, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the `verdict` command line with the environment of `settings`."""
    env = {
        **os.environ,
        "AMQP_URL": settings.amqp_url,
        "REDIS_URL": settings.redis_url,
        "DATABASE_URL": settings.database_url,
        "TOPOLOGY_PREFIX": settings.topology_prefix,
        "LOG_JSON": "false",
    }
    return subprocess.run(
        [sys.executable, "-m", "ops.cli", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


async def test_dlq_list_shows_origin_and_reason_and_leaves_letters_in_place(world):
    """`verdict dlq list` prints each letter's origin queue and reason; the DLQ keeps them."""
    settings = await world()
    names = Names(settings.topology_prefix)
    async with publisher_for(settings) as publisher:
        await publisher.dead_letter(
            b"{}", {}, "invalid task: broken", names.task_queue("claims", 1)
        )
    run = await asyncio.to_thread(verdict, settings, "dlq", "list")
    assert run.returncode == 0, run.stderr
    assert f"{names.task_queue('claims', 1)}\tinvalid task: broken" in run.stdout
    assert (await queue_depths(settings))[names.dlq] == 1


async def test_dlq_replay_sends_matching_letters_home(world):
    """`verdict dlq replay --reason` moves only matching letters back to their origin queue."""
    settings = await world()
    names = Names(settings.topology_prefix)
    async with publisher_for(settings) as publisher:
        await publisher.dead_letter(
            b"{}", {}, "invalid task: broken", names.task_queue("claims", 1)
        )
        await publisher.dead_letter(
            b"{}", {}, "gave up after 3 attempts", names.task_queue("domain", 2)
        )
    run = await asyncio.to_thread(verdict, settings, "dlq", "replay", "--reason", "gave up")
    assert run.returncode == 0, run.stderr
    assert "replayed 1 dead letter(s)" in run.stdout
    depths = await queue_depths(settings)
    assert depths[names.dlq] == 1 and depths[names.task_queue("domain", 2)] == 1
