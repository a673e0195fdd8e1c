"""Least privilege on the real broker: connected as each role, what it must not do is refused.

Each test provisions a vhost of its own with one user per role (random passwords), declares
the topology as the topology role, and removes vhost and users afterwards.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import signal
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import aio_pika
import aiormq
import pytest
from redis.asyncio import Redis
from redis.exceptions import NoPermissionError

from aggregator.explanation import explain
from aggregator.service import Aggregator
from shared.broker import connect
from shared.constants import ANALYSIS_COMPONENTS
from shared.dead_letter_queue import LetterFilter, list_letters, replay
from shared.errors import DeadLetterQueueError, RetryableAnalysisError
from shared.keys import Keys
from shared.names import Names
from shared.redis_roles import redis_roles, setuser_arguments
from shared.settings import Settings
from tests import services as svc
from tests.cli import verdict
from tests.conftest import make_settings
from tests.integration.conftest import eventually, publisher_for, running
from tests.integration.test_redis_roles import as_user
from tests.integration.test_worker_flow import dlq_messages, final_view, submit
from tests.integration.test_worker_group import exited, start_worker
from topology.access import Role, roles
from topology.broker import declare, management_url
from topology.provision import (
    Management,
    access_drift,
    password_variable,
    provision,
    with_credentials,
)
from topology.spec import from_settings
from workers.executor import Analysis
from workers.runtime import Worker, WorkerOptions

pytestmark = pytest.mark.integration


@dataclass
class Deployment:
    """A provisioned vhost: its names, its roles and an AMQP URL per role."""

    names: Names
    vhost: str
    roles: tuple[Role, ...]
    urls: dict[str, str]
    management: Management
    settings: Settings  # as the topology role

    def settings_of(self, role: str) -> Settings:
        """The settings a process of `role` runs with: its own broker credentials."""
        return self.settings.model_copy(update={"amqp_url": self.urls[role]})


@pytest.fixture
async def deployment(services: svc.Services, database_url: str) -> AsyncIterator[Deployment]:
    prefix, vhost = svc.unique("acc"), svc.unique("verdict-test-")
    names = Names(prefix)
    vhost_url = urlunsplit(urlsplit(services.amqp_url)._replace(path="/" + quote(vhost, safe="")))
    settings = make_settings(services, database_url, prefix, amqp_url=vhost_url)
    all_roles = roles(names, settings.retry_delays_ms())
    passwords = {r.role: secrets.token_urlsafe(16) for r in all_roles}
    base, _, auth = management_url(services.amqp_url, services.management_url)
    async with Management(base, auth) as api:
        await provision(api, vhost, all_roles, passwords)
        urls = {r.role: with_credentials(vhost_url, r.user, passwords[r.role]) for r in all_roles}
        settings = settings.model_copy(update={"amqp_url": urls["topology"]})
        connection = await connect(urls["topology"], "test-topology")
        try:
            await declare(await connection.channel(), from_settings(settings))
        finally:
            await connection.close()
        try:
            yield Deployment(names, vhost, all_roles, urls, api, settings)
        finally:
            await api.delete(f"/vhosts/{quote(vhost, safe='')}")
            for r in all_roles:
                await api.delete(f"/users/{quote(r.user, safe='')}")


Step = Callable[[aio_pika.abc.AbstractChannel], Awaitable[Any]]


async def attempt(url: str, step: Step) -> None:
    """Run `step` on a confirming channel of a fresh connection as the URL's user."""
    connection = await aio_pika.connect(url)
    try:
        channel = await connection.channel(publisher_confirms=True)
        await step(channel)
    finally:
        await connection.close()


async def refused(url: str, step: Step) -> None:
    """`step` fails with AMQP 403 ACCESS_REFUSED."""
    with pytest.raises(aiormq.exceptions.ChannelAccessRefused):
        await attempt(url, step)


def publish(exchange: str, routing_key: str) -> Step:
    async def step(channel: aio_pika.abc.AbstractChannel) -> None:
        target = (
            channel.default_exchange
            if exchange == ""
            else await channel.get_exchange(exchange, ensure=False)
        )
        await target.publish(aio_pika.Message(b"{}"), routing_key, timeout=10)

    return step


async def ignore(message: aio_pika.abc.AbstractIncomingMessage) -> None:
    """A consumer that leaves what it gets unacked (returned when the channel closes)."""


def consume(queue: str) -> Step:
    async def step(channel: aio_pika.abc.AbstractChannel) -> None:
        declared = await channel.declare_queue(queue, passive=True)
        await declared.consume(ignore)

    return step


def spy_on(exchange: str) -> Step:
    async def step(channel: aio_pika.abc.AbstractChannel) -> None:
        spy = await channel.declare_queue(exclusive=True)
        await spy.bind(exchange, "#")

    return step


def delete_queue(queue: str) -> Step:
    async def step(channel: aio_pika.abc.AbstractChannel) -> None:
        await channel.queue_delete(queue)

    return step


async def test_the_api_publishes_tasks_and_nothing_else(deployment: Deployment) -> None:
    """A task routing key is accepted; a forged result, a declare, a spy queue and a read
    of any queue are refused."""
    names, api = deployment.names, deployment.urls["api"]
    await attempt(api, publish(names.exchange, names.task_queue("claims", 3)))
    await refused(api, publish(names.exchange, names.result_key("claims")))
    await refused(api, publish(names.exchange, names.result_key("claims", urgent=True)))
    await refused(api, publish("", names.results))
    await refused(api, spy_on(names.exchange))
    await refused(api, consume(names.task_queue("claims", 3)))


async def test_a_worker_reads_its_own_queues_and_reports_only_its_component(
    deployment: Deployment,
) -> None:
    """claims workers consume claims queues and publish claims results; another component's
    queue, its results, the default exchange, a declare, a delete and a spy are refused."""
    names, worker = deployment.names, deployment.urls["worker-claims"]
    await attempt(worker, consume(names.task_queue("claims", 6)))
    await attempt(worker, publish(names.exchange, names.result_key("claims")))
    await attempt(worker, publish(names.dead_letters, names.dlq))
    tier = names.retry_tier(deployment.settings.retry_delays_ms()[0])
    await attempt(worker, publish(tier, names.task_queue("claims", 1)))
    await refused(worker, consume(names.task_queue("domain", 6)))
    await refused(worker, consume(names.results))
    await refused(worker, publish(names.exchange, names.result_key("domain")))
    await refused(worker, publish(names.exchange, names.task_queue("claims", 6)))
    await refused(worker, publish("", names.results))
    await refused(worker, delete_queue(names.task_queue("claims", 1)))
    await refused(worker, spy_on(names.exchange))


async def test_aggregators_read_results_only(deployment: Deployment) -> None:
    """Aggregators consume both results queues; tasks, the DLQ and publishing are refused."""
    names, aggregator = deployment.names, deployment.urls["aggregator"]
    await attempt(aggregator, consume(names.results))
    await attempt(aggregator, consume(names.urgent_results))
    await refused(aggregator, consume(names.task_queue("claims", 1)))
    await refused(aggregator, consume(names.dlq))
    await refused(aggregator, publish(names.exchange, names.result_key("claims")))
    await refused(aggregator, spy_on(names.exchange))


async def test_the_operator_browses_and_replays_the_dlq_and_nothing_else(
    deployment: Deployment, services: svc.Services
) -> None:
    """As the operator (not as another role): the DLQ is read, listed and replayed home (task
    and result keys), its queue stats come from the management API; any other queue, the
    dead-letter and retry exchanges, the default exchange, a declare, a delete and a spy are
    refused."""
    names, operator = deployment.names, deployment.urls["operator"]
    claims = names.task_queue("claims", 2)
    async with publisher_for(deployment.settings_of("worker-claims")) as publisher:
        await publisher.dead_letter(b"{}", {}, "invalid task: x", claims, 2)
    as_api = await connect(deployment.urls["api"], "test-not-operator")
    try:
        with pytest.raises(DeadLetterQueueError, match="use the operator role"):
            await list_letters(as_api, names, LetterFilter())
    finally:
        await as_api.close()
    connection = await connect(operator, "test-operator")
    try:
        listing = await list_letters(connection, names, LetterFilter())
        assert [x.origin for x in listing.letters] == [claims]
        outcome = await replay(connection, names, LetterFilter(), 10, 3)
        assert outcome.replayed == [listing.letters[0].id]
    finally:
        await connection.close()
    await attempt(operator, consume(names.dlq))
    await attempt(operator, publish(names.exchange, names.result_key("claims")))
    await refused(operator, consume(claims))
    await refused(operator, consume(names.results))
    await refused(operator, publish(names.dead_letters, names.dlq))
    await refused(
        operator, publish(names.retry_tier(deployment.settings.retry_delays_ms()[0]), claims)
    )
    await refused(operator, publish("", names.dlq))
    await refused(operator, delete_queue(names.dlq))
    await refused(operator, spy_on(names.exchange))
    base, _, _ = management_url(services.amqp_url, services.management_url)
    _, _, as_operator = management_url(operator, None)
    async with Management(base, as_operator) as api:
        path = f"/queues/{quote(deployment.vhost, safe='')}/{quote(claims)}"

        async def home() -> bool:  # the replayed letter; the broker's stats lag a few seconds
            stats = await api.get(path)
            return stats is not None and stats.get("messages") == 1

        await eventually(home, timeout=30, every=1)


async def test_provisioning_is_idempotent_and_drift_is_reported(
    deployment: Deployment,
) -> None:
    """A second provisioning changes nothing; a widened permission shows as drift."""
    api, vhost = deployment.management, deployment.vhost
    assert await access_drift(api, vhost, deployment.roles) == []
    worker = next(r for r in deployment.roles if r.role == "worker-claims")
    await api.put(
        f"/permissions/{quote(vhost, safe='')}/{quote(worker.user, safe='')}",
        {"configure": ".*", "write": ".*", "read": ".*"},
    )
    drift = await access_drift(api, vhost, deployment.roles)
    assert len(drift) == 1 and f"permissions of {worker.user}" in drift[0]


async def test_the_cli_provisions_verifies_and_exports_access(
    services: svc.Services, database_url: str
) -> None:
    """`verdict topology declare --access` creates vhost, users and permissions and declares as
    the topology role; `verify --access` then finds no drift; `export --access` carries
    password hashes and permissions, never a password."""
    prefix, vhost = svc.unique("acc"), svc.unique("verdict-test-")
    vhost_url = urlunsplit(urlsplit(services.amqp_url)._replace(path="/" + quote(vhost, safe="")))
    settings = make_settings(services, database_url, prefix, amqp_url=vhost_url)
    all_roles = roles(Names(prefix), settings.retry_delays_ms())
    passwords = {password_variable(r.role): secrets.token_urlsafe(12) for r in all_roles}
    base, _, auth = management_url(services.amqp_url, services.management_url)
    try:
        declared = verdict(settings, "topology", "declare", "--access", **passwords)
        assert declared.returncode == 0, declared.stderr
        verified = verdict(settings, "topology", "verify", "--access", **passwords)
        assert verified.returncode == 0, verified.stdout + verified.stderr
        exported = verdict(settings, "topology", "export", "--access", **passwords)
        document = json.loads(exported.stdout)
        assert {u["name"] for u in document["users"]} == {r.user for r in all_roles}
        assert not any(p in exported.stdout for p in passwords.values())
        assert {p["vhost"] for p in document["permissions"]} == {vhost}
        assert len(document["topic_permissions"]) == len(all_roles) - 2  # not topology, aggregator
        missing = verdict(settings, "topology", "export", "--access")
        assert missing.returncode != 0 and "no password for roles" in missing.stderr
    finally:
        async with Management(base, auth) as api:
            await api.delete(f"/vhosts/{quote(vhost, safe='')}")
            for r in all_roles:
                await api.delete(f"/users/{quote(r.user, safe='')}")


async def test_a_pipeline_of_least_privileged_roles_completes_sessions(
    deployment: Deployment, pool: Any
) -> None:
    """Each process on its own role's credentials — tasks published as the API, a retry, a
    poison message dead-lettered by a worker — and every session completes: the roles
    grant all that the pipeline does."""
    attempts: list[int] = []

    async def flaky(task: Any, ctx: Any) -> Analysis:
        if task.component == "claims":
            attempts.append(task.retry_count)
            if task.retry_count < 1:
                raise RetryableAnalysisError("upstream 503")
        return Analysis(10)

    workers = [
        Worker(deployment.settings_of(f"worker-{c}"), WorkerOptions(c, 2, 2), flaky).run
        for c in ANALYSIS_COMPONENTS
    ]
    aggregator = Aggregator(deployment.settings_of("aggregator"), explain=explain).run
    async with (
        publisher_for(deployment.settings_of("api")) as publisher,
        running(*workers, aggregator),
    ):
        sids = [await submit(pool, publisher, plan=p) for p in (1, 6)]
        await attempt(
            deployment.urls["api"],
            publish(deployment.names.exchange, deployment.names.task_queue("claims", 2)),
        )
        views = [await final_view(pool, sid) for sid in sids]
        letters = await eventually(lambda: dlq_messages(deployment.settings))
    assert [v.status for v in views] == ["completed", "completed"]
    assert sorted(attempts) == [0, 0, 1, 1]
    assert len(letters) == 1  # the poison (an empty JSON object), dead-lettered by the worker


@contextlib.asynccontextmanager
async def redis_users(
    services: svc.Services, prefix: str, components: tuple[str, ...]
) -> AsyncIterator[dict[str, str]]:
    """The Redis ACL users of these components' worker roles under `prefix`: a URL each."""
    wanted = [r for r in redis_roles(Keys(prefix)) if r.role in {f"worker-{c}" for c in components}]
    admin = Redis.from_url(services.redis_url)
    urls = {}
    try:
        for role in wanted:
            password = secrets.token_urlsafe(16)
            await admin.execute_command("ACL", "SETUSER", *setuser_arguments(role, password))
            component = role.role.removeprefix("worker-")
            urls[component] = as_user(services.redis_url, role.user, password)
        yield urls
    finally:
        for role in wanted:
            await admin.execute_command("ACL", "DELUSER", role.user)
        await admin.aclose()


async def test_a_process_of_two_components_holds_their_rights_and_no_others(
    deployment: Deployment, pool: Any, services: svc.Services, tmp_path: Path
) -> None:
    """`verdict worker --components techniques,claims` on each component's own credentials
    (COMPONENT_AMQP_URLS, COMPONENT_REDIS_URLS; AMQP_URL and REDIS_URL name no user at all):
    sessions complete with both components analysed by that process, whose broker
    connections log in as the two worker roles; with the credentials it holds, the domain
    queues cannot be consumed, a domain result cannot be published and a domain lock cannot
    be taken."""
    ours, names, prefix = ("techniques", "claims"), deployment.names, deployment.settings.key_prefix

    async def quick(task: Any, ctx: Any) -> Analysis:
        return Analysis(10)

    async with redis_users(services, prefix, ours) as redis_urls:
        group_settings = deployment.settings.model_copy(
            update={
                "amqp_url": with_credentials(deployment.urls["api"], "nobody", "wrong"),
                "redis_url": as_user(services.redis_url, "nobody", "wrong"),
                "component_amqp_urls": {c: deployment.urls[f"worker-{c}"] for c in ours},
                "component_redis_urls": redis_urls,
            }
        )
        log = tmp_path / "worker.log"
        process = start_worker(group_settings, log, "--components", ",".join(ours))
        others = [
            Worker(deployment.settings_of(f"worker-{c}"), WorkerOptions(c, 2, 2), quick).run
            for c in ("ai_tampered", "domain")
        ]
        aggregator = Aggregator(deployment.settings_of("aggregator"), explain=explain).run
        try:
            async with (
                publisher_for(deployment.settings_of("api")) as publisher,
                running(*others, aggregator),
            ):
                sids = [await submit(pool, publisher, plan=p) for p in (2, 5)]
                views = [await final_view(pool, sid, timeout=90) for sid in sids]
                users = await eventually(lambda: _worker_users(deployment, ours), 30)
            process.send_signal(signal.SIGTERM)
            assert await exited(process) == 0, log.read_text()
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        # What the process holds, tried on everything of another component.
        refusals = []
        for component in ours:
            url = deployment.urls[f"worker-{component}"]
            await refused(url, consume(names.task_queue("domain", 2)))
            await refused(url, publish(names.exchange, names.result_key("domain")))
            client = Redis.from_url(redis_urls[component])
            try:
                with pytest.raises(NoPermissionError):
                    await client.set(Keys(prefix).lock(sids[0], "domain"), "taken")
                refusals.append(component)
            finally:
                await client.aclose()
    assert [v.status for v in views] == ["completed", "completed"]
    assert all(set(v.results) == set(ANALYSIS_COMPONENTS) for v in views)
    assert all(v.results[c]["status"] == "ok" for v in views for c in ours)
    assert users["techniques"] == f"{names.prefix}-worker-techniques"
    assert users["claims"] == f"{names.prefix}-worker-claims"
    assert refusals == list(ours)


async def _worker_users(deployment: Deployment, components: tuple[str, ...]) -> dict[str, str]:
    """The user each worker connection of the vhost logged in as, by component, once the
    management API lists one for each of `components` (it lists connections a little late)."""
    connections = await deployment.management.get(
        f"/vhosts/{quote(deployment.vhost, safe='')}/connections"
    )
    users = {
        c["client_properties"]["connection_name"].split(":")[1]: c["user"]
        for c in connections or []
        if c.get("client_properties", {}).get("connection_name", "").startswith("worker:")
    }
    return users if set(components) <= set(users) else {}
