"""PostgreSQL access: the pool and the numbered SQL migrations."""

from __future__ import annotations

import asyncio
import json
from importlib import resources

import asyncpg
import structlog

from shared.constants import MIGRATION_LOCK_KEY

log = structlog.get_logger(__name__)


async def _init_connection(conn: asyncpg.Connection) -> None:
    for jtype in ("json", "jsonb"):
        await conn.set_type_codec(
            jtype, encoder=json.dumps, decoder=json.loads, schema="pg_catalog"
        )


# Errors that mean "Postgres is away or restarting", not "Postgres refused this statement":
# whoever meets one waits and tries again; nothing is dead-lettered for it. A server shutting
# down (fast or crashed) ends its sessions with 57P01/57P02, a starting one answers 57P03, and a
# server out of connections, memory or disk answers 53xxx.
UNAVAILABLE: tuple[type[BaseException], ...] = (
    OSError,
    asyncpg.InterfaceError,
    asyncpg.PostgresConnectionError,
    asyncpg.exceptions.OperatorInterventionError,
    asyncpg.exceptions.InsufficientResourcesError,
)


# Every statement is planned for its arguments. A generic plan, cached by a long-lived
# connection when the tables were nearly empty, is kept until the next ANALYZE: on a fresh
# database it made the fan-in several times slower once the tables had grown (migration 004).
SERVER_SETTINGS = {"plan_cache_mode": "force_custom_plan"}
# A connection a burst opened is closed after this long unused (asyncpg's default is five
# minutes): a pipeline of a dozen processes gives the server's connections back soon after
# the burst, not the whole of it at once five minutes later.
IDLE_CONNECTION_S = 60.0


async def _keep_session(conn: asyncpg.Connection) -> None:
    """What a connection given back to the pool runs: nothing on the server.

    asyncpg's default sends `pg_advisory_unlock_all(); CLOSE ALL; UNLISTEN *; RESET ALL` on
    every release, one more round trip (and transaction) per use of the pool. No pooled
    connection here holds session state for it to clear: advisory locks and settings are
    taken per transaction (`pg_advisory_xact_lock`, `set_config(…, true)`), LISTEN has its
    own connection (shared.listener) and no cursor outlives its transaction. A transaction
    left open is still rolled back by asyncpg before this runs."""


async def create_pool(database_url: str, *, min_size: int = 0, max_size: int = 10) -> asyncpg.Pool:
    """A pool whose connections read and write json/jsonb as Python objects.

    No connection is opened up front (min_size 0): a process starts while Postgres is away
    and its handlers retry, instead of crashing at start-up.
    """
    return await asyncpg.create_pool(
        database_url,
        min_size=min_size,
        max_size=max_size,
        init=_init_connection,
        reset=_keep_session,
        server_settings=SERVER_SETTINGS,
        max_inactive_connection_lifetime=IDLE_CONNECTION_S,
    )


# Which migrations ran. Owned by the migrating role and hidden from the application's role.
MIGRATIONS_TABLE = (
    "CREATE TABLE IF NOT EXISTS schema_migrations ("
    " version integer PRIMARY KEY, name text NOT NULL,"
    " applied_at timestamptz NOT NULL DEFAULT now())"
)


def migration_files() -> list[tuple[int, str, str]]:
    """(version, name, sql) of every shipped migration, in order."""
    found = []
    for entry in resources.files("shared.migrations").iterdir():
        if entry.name.endswith(".sql"):
            version = int(entry.name.split("_", 1)[0])
            found.append((version, entry.name, entry.read_text()))
    return sorted(found)


# How long a one-shot job (migrate, provision) waits for its database to answer: a server
# starting or restarting beside it, or its name not yet resolvable on a container network.
CONNECT_WITHIN_S = 60.0
CONNECT_RETRY_S = 1.0


async def connect_when_up(
    database_url: str, within_s: float = CONNECT_WITHIN_S
) -> asyncpg.Connection:
    """A connection, tried again every CONNECT_RETRY_S while the server is away (UNAVAILABLE:
    refused, unresolvable, starting, full) until `within_s` has passed; then its last error."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within_s
    while True:
        try:
            return await asyncpg.connect(database_url)
        except UNAVAILABLE as exc:
            if loop.time() + CONNECT_RETRY_S > deadline:
                raise
            log.warning("database not answering yet, trying again", error=repr(exc))
            await asyncio.sleep(CONNECT_RETRY_S)


async def migrate(database_url: str) -> list[str]:
    """Apply the migrations not applied yet; safe to run twice and from two processes at once."""
    conn = await connect_when_up(database_url)
    try:
        # A session-level advisory lock serialises concurrent migrators; the loser then
        # finds everything applied and does nothing.
        await conn.execute("SELECT pg_advisory_lock($1)", MIGRATION_LOCK_KEY)
        try:
            return await _apply_pending(conn)
        finally:
            await conn.execute("SELECT pg_advisory_unlock($1)", MIGRATION_LOCK_KEY)
    finally:
        await conn.close()


async def _apply_pending(conn: asyncpg.Connection) -> list[str]:
    await conn.execute(MIGRATIONS_TABLE)
    done = {r["version"] for r in await conn.fetch("SELECT version FROM schema_migrations")}
    applied = []
    for version, name, sql in migration_files():
        if version in done:
            continue
        async with conn.transaction():
            await conn.execute(sql)
            await conn.execute(
                "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", version, name
            )
        log.info("migration applied", migration=name)
        applied.append(name)
    return applied
