"""`verdict dlq list|show|replay|purge` as an operator types them, against the real broker."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from aggregator.service import Aggregator
from shared.broker import connect
from shared.constants import ANALYSIS_COMPONENTS, REPLAYS_HEADER, TENANT_HEADER
from shared.names import Names
from shared.settings import Settings
from tests.cli import verdict
from tests.integration.conftest import publisher_for, queue_depths, running
from tests.integration.test_dlq import expired_session, workers_consume
from tests.integration.test_worker_flow import explain, final_view, scored
from workers.runtime import Worker, WorkerOptions

pytestmark = pytest.mark.integration


async def run(settings: Settings, *args: str, **env: str) -> Any:
    return await asyncio.to_thread(verdict, settings, "dlq", *args, **env)


async def letters_of(settings: Settings, *args: str) -> list[dict[str, Any]]:
    listed = await run(settings, "list", "--json", *args)
    assert listed.returncode == 0, listed.stderr
    return json.loads(listed.stdout)


async def three_letters(settings: Settings) -> Names:
    """claims/1 poison of tenant acme, domain/4 given up of tenant zeta (priority 6), and
    a claims/2 letter replayed twice already."""
    names = Names(settings.topology_prefix)
    async with publisher_for(settings) as publisher:
        await publisher.dead_letter(
            b'{"n": 0}',
            {TENANT_HEADER: "acme"},
            "invalid task: broken",
            names.task_queue("claims", 1),
            1,
        )
        await publisher.dead_letter(
            b'{"n": 1}',
            {TENANT_HEADER: "zeta"},
            "gave up after 3 attempts",
            names.task_queue("domain", 4),
            6,
        )
        await publisher.dead_letter(
            b'{"n": 2}', {REPLAYS_HEADER: 2}, "gave up again", names.task_queue("claims", 2), 2
        )
    return names


async def test_list_shows_each_letter_filters_and_leaves_them_in_place(world):
    """Lines carry id, origin, reason and replays; --reason/--component/--tenant/--newer-than
    choose; --json gives every field; the DLQ keeps all three."""
    settings = await world()
    names = await three_letters(settings)
    listed = await run(settings, "list")
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[0].startswith("id\tage\torigin\treason")
    assert f"{names.task_queue('claims', 1)}\tinvalid task: broken\t-\treplays=0" in lines[1]
    assert "replays=2" in lines[3] and "3 dead letter(s) shown of 3" in listed.stderr
    every = await letters_of(settings)
    assert [x["reason"] for x in every] == [
        "invalid task: broken",
        "gave up after 3 attempts",
        "gave up again",
    ]
    assert every[1]["tenant"] == "zeta" and every[1]["priority"] == 6
    assert [x["reason"] for x in await letters_of(settings, "--reason", "GAVE")] == [
        "gave up after 3 attempts",
        "gave up again",
    ]
    assert [x["tenant"] for x in await letters_of(settings, "--component", "domain")] == ["zeta"]
    assert [x["origin"] for x in await letters_of(settings, "--tenant", "acme")] == [
        names.task_queue("claims", 1)
    ]
    assert len(await letters_of(settings, "--newer-than", "1h")) == 3
    assert await letters_of(settings, "--older-than", "1h") == []
    assert (await queue_depths(settings))[names.dlq] == 3


async def test_show_prints_one_letter_with_its_body_and_refuses_an_unknown_id(world):
    """`show ID` prints headers and body as JSON; an id not in the DLQ exits 1 saying so; an
    age without a unit it knows is refused before anything is read."""
    settings = await world()
    await three_letters(settings)
    second = (await letters_of(settings))[1]
    shown = await run(settings, "show", second["id"])
    assert shown.returncode == 0, shown.stderr
    document = json.loads(shown.stdout)
    assert document["body"] == '{"n": 1}' and document["headers"][TENANT_HEADER] == "zeta"
    missing = await run(settings, "show", "0123456789abcdef")
    assert missing.returncode == 1 and "no dead letter 0123456789abcdef" in missing.stderr
    bad_age = await run(settings, "list", "--older-than", "ten minutes")
    assert bad_age.returncode == 2 and "like 90s, 15m, 2h or 1d" in bad_age.stderr


async def test_replay_one_a_selection_or_by_filter_at_the_original_priority(world):
    """By id, one letter goes to its origin queue with its priority; a filter replays what it
    matches; the letter replayed twice is refused as a loop until --force."""
    settings = await world(dlq_max_replays=2)
    names = await three_letters(settings)
    first, second, third = await letters_of(settings)
    one = await run(settings, "replay", second["id"])
    assert one.returncode == 0, one.stderr
    assert "replayed 1 dead letter(s)" in one.stdout
    domain = names.task_queue("domain", 4)
    connection = await connect(settings.amqp_url, "test-cli-dlq")
    try:
        channel = await connection.channel()
        home = await (await channel.get_queue(domain)).get(no_ack=True)
        assert home.priority == 6 and home.headers[REPLAYS_HEADER] == 1
    finally:
        await connection.close()

    loops = await run(settings, "replay", "--reason", "gave up")
    assert "replayed 0 dead letter(s)" in loops.stdout
    assert f"refused 1 loop(s), replayed 2 times already (--force replays them): {third['id']}" in (
        loops.stdout
    )
    selection = await run(settings, "replay", first["id"], third["id"], "--force")
    assert "replayed 2 dead letter(s)" in selection.stdout
    depths = await queue_depths(settings)
    assert depths[names.dlq] == 0
    assert depths[names.task_queue("claims", 1)] == depths[names.task_queue("claims", 2)] == 1


async def test_purge_counts_without_yes_and_deletes_with_it(world):
    """Without --yes it says how many would go and deletes nothing; with it, by filter or id,
    exactly those go."""
    settings = await world()
    names = await three_letters(settings)
    dry = await run(settings, "purge", "--reason", "gave up")
    assert dry.returncode == 1 and "would purge 2 dead letter(s); run again with --yes" in (
        dry.stderr
    )
    assert (await queue_depths(settings))[names.dlq] == 3
    by_filter = await run(settings, "purge", "--reason", "gave up", "--yes")
    assert by_filter.returncode == 0 and "purged 2 dead letter(s)" in by_filter.stdout
    (last,) = await letters_of(settings)
    by_id = await run(settings, "purge", last["id"], "--yes")
    assert "purged 1 dead letter(s)" in by_id.stdout
    assert (await queue_depths(settings))[names.dlq] == 0


async def test_replayed_tasks_are_analysed_to_a_verdict(world, pool):
    """A tenant's expired tasks, replayed from the command line, are run by real workers and
    their session completes."""
    settings = await world(queue_message_ttl_ms=1000, session_deadline_s=120)
    new = await expired_session(settings, pool, plan=4, tenant="tenant-cli")
    workers = [Worker(settings, WorkerOptions(c, 1, 1), scored).run for c in ANALYSIS_COMPONENTS]
    connection = await connect(settings.amqp_url, "test-cli-dlq")
    try:
        async with running(*workers, Aggregator(settings, explain=explain).run):
            names = Names(settings.topology_prefix)
            await workers_consume(connection, names, 4)
            replayed = await run(settings, "replay", "--tenant", "tenant-cli")
            assert "replayed 4 dead letter(s)" in replayed.stdout, replayed.stderr
            view = await final_view(pool, new.id)
    finally:
        await connection.close()
    assert view.status == "completed"


async def test_the_commands_connect_with_operator_amqp_url_when_it_is_set(world):
    """OPERATOR_AMQP_URL, not AMQP_URL, is what they log in with: a wrong one fails in words;
    so does a prefix with no DLQ."""
    settings = await world()
    wrong = "amqp://nobody:wrong@127.0.0.1:5672/"
    refused = await run(settings, "list", OPERATOR_AMQP_URL=wrong)
    assert refused.returncode == 1 and "cannot connect to RabbitMQ" in refused.stderr
    missing = await run(settings, "replay", TOPOLOGY_PREFIX="nosuchprefix")
    assert missing.returncode == 1
    assert "there is no DLQ 'nosuchprefix_dlq': is TOPOLOGY_PREFIX right" in missing.stderr
