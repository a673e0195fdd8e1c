"""`verdict`: one command line for every process and operator task."""

from __future__ import annotations

import asyncio
import contextlib
import faulthandler
import importlib
import io
import json
import logging
import os
import signal
import sys
import threading
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import click
import structlog
import uvloop

from shared import background
from shared.constants import AGGREGATOR_PREFETCH, QUEUE_COMPONENTS
from shared.errors import VerdictError
from shared.logging import configure
from shared.settings import SCOPES, Settings, is_placeholder, load_settings

if TYPE_CHECKING:
    from shared.dead_letter_queue import LetterFilter
    from topology.access import Role

T = TypeVar("T")

log = structlog.get_logger(__name__)


def _settings() -> Settings:
    try:
        settings = load_settings()
    except Exception as exc:  # pydantic's message names every missing variable
        raise click.ClickException(f"configuration: {exc}") from exc
    configure(settings.log_level, settings.log_json)
    return settings


def _check_shipped_data() -> None:
    """Stop at start, naming the file and field, when a shipped data file is broken."""
    from shared.errors import DataFileError
    from workers.analysis.shipped_data import check_shipped_data

    try:
        check_shipped_data()
    except DataFileError as exc:
        raise click.ClickException(str(exc)) from exc


def run_until_signalled(main: Callable[[asyncio.Event], Awaitable[None]]) -> None:
    """Run `main(stop)`; SIGTERM or SIGINT sets `stop` for a graceful exit."""

    async def runner() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        watchdog = asyncio.ensure_future(background.report_if_stuck(stop, STUCK_STOPPING_S))
        await main(stop)
        watchdog.cancel()
        await end_leftover_tasks(LEFTOVER_GRACE_S, asyncio.all_tasks() - {asyncio.current_task()})
        # Not the loop's own clean-up: it waits without limit for the default executor's
        # threads (a worker was seen logging "worker stopped" and then SIGKILLed 30 s later
        # by its container's stop, with nothing said in between).
        await exit_closed(0)

    try:
        uvloop.run(runner())  # libuv's loop: the same code for much less CPU per message
    except VerdictError as exc:
        raise click.ClickException(str(exc)) from exc
    # Past this point (an error) the process only has to exit: one still alive after
    # STUCK_EXIT_S is stuck on something (a thread, a child), and its stacks say what.
    faulthandler.dump_traceback_later(STUCK_EXIT_S)


# Seconds a stopped process may take to exit before it writes every thread's stack to stderr.
STUCK_EXIT_S = 10.0
# Seconds after SIGTERM at which a process still stopping logs every task's and thread's stack:
# past the workers' grace period, before the supervisor's SIGKILL (ops/supervisor.py).
STUCK_STOPPING_S = 35.0


# Background tasks still running when a process's main coroutine returns get this long to end
# once cancelled; the event loop's own clean-up would wait for them without limit.
LEFTOVER_GRACE_S = 5.0


async def end_leftover_tasks(grace_s: float, leftovers: set[asyncio.Task[Any]]) -> None:
    """Cancel the tasks `main` left running and wait for them, at most `grace_s`; one that
    will not end is logged with its stack and the process exits 1 (an unclean stop, said so,
    rather than a hang until the supervisor's SIGKILL)."""
    for task in leftovers:
        task.cancel()
    if not leftovers:
        return
    _, stuck = await asyncio.wait(leftovers, timeout=grace_s)
    if stuck:
        for task in stuck:
            stack = io.StringIO()
            task.print_stack(file=stack)
            log.error("task would not stop", task=repr(task), stack=stack.getvalue())
        logging.shutdown()
        os._exit(1)


class _Commands(click.Group):
    """The `verdict` group, with `factchecks` imported only when it runs: it pulls in the
    claims analysers (0.2 s), which every other command, a container's health check
    included, would pay at each start."""

    LAZY: ClassVar[dict[str, str]] = {"factchecks": "workers.analysis.cli"}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), *self.LAZY])

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.LAZY:
            module = importlib.import_module(self.LAZY[cmd_name])
            command: click.Command = getattr(module, cmd_name)
            return command
        return super().get_command(ctx, cmd_name)


@click.group(cls=_Commands)
def main() -> None:
    """verdict-pipeline: asynchronous content analysis on RabbitMQ, Redis and PostgreSQL."""


@main.group()
def topology() -> None:
    """Declare, verify or export the RabbitMQ topology."""


ACCESS_HELP = (
    "also the vhost, one user per role and their permissions (management API, as the "
    "administrator of RABBITMQ_MANAGEMENT_URL; passwords from RABBITMQ_PASSWORD_<ROLE>)"
)


@topology.command("declare")
@click.option("--access", is_flag=True, help=ACCESS_HELP)
def topology_declare(access: bool) -> None:
    """Declare every exchange, queue and binding (idempotent)."""
    from shared.broker import connect
    from shared.settings import broker_urls
    from topology.broker import declare
    from topology.spec import from_settings

    settings = _settings()

    async def go() -> None:
        url = await _when_broker_up(lambda: _provision(settings)) if access else settings.amqp_url
        urls = broker_urls(url, settings.amqp_hosts)
        connection = await _when_broker_up(lambda: connect(urls, "topology"))
        try:
            await declare(await connection.channel(), from_settings(settings))
        finally:
            await connection.close()

    _or_fail(go())
    click.echo(f"topology '{settings.topology_prefix}' declared")


@topology.command("provision")
def topology_provision() -> None:
    """Create the vhost AMQP_URL names, one user per role and their permissions (management
    API, as the administrator of RABBITMQ_MANAGEMENT_URL; passwords from RABBITMQ_PASSWORD_<ROLE>);
    idempotent. `declare` then runs as the topology role."""
    settings = _settings()
    _or_fail(_when_broker_up(lambda: _provision(settings)))
    click.echo(f"vhost and roles of '{settings.topology_prefix}' provisioned")


# How long a one-shot broker job waits for RabbitMQ (or its management API) to answer: a
# server starting beside it, or a name the container network does not resolve yet.
BROKER_WITHIN_S = 60.0
BROKER_RETRY_S = 1.0


async def _when_broker_up(attempt: Callable[[], Awaitable[T]]) -> T:
    """`attempt`, tried again every BROKER_RETRY_S while RabbitMQ cannot be reached, for up
    to BROKER_WITHIN_S (then its last error); any other failure at once."""
    from shared.errors import BrokerUnavailable, ManagementUnreachable

    loop = asyncio.get_running_loop()
    deadline = loop.time() + BROKER_WITHIN_S
    while True:
        try:
            return await attempt()
        except (BrokerUnavailable, ManagementUnreachable) as exc:
            if loop.time() + BROKER_RETRY_S > deadline:
                raise
            log.warning("RabbitMQ not answering yet, trying again", error=str(exc))
            await asyncio.sleep(BROKER_RETRY_S)


async def _provision(settings: Settings) -> str:
    """Provision the vhost, users and permissions; the AMQP URL of the topology role."""
    from topology.broker import management_url
    from topology.provision import Management, provision, vhost_of, with_credentials

    roles, passwords = _access(settings)
    base, _, auth = management_url(settings.amqp_url, settings.rabbitmq_management_url)
    async with Management(base, auth) as api:
        await provision(api, vhost_of(settings.amqp_url), roles, passwords)
    topology_role = roles[0]
    return with_credentials(settings.amqp_url, topology_role.user, passwords["topology"])


def _access(settings: Settings) -> tuple[tuple[Role, ...], dict[str, str]]:
    from shared.names import Names
    from topology.access import roles
    from topology.provision import passwords_from

    all_roles = roles(Names(settings.topology_prefix), settings.retry_delays_ms())
    return all_roles, passwords_from(os.environ, all_roles)


def _or_fail(work: Coroutine[Any, Any, object]) -> None:
    """Run `work`; a project error becomes a one-line message and exit status 1."""
    try:
        asyncio.run(work)
    except VerdictError as exc:
        raise click.ClickException(str(exc)) from exc


@topology.command("verify")
@click.option("--access", is_flag=True, help="also the vhost, users and permissions")
def topology_verify(access: bool) -> None:
    """Compare the live broker with the spec; exit 1 on any difference."""
    from topology.broker import verify
    from topology.spec import from_settings

    settings = _settings()
    drift: list[str] = []

    async def go() -> None:
        drift.extend(
            await verify(
                from_settings(settings), settings.amqp_url, settings.rabbitmq_management_url
            )
        )
        if access:
            drift.extend(await _access_drift(settings))

    _or_fail(go())
    for line in drift:
        click.echo(line)
    if drift:
        sys.exit(1)
    click.echo(f"topology '{settings.topology_prefix}' matches the spec")


async def _access_drift(settings: Settings) -> list[str]:
    from topology.broker import management_url
    from topology.provision import Management, access_drift, vhost_of

    roles, _ = _access(settings)
    base, _, auth = management_url(settings.amqp_url, settings.rabbitmq_management_url)
    async with Management(base, auth) as api:
        return await access_drift(api, vhost_of(settings.amqp_url), roles)


@topology.command("export")
@click.option(
    "--output", "-o", type=click.Path(path_type=Path), help="file to write (default: stdout)"
)
@click.option("--vhost", default=None, help="vhost (default: the one AMQP_URL names)")
@click.option(
    "--access", is_flag=True, help="also the vhost, users (password hashes) and permissions"
)
def topology_export(output: Path | None, vhost: str | None, access: bool) -> None:
    """Write a definitions file RabbitMQ can load at boot (load_definitions)."""
    from topology.broker import definitions
    from topology.provision import access_definitions, vhost_of
    from topology.spec import from_settings

    settings = _settings()
    vhost = vhost or vhost_of(settings.amqp_url)
    document = definitions(from_settings(settings), vhost)
    if access:
        try:
            document.update(access_definitions(vhost, *_access(settings)))
        except VerdictError as exc:
            raise click.ClickException(str(exc)) from exc
    text = json.dumps(document, indent=2)
    if output:
        output.write_text(text + "\n")
    else:
        click.echo(text)


@main.group()
def keys() -> None:
    """API keys: make one, or hash one for API_KEYS (only hashes are configured)."""


@keys.command("new")
@click.option("--tenant", required=True, help="tenant the key's sessions belong to")
@click.option("--plan", type=click.IntRange(1, 6), required=True, help="highest plan, 1..6")
@click.option(
    "--scope",
    "scopes",
    multiple=True,
    type=click.Choice(sorted(SCOPES)),
    help="a scope beyond the tenant's own sessions (admin: the console under /admin)",
)
def keys_new(tenant: str, plan: int, scopes: tuple[str, ...]) -> None:
    """Print a fresh key (give it to the client, once) and its API_KEYS entry (configure it)."""
    from shared.api_keys import key_hash, new_key

    key = new_key()
    grant: dict[str, object] = {"tenant": tenant, "plan": plan}
    if scopes:
        grant["scopes"] = sorted(set(scopes))
    click.echo(f"key: {key}")
    click.echo("API_KEYS entry: " + json.dumps({key_hash(key): grant}))


@keys.command("signing")
def keys_signing() -> None:
    """Print a fresh set of signing keys as environment lines: the task key pair and a result
    key per component (give each process only the ones its role needs: see the README)."""
    from shared.signing import new_signing_set

    for name, value in new_signing_set().items():
        click.echo(f"{name}='{value}'" if name == "RESULT_KEYS" else f"{name}={value}")


@keys.command("hash")
def keys_hash() -> None:
    """Print the hash API_KEYS stores for a key read from standard input (asked for without
    echo on a terminal), so the key stays out of shell history and the process list."""
    from shared.api_keys import key_hash

    on_terminal = sys.stdin.isatty()
    key = click.prompt("key", hide_input=True) if on_terminal else sys.stdin.read().strip()
    if not key:
        raise click.ClickException("no key given on standard input")
    click.echo(key_hash(key))


@main.group()
def access() -> None:
    """Per-role credentials on the stores: Redis ACL users."""


@access.command("redis")
@click.option("--apply", "apply_", is_flag=True, help="ACL SETUSER on the Redis of REDIS_URL")
@click.option(
    "--file",
    "path",
    type=click.Path(path_type=Path),
    help="write an ACL file Redis loads at start (`--aclfile`), with the default user off",
)
def access_redis(apply_: bool, path: Path | None) -> None:
    """Print an ACL file of the Redis roles (passwords as SHA-256), or apply them live.

    Passwords come from REDIS_PASSWORD_<ROLE>: API, AGGREGATOR, WORKER_<COMPONENT>.
    """
    from shared.keys import Keys
    from shared.redis_roles import (
        acl_file_line,
        password_variable,
        redis_roles,
        setuser_arguments,
    )

    settings = _settings()
    roles = redis_roles(Keys(settings.key_prefix))
    passwords = {r.role: os.environ.get(password_variable(r.role), "") for r in roles}
    missing = [
        password_variable(role) for role, pw in passwords.items() if not pw or is_placeholder(pw)
    ]
    if missing:
        raise click.ClickException(f"set {', '.join(missing)}")
    lines = [acl_file_line(role, passwords[role.role]) for role in roles]
    if path is not None:
        # No anonymous access: the default user is off, every client logs in as its role.
        path.write_text("\n".join(["user default off", *lines]) + "\n")
        path.chmod(0o644)  # Redis runs as its own user and must read it
        click.echo(f"{len(roles)} Redis users written to {path}")
        return
    if not apply_:
        for line in lines:
            click.echo(line)
        return
    if not settings.redis_url:
        raise click.ClickException(
            "REDIS_URL is not set: this deployment runs without Redis (PostgreSQL alone)"
        )

    async def go() -> None:
        from redis.asyncio import Redis

        redis = Redis.from_url(settings.redis_url)
        try:
            for role in roles:
                args = setuser_arguments(role, passwords[role.role])
                await redis.execute_command("ACL", "SETUSER", *args)
        finally:
            await redis.aclose()

    asyncio.run(go())
    click.echo(f"{len(roles)} Redis users set for prefix '{settings.key_prefix}'")


@main.group()
def db() -> None:
    """PostgreSQL schema."""


@db.command("migrate")
def db_migrate() -> None:
    """Apply pending migrations (advisory-locked; safe to run concurrently)."""
    from shared.db import migrate

    applied = asyncio.run(migrate(_settings().database_url))
    click.echo(f"applied {len(applied)} migration(s): {', '.join(applied) or 'none pending'}")


@db.command("prune")
@click.option(
    "--retention-days",
    type=click.IntRange(min=1),
    default=None,
    help="keep this many days before today (default: RETENTION_DAYS)",
)
def db_prune(retention_days: int | None) -> None:
    """Drop the day partitions past retention and make PARTITION_DAYS_AHEAD days ahead.

    Run as the owner (like migrate), e.g. daily: each partition is detached CONCURRENTLY,
    so reads and writes of the tables go on meanwhile.
    """
    from shared.partitions import prune_database

    settings = _settings()
    keep = settings.retention_days if retention_days is None else retention_days
    try:
        pruned = asyncio.run(
            prune_database(settings.database_url, keep, settings.partition_days_ahead)
        )
    except VerdictError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(
        f"dropped {len(pruned.dropped)} day(s): {', '.join(pruned.dropped) or 'none'};"
        f" {pruned.keys_deleted} idempotency key(s) deleted;"
        f" {pruned.created} partition(s) created ahead"
    )


@db.command("provision")
@click.option("--owner", default=None, help="owner role (default: <database>_owner)")
@click.option("--app", "app_role", default=None, help="application role (default: <database>_app)")
@click.option(
    "--worker", "worker_role", default=None, help="worker role (default: <database>_worker)"
)
def db_provision(owner: str | None, app_role: str | None, worker_role: str | None) -> None:
    """Create the owner, application and worker roles, the database and the grants
    (idempotent).

    Run as an administrator: DATABASE_URL names the administrator and the application's
    database. Passwords come from POSTGRES_OWNER_PASSWORD, POSTGRES_APP_PASSWORD and
    POSTGRES_WORKER_PASSWORD and are sent as SCRAM-SHA-256 verifiers; with
    POSTGRES_COMPONENT_PASSWORDS (JSON {"claims": "…", …}) each component named gets a
    worker role of its own, <worker>_<component>, that sees only its own task rows. Run it
    again after the migrations: the worker roles' grants need the tables.
    """
    from urllib.parse import unquote, urlsplit, urlunsplit

    from shared.db_roles import DatabaseRoles, component_role, provision

    url = _settings().database_url
    database = unquote(urlsplit(url).path.lstrip("/"))
    variables = ("POSTGRES_OWNER_PASSWORD", "POSTGRES_APP_PASSWORD", "POSTGRES_WORKER_PASSWORD")
    owner_pw, app_pw, worker_pw = passwords = [os.environ.get(v, "") for v in variables]
    if not database or not all(passwords) or any(map(is_placeholder, passwords)):
        raise click.ClickException(f"DATABASE_URL must name a database; set {', '.join(variables)}")
    per_component = _component_passwords(os.environ.get("POSTGRES_COMPONENT_PASSWORDS", ""))
    worker = worker_role or f"{database}_worker"
    roles = DatabaseRoles(
        database,
        owner or f"{database}_owner",
        app_role or f"{database}_app",
        worker,
        {component: component_role(worker, component) for component in per_component},
    )
    admin_url = urlunsplit(urlsplit(url)._replace(path="/postgres"))
    _or_fail(provision(admin_url, url, roles, owner_pw, app_pw, worker_pw, per_component))
    components = "".join(f", {role}" for role in roles.components.values())
    click.echo(
        f"database {database}: owner {roles.owner}, application role {roles.app}, "
        f"worker role {roles.worker}{components}"
    )


def _component_passwords(raw: str) -> dict[str, str]:
    """POSTGRES_COMPONENT_PASSWORDS: {component: password}, each a known component with a
    password that is not a placeholder."""
    if not raw:
        return {}
    try:
        given = json.loads(raw)
    except ValueError as exc:
        raise click.ClickException("POSTGRES_COMPONENT_PASSWORDS must be a JSON object") from exc
    if not isinstance(given, dict) or not all(isinstance(v, str) for v in given.values()):
        raise click.ClickException(
            'POSTGRES_COMPONENT_PASSWORDS must be a JSON object {"component": "password"}'
        )
    unknown = sorted(set(given) - set(QUEUE_COMPONENTS))
    if unknown:
        raise click.ClickException(f"POSTGRES_COMPONENT_PASSWORDS names unknown {unknown}")
    weak = sorted(c for c, pw in given.items() if not pw or is_placeholder(pw))
    if weak:
        raise click.ClickException(f"POSTGRES_COMPONENT_PASSWORDS: no real password for {weak}")
    return given


@main.command()
@click.option("--host", default=None, help="bind address (default: API_HOST)")
@click.option("--port", default=None, type=int, help="port (default: API_PORT)")
def api(host: str | None, port: int | None) -> None:
    """Serve the HTTP API (and its metrics on API_METRICS_PORT when set)."""
    from dispatcher.serving import ApiServer, serve_metrics, server_config

    settings = _settings()
    _check_shipped_data()
    serve_metrics(settings)
    # After its graceful shutdown uvicorn raises the signal it caught again, for the handler
    # that was there before it: with the default one the API would die of its SIGTERM instead
    # of exiting 0 like every other process. This one lets the command return.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda signum, frame: None)
    server = ApiServer(server_config(settings, host, port))

    async def serve() -> None:
        await server.serve()  # raises SystemExit itself when the start fails
        # What serving left running (a request's task, a background loop that outlived its
        # block) gets a bounded end instead of the loop's unbounded clean-up.
        await end_leftover_tasks(LEFTOVER_GRACE_S, asyncio.all_tasks() - {asyncio.current_task()})
        # A second signal skips the lifespan's shutdown; a failed one leaves it half done.
        lifespan = getattr(server, "lifespan", None)
        unclosed = server.force_exit or getattr(lifespan, "shutdown_failed", False)
        if unclosed:
            log.error("the API stopped without closing everything it opened")
        await exit_closed(1 if unclosed else 0)

    uvloop.run(serve())


# Seconds the default executor's threads (a file lookup of a media submission, a pool's
# join) get to finish before the process exits without them.
EXECUTOR_GRACE_S = 2.0


async def exit_closed(code: int) -> None:
    """Exit with `code` now, once the work is over and everything it opened is closed.

    The loop's own clean-up and the interpreter's exit would still wait, without limit, for
    whatever a library left behind (a thread stuck in the default executor, a non-daemon
    thread): the API was once seen logging "Finished server process" and then SIGKILLed 40 s
    later by its container's stop, with nothing said in between. The default executor gets
    `EXECUTOR_GRACE_S` to finish; a thread still running after that is named in the log and
    holds nothing.
    """
    with contextlib.suppress(asyncio.TimeoutError):
        async with asyncio.timeout(EXECUTOR_GRACE_S):
            await asyncio.get_running_loop().shutdown_default_executor()
    lingering = [
        t.name for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon
    ]
    if lingering:
        log.warning("threads still running at exit", threads=lingering)
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


@main.command()
@click.argument("component", required=False)
@click.option(
    "--components",
    default=None,
    metavar="A,B",
    help=f"several components in one process (of {', '.join(QUEUE_COMPONENTS)})",
)
@click.option("--concurrency", type=int, default=None, help="tasks run at once (of each component)")
@click.option("--prefetch", type=int, default=None, help="unacked deliveries per plan queue")
def worker(
    component: str | None, components: str | None, concurrency: int | None, prefetch: int | None
) -> None:
    """Consume the six plan queues of COMPONENT, or of each of --components in one process
    (each with its own concurrency and prefetch defaults)."""
    from shared import metrics
    from shared.errors import InvalidWorkerOptions
    from workers.group import WorkerGroup, components_asked, worker_options

    try:
        asked = components_asked(component, components)
    except InvalidWorkerOptions as exc:
        raise click.UsageError(str(exc)) from exc
    settings = _settings()
    _check_shipped_data()
    metrics.serve(settings.metrics_port, settings.metrics_host)
    group = WorkerGroup(settings, worker_options(asked, concurrency, prefetch))
    run_until_signalled(group.run)


@main.command()
@click.option("--prefetch", type=int, default=AGGREGATOR_PREFETCH, show_default=True)
def aggregator(prefetch: int) -> None:
    """Consume results, write verdicts, finalize overdue sessions."""
    from aggregator.service import Aggregator
    from shared import metrics

    settings = _settings()
    metrics.serve(settings.metrics_port, settings.metrics_host)
    run_until_signalled(Aggregator(settings, prefetch).run)


@main.group()
def tenants() -> None:
    """Settings per tenant, in PostgreSQL: components, verdict weights, review thresholds,
    rate limits, extra lexicon terms and domain lists. Each change bumps the tenant's
    version; the API picks it up at once."""


@tenants.command("list")
@click.option("--json", "as_json", is_flag=True, help="every tenant's settings as JSON")
def tenants_list(as_json: bool) -> None:
    """Tenants with settings of their own: name, version, last change, what they set."""
    from ops.tenants import listed

    records = _tenant_work(listed(_settings().database_url))
    if as_json:
        click.echo(json.dumps([r.as_json() for r in records], indent=2))
        return
    for r in records:
        keys = ", ".join(r.as_json()["settings"]) or "(nothing set)"
        click.echo(f"{r.tenant}\tversion {r.version}\t{r.updated_at:%Y-%m-%d %H:%M:%S}\t{keys}")


@tenants.command("show")
@click.argument("tenant")
def tenants_show(tenant: str) -> None:
    """One tenant's settings and version, as JSON."""
    from ops.tenants import shown

    click.echo(
        json.dumps(_tenant_work(shown(_settings().database_url, tenant)).as_json(), indent=2)
    )


@tenants.command("set")
@click.argument("tenant")
@click.argument("values", nargs=-1, metavar="KEY=VALUE...")
def tenants_set(tenant: str, values: tuple[str, ...]) -> None:
    """Set KEY=VALUE for TENANT (dotted keys reach into a section: review.plans=[5,6],
    verdict_weights.claims=2, lexicon_terms.loaded_language=plandemie,sheeple)."""
    from ops.tenants import keyless, set_values

    settings = _settings()

    record = _tenant_work(set_values(settings.database_url, tenant, values))
    click.echo(json.dumps(record.as_json(), indent=2))
    warning = keyless(tenant, settings.api_keys)
    if warning:
        click.echo(f"warning: {warning}", err=True)


@tenants.command("unset")
@click.argument("tenant")
@click.argument("keys", nargs=-1, metavar="KEY...")
def tenants_unset(tenant: str, keys: tuple[str, ...]) -> None:
    """Remove KEYs from TENANT's settings: they go back to the deployment's values."""
    from ops.tenants import unset_keys

    record = _tenant_work(unset_keys(_settings().database_url, tenant, keys))
    click.echo(json.dumps(record.as_json(), indent=2))


def _tenant_work(work: Coroutine[Any, Any, T]) -> T:
    """Run `work`; a refusal is a one-line message and exit status 1."""
    try:
        return asyncio.run(work)
    except VerdictError as exc:
        raise click.ClickException(str(exc)) from exc


@main.command()
@click.option(
    "--heartbeat", is_flag=True, help="also require a heartbeat from a process on this host"
)
def health(heartbeat: bool) -> None:
    """Exit 0 when RabbitMQ, Redis and PostgreSQL answer (compose health checks use this)."""
    from ops.health import check

    problems = asyncio.run(check(_settings(), heartbeat))
    for problem in problems:
        click.echo(problem, err=True)
    sys.exit(1 if problems else 0)


@main.command()
@click.option(
    "--compose",
    "compose_file",
    type=click.Path(exists=True, path_type=Path),
    default=Path("compose.yaml"),
    show_default=True,
)
@click.option(
    "--log-dir",
    type=click.Path(path_type=Path),
    default=None,
    help="write each process's log to a file here instead of the terminal",
)
@click.option(
    "--compact",
    is_flag=True,
    help="one process of each service and every worker component in one process "
    "(a laptop or a small machine)",
)
@click.option(
    "--transport",
    type=click.Choice(["rabbitmq", "postgres"]),
    default=None,
    help="what carries tasks and results (default: TRANSPORT, else rabbitmq); postgres runs "
    "the pipeline on PostgreSQL's job_queue table, with no broker",
)
def up(compose_file: Path, log_dir: Path | None, compact: bool, transport: str | None) -> None:
    """Run the application services of compose.yaml as local processes, replicas included."""
    from ops.supervisor import Supervisor, compact_plan, plan_for_transport, plan_from_compose

    if transport is not None:  # every process started inherits it
        os.environ["TRANSPORT"] = transport
    settings = _settings()  # fail early, with the message, if the environment is incomplete
    plan = plan_for_transport(plan_from_compose(compose_file), settings.transport)
    # METRICS_PORT is the first of a range: each replica gets its own port (metrics.json).
    supervisor = Supervisor(compact_plan(plan) if compact else plan, log_dir, settings.metrics_port)
    sys.exit(supervisor.run())


@main.group()
def dlq() -> None:
    """Browse, replay or purge the dead-letter queue (as OPERATOR_AMQP_URL's user, else
    AMQP_URL's)."""


def _age(ctx: click.Context, param: click.Parameter, value: str | None) -> float | None:
    from ops.dlq import parse_age

    if value is None:
        return None
    try:
        return parse_age(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from exc


def _letter_filters(command: Callable[..., None]) -> Callable[..., None]:
    """The options that choose letters, shared by list, replay and purge."""
    options = [
        click.option("--reason", default=None, help="reason contains this (any case)"),
        click.option("--component", default=None, help="letters of this component"),
        click.option("--tenant", default=None, help="letters of this tenant's sessions"),
        click.option(
            "--older-than", callback=_age, help="dead at least this long (90s, 15m, 2h, 1d)"
        ),
        click.option("--newer-than", callback=_age, help="dead at most this long"),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def _wanted(ids: tuple[str, ...] = (), **given: Any) -> LetterFilter:
    from shared.dead_letter_queue import LetterFilter

    return LetterFilter(
        reason=given["reason"],
        component=given["component"],
        tenant=given["tenant"],
        min_age_s=given["older_than"],
        max_age_s=given["newer_than"],
        ids=frozenset(ids),
    )


def _on_dlq(settings: Settings, work: Callable[..., Coroutine[Any, Any, T]]) -> T:
    """Run `work(connection, names)` as the operator; a project error is a one-line exit 1."""
    from ops.dlq import with_operator

    try:
        return asyncio.run(with_operator(settings, work))
    except VerdictError as exc:
        raise click.ClickException(str(exc)) from exc


def _scan_note(scanned: int, depth: int) -> None:
    if depth > scanned:
        click.echo(f"looked at the first {scanned} of {depth} letters (DLQ_SCAN_LIMIT)", err=True)


@dlq.command("list")
@_letter_filters
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="a JSON array instead of lines")
def dlq_list(limit: int, as_json: bool, **given: Any) -> None:
    """Show dead letters (id, age, origin, reason, attempt, replays, priority, size, preview),
    oldest first; they stay in the queue, in order."""
    from ops import dlq as ops_dlq

    settings = _settings()
    wanted = _wanted(**given)
    letters = ops_dlq.letters_of(settings)
    listing = _on_dlq(
        settings,
        lambda c, n: letters.list_letters(c, n, wanted, limit, settings.dlq_scan_limit),
    )
    if as_json:
        click.echo(ops_dlq.dumps([ops_dlq.as_json(letter) for letter in listing.letters]))
    else:
        click.echo(ops_dlq.HEADER_ROW)
        for letter in listing.letters:
            click.echo(ops_dlq.row(letter))
    click.echo(f"{len(listing.letters)} dead letter(s) shown of {listing.depth}", err=True)
    _scan_note(listing.scanned, listing.depth)


@dlq.command("show")
@click.argument("letter_id")
def dlq_show(letter_id: str) -> None:
    """Show one dead letter, headers and body included, as JSON; it stays in the queue."""
    from ops import dlq as ops_dlq

    settings = _settings()
    letters = ops_dlq.letters_of(settings)
    found = _on_dlq(settings, lambda c, n: letters.letter(c, n, letter_id, settings.dlq_scan_limit))
    if found is None:
        raise click.ClickException(
            f"no dead letter {letter_id} among the first {settings.dlq_scan_limit} of the DLQ"
        )
    click.echo(ops_dlq.dumps(ops_dlq.as_json(found)))


@dlq.command("replay")
@click.argument("ids", nargs=-1)
@_letter_filters
@click.option("--limit", type=click.IntRange(min=1), default=1000, show_default=True)
@click.option("--force", is_flag=True, help="also letters replayed DLQ_MAX_REPLAYS times (loops)")
def dlq_replay(ids: tuple[str, ...], limit: int, force: bool, **given: Any) -> None:
    """Send the letters with these IDS, or matching the filters (all when none), back to
    their origin queue at their priority, as a first attempt with a replay counted."""
    from ops.dlq import letters_of

    settings = _settings()
    wanted = _wanted(ids, **given)
    letters = letters_of(settings)
    outcome = _on_dlq(
        settings,
        lambda c, n: letters.replay(
            c,
            n,
            wanted,
            limit,
            settings.dlq_max_replays,
            force=force,
            scan=settings.dlq_scan_limit,
        ),
    )
    click.echo(f"replayed {len(outcome.replayed)} dead letter(s)")
    if outcome.refused_loops:
        click.echo(
            f"refused {len(outcome.refused_loops)} loop(s), replayed "
            f"{settings.dlq_max_replays} times already (--force replays them): "
            + " ".join(outcome.refused_loops)
        )
    if outcome.unroutable:
        click.echo(
            f"left {len(outcome.unroutable)} with no origin queue to take them: "
            + " ".join(outcome.unroutable)
        )
    _scan_note(outcome.scanned, outcome.depth)


@dlq.command("purge")
@click.argument("ids", nargs=-1)
@_letter_filters
@click.option("--yes", is_flag=True, help="really delete them (without it: only count)")
def dlq_purge(ids: tuple[str, ...], yes: bool, **given: Any) -> None:
    """Delete the letters with these IDS, or matching the filters (all when none). Without
    --yes nothing is deleted: it says how many would go and exits 1."""
    from ops.dlq import letters_of

    settings = _settings()
    wanted = _wanted(ids, **given)
    scan = settings.dlq_scan_limit
    letters = letters_of(settings)
    if not yes:
        listing = _on_dlq(settings, lambda c, n: letters.list_letters(c, n, wanted, scan, scan))
        raise click.ClickException(
            f"would purge {len(listing.letters)} dead letter(s); run again with --yes"
        )
    purged = _on_dlq(settings, lambda c, n: letters.purge(c, n, wanted, scan))
    click.echo(f"purged {purged} dead letter(s)")


if __name__ == "__main__":
    main()
