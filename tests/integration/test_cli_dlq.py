"""`verdict dlq list|replay` as an operator types them, against the real broker."""

from __future__ import annotations

import asyncio

import pytest

from shared.names import Names
from tests.cli import verdict
from tests.integration.conftest import publisher_for, queue_depths

pytestmark = pytest.mark.integration


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
