"""PostgreSQL roles: an owner that migrations run as, an application role for the API and the
aggregators, and a worker role that may read only what a worker needs.

    role       login  owns                         may
    owner      yes    the database, every object   run migrations (DDL)
    app        yes    nothing                      SELECT/INSERT/UPDATE/DELETE rows, use
                                                   sequences, call functions
    worker     yes    nothing                      read a session's status and which of its
                                                   components have a result (not their
                                                   content), read the fact checks

A worker's credentials can therefore neither read other tenants' content or verdicts nor
write anything: results reach the record only through the aggregators, which check their
signatures. On the table transport (TRANSPORT=postgres) the worker role also claims and
settles task rows of `job_queue` and inserts rows there, and sees none of its result or
dead-letter rows (row-level security, `job_queue_statements`).

Provisioning runs once as an administrator (a superuser or a role with CREATEROLE) and is
idempotent. Passwords are sent as SCRAM-SHA-256 verifiers computed here, so the server (and
its statement log) never sees them in plain text.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
from dataclasses import dataclass

import asyncpg

from shared.constants import QUEUE_COMPONENTS
from shared.db import MIGRATIONS_TABLE

# PostgreSQL's own default iteration count for SCRAM-SHA-256 verifiers.
SCRAM_ITERATIONS = 4096


@dataclass(frozen=True)
class DatabaseRoles:
    """The two login roles of one database."""

    database: str
    owner: str
    app: str
    worker: str


def scram_verifier(
    password: str, salt: bytes | None = None, iterations: int = SCRAM_ITERATIONS
) -> str:
    """The SCRAM-SHA-256 verifier PostgreSQL stores for `password` (RFC 5802 / 7677)."""
    salt = os.urandom(16) if salt is None else salt
    salted = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, iterations)
    client_key = hmac.new(salted, b"Client Key", hashlib.sha256).digest()
    stored_key = hashlib.sha256(client_key).digest()
    server_key = hmac.new(salted, b"Server Key", hashlib.sha256).digest()
    b64 = base64.b64encode
    return (
        f"SCRAM-SHA-256${iterations}:{b64(salt).decode()}"
        f"${b64(stored_key).decode()}:{b64(server_key).decode()}"
    )


def _ident(name: str) -> str:
    """A quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    """A quoted SQL string literal (verifiers are base64 and `$`, never a quote)."""
    return "'" + text.replace("'", "''") + "'"


def provisioning_statements(
    roles: DatabaseRoles, owner_password: str, app_password: str, worker_password: str
) -> list[str]:
    """What the administrator runs, in order, after the roles exist (see `provision`)."""
    db, owner, app = _ident(roles.database), _ident(roles.owner), _ident(roles.app)
    worker = _ident(roles.worker)
    return [
        f"ALTER ROLE {owner} WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE "
        f"PASSWORD {_literal(scram_verifier(owner_password))}",
        f"ALTER ROLE {app} WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT "
        f"PASSWORD {_literal(scram_verifier(app_password))}",
        f"ALTER DATABASE {db} OWNER TO {owner}",
        f"REVOKE ALL ON DATABASE {db} FROM PUBLIC",
        f"GRANT CONNECT, TEMPORARY ON DATABASE {db} TO {app}",
        f"ALTER ROLE {worker} WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT "
        f"PASSWORD {_literal(scram_verifier(worker_password))}",
        f"GRANT CONNECT ON DATABASE {db} TO {worker}",
    ]


def schema_statements(roles: DatabaseRoles) -> list[str]:
    """Run in the database itself: the owner owns the schema; the app may use, not create.

    The migrations table is made before the default privileges, so it never gets them, and
    the grant on what exists is taken back from it: the app cannot rewrite which migrations
    ran."""
    owner, app = _ident(roles.owner), _ident(roles.app)
    grants = "SELECT, INSERT, UPDATE, DELETE"
    return [
        f"ALTER SCHEMA public OWNER TO {owner}",
        MIGRATIONS_TABLE,
        f"ALTER TABLE schema_migrations OWNER TO {owner}",
        "REVOKE CREATE ON SCHEMA public FROM PUBLIC",
        f"GRANT USAGE ON SCHEMA public TO {app}",
        # Objects the owner's migrations create later, and those that exist already.
        f"ALTER DEFAULT PRIVILEGES FOR ROLE {owner} IN SCHEMA public "
        f"GRANT {grants} ON TABLES TO {app}",
        f"ALTER DEFAULT PRIVILEGES FOR ROLE {owner} IN SCHEMA public "
        f"GRANT USAGE, SELECT ON SEQUENCES TO {app}",
        f"ALTER DEFAULT PRIVILEGES FOR ROLE {owner} IN SCHEMA public "
        f"GRANT EXECUTE ON FUNCTIONS TO {app}",
        f"GRANT {grants} ON ALL TABLES IN SCHEMA public TO {app}",
        f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {app}",
        f"GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA public TO {app}",
        f"REVOKE ALL ON TABLE schema_migrations FROM {app}",
        f"GRANT USAGE ON SCHEMA public TO {_ident(roles.worker)}",
    ]


# What a worker reads, by table: the columns, or None for the whole row. Granted once the
# tables exist (after the migrations), so `provision` runs again after `migrate`.
WORKER_READS: dict[str, tuple[str, ...] | None] = {
    # `day` names the partition of a session's rows (migration 008): lookups by id need it.
    "sessions": ("id", "day", "status"),
    "component_results": ("session_id", "day", "component"),
    "fact_checks": None,
}


# The table transport's rows a worker may read and claim: tasks only, in queues named
# `{prefix}.{component}.{plan}` (never results, nor dead letters).
TASK_QUEUE = "queue ~ '\\.(" + "|".join(QUEUE_COMPONENTS) + ")\\.[1-6]$'"
TASK_ROW = f"(status <> 'error' AND {TASK_QUEUE})"


def worker_statements(roles: DatabaseRoles, existing: set[str]) -> list[str]:
    """The worker role's column grants on those of its tables that exist, and its rows of
    the table transport's queue (row-level security: the app role sees every row)."""
    worker = _ident(roles.worker)
    statements = []
    for table, columns in WORKER_READS.items():
        if table not in existing:
            continue
        what = "SELECT" if columns is None else f"SELECT ({', '.join(map(_ident, columns))})"
        statements.append(f"GRANT {what} ON TABLE {_ident(table)} TO {worker}")
    if "job_queue" in existing:
        statements += job_queue_statements(roles)
    if "ephemera" in existing:
        statements += ephemera_statements(roles)
    return statements


# The ephemera a worker writes without Redis (shared/house.py): its heartbeat and the attempts
# of its tasks — never a console sign-out or a rate-limit window (nor a media text: without
# Redis none is cached, House.media_cache).
WORKER_EPHEMERA = "key ~ '^[^:]+:(workers|attempts):'"


def ephemera_statements(roles: DatabaseRoles) -> list[str]:
    """Without Redis the worker role reads and writes only its own kinds of ephemera (as its
    Redis user may only write its keys); the app role, every kind."""
    worker, app = _ident(roles.worker), _ident(roles.app)
    policies = {
        "ephemera_app": f"TO {app} USING (true) WITH CHECK (true)",
        "ephemera_worker": f"TO {worker} USING ({WORKER_EPHEMERA}) WITH CHECK ({WORKER_EPHEMERA})",
    }
    return row_security("ephemera", worker, policies)


def job_queue_statements(roles: DatabaseRoles) -> list[str]:
    """On the table transport a worker claims, renews and settles task rows and publishes
    rows (results, retries, dead letters, follow-up tasks), but reads no result and no row
    of the DLQ queue (it does see task rows dead-lettered where they were: rejected unread
    or expired, tasks it could have claimed). Results are signed and tasks too, so what it
    may insert it cannot forge. Like a broker user of any one component, it could settle a
    task without running it; unlike one, any component's."""
    worker, app = _ident(roles.worker), _ident(roles.app)
    policies = {
        "job_queue_app": f"TO {app} USING (true) WITH CHECK (true)",
        # Task rows in any state: a row rejected unread stays a task row, in status error.
        "job_queue_worker_reads": f"FOR SELECT TO {worker} USING ({TASK_QUEUE})",
        "job_queue_worker_settles": (
            # A row rejected unread (oversize) becomes a dead letter where it is.
            f"FOR UPDATE TO {worker} USING {TASK_ROW} WITH CHECK ({TASK_QUEUE})"
        ),
        "job_queue_worker_publishes": (
            f"FOR INSERT TO {worker} WITH CHECK (status IN ('pending', 'retry', 'error'))"
        ),
    }
    return row_security("job_queue", worker, policies)


def row_security(table: str, worker: str, policies: dict[str, str]) -> list[str]:
    """The worker may select, insert and update rows of `table` as far as `policies` let it
    (each made anew: provisioning is idempotent)."""
    statements = [
        f"GRANT SELECT, INSERT, UPDATE ON TABLE {table} TO {worker}",
        f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY",
    ]
    for name, rule in policies.items():
        statements.append(f"DROP POLICY IF EXISTS {name} ON {table}")
        statements.append(f"CREATE POLICY {name} ON {table} {rule}")
    return statements


async def provision(
    admin_url: str,
    database_url: str,
    roles: DatabaseRoles,
    owner_password: str,
    app_password: str,
    worker_password: str,
) -> None:
    """Create (or bring up to date) both roles, the database and its ownership and grants.

    `admin_url` reaches the server as an administrator; `database_url` is the same
    administrator on the application's database, created here when missing."""
    admin = await asyncpg.connect(admin_url)
    try:
        for role in (roles.owner, roles.app, roles.worker):
            exists = await admin.fetchval("SELECT 1 FROM pg_roles WHERE rolname = $1", role)
            if not exists:
                await admin.execute(f"CREATE ROLE {_ident(role)}")
        found = await admin.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", roles.database)
        if not found:
            await admin.execute(f"CREATE DATABASE {_ident(roles.database)}")
        statements = provisioning_statements(roles, owner_password, app_password, worker_password)
        for statement in statements:
            await admin.execute(statement)
    finally:
        await admin.close()
    in_database = await asyncpg.connect(database_url)
    try:
        for statement in schema_statements(roles):
            await in_database.execute(statement)
        tables = await in_database.fetch(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
        )
        for statement in worker_statements(roles, {t["tablename"] for t in tables}):
            await in_database.execute(statement)
    finally:
        await in_database.close()
