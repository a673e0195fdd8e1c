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

A role per component (`<worker>_<component>`, provisioned when its password is given) has the
worker role's rights with the task rows of its own component only: a worker started with it
(COMPONENT_DATABASE_URLS) can neither see, claim nor settle another component's tasks, as
each component's broker user reads only its own queues.

Provisioning runs once as an administrator (a superuser or a role with CREATEROLE) and is
idempotent. Passwords are sent as SCRAM-SHA-256 verifiers computed here, so the server (and
its statement log) never sees them in plain text.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
from dataclasses import dataclass, field

from shared.constants import MIGRATION_LOCK_KEY, QUEUE_COMPONENTS
from shared.db import MIGRATIONS_TABLE, connect_when_up

# PostgreSQL's own default iteration count for SCRAM-SHA-256 verifiers.
SCRAM_ITERATIONS = 4096


@dataclass(frozen=True)
class DatabaseRoles:
    """The login roles of one database: owner, app and worker, and the component roles
    named in `components` (component → role)."""

    database: str
    owner: str
    app: str
    worker: str
    components: dict[str, str] = field(default_factory=dict)

    def workers(self) -> dict[str, tuple[str, ...]]:
        """Each worker role and the components whose task rows it serves."""
        return {
            self.worker: QUEUE_COMPONENTS,
            **{role: (component,) for component, role in self.components.items()},
        }


def component_role(worker: str, component: str) -> str:
    """The name of `component`'s own worker role."""
    return f"{worker}_{component}"


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
    roles: DatabaseRoles,
    owner_password: str,
    app_password: str,
    worker_password: str,
    component_passwords: dict[str, str] | None = None,
) -> list[str]:
    """What the administrator runs, in order, after the roles exist (see `provision`)."""
    db, owner, app = _ident(roles.database), _ident(roles.owner), _ident(roles.app)
    passwords = {
        roles.worker: worker_password,
        **{roles.components[c]: pw for c, pw in (component_passwords or {}).items()},
    }
    statements = [
        f"ALTER ROLE {owner} WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE "
        f"PASSWORD {_literal(scram_verifier(owner_password))}",
        f"ALTER ROLE {app} WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT "
        f"PASSWORD {_literal(scram_verifier(app_password))}",
        f"ALTER DATABASE {db} OWNER TO {owner}",
        f"REVOKE ALL ON DATABASE {db} FROM PUBLIC",
        f"GRANT CONNECT, TEMPORARY ON DATABASE {db} TO {app}",
    ]
    for role in roles.workers():
        statements += [
            f"ALTER ROLE {_ident(role)} WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE "
            f"NOINHERIT PASSWORD {_literal(scram_verifier(passwords[role]))}",
            f"GRANT CONNECT ON DATABASE {db} TO {_ident(role)}",
        ]
    return statements


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
        *(f"GRANT USAGE ON SCHEMA public TO {_ident(role)}" for role in roles.workers()),
    ]


# What a worker reads, by table: the columns, or None for the whole row. Granted once the
# tables exist (after the migrations), so `provision` runs again after `migrate`.
WORKER_READS: dict[str, tuple[str, ...] | None] = {
    # `day` names the partition of a session's rows (migration 008): lookups by id need it.
    "sessions": ("id", "day", "status"),
    "component_results": ("session_id", "day", "component"),
    "fact_checks": None,
}


def task_queue_rule(components: tuple[str, ...]) -> str:
    """The table transport's rows a worker of `components` may read and claim: tasks only, in
    queues named `{prefix}.{component}.{plan}` (never results, nor dead letters)."""
    return "queue ~ '\\.(" + "|".join(components) + ")\\.[1-6]$'"


def worker_statements(roles: DatabaseRoles, existing: set[str]) -> list[str]:
    """Each worker role's column grants on those of its tables that exist, and its rows of
    the table transport's queue and of ephemera (row-level security: the app role sees every
    row)."""
    statements = []
    for role in roles.workers():
        for table, columns in WORKER_READS.items():
            if table not in existing:
                continue
            what = "SELECT" if columns is None else f"SELECT ({', '.join(map(_ident, columns))})"
            statements.append(f"GRANT {what} ON TABLE {_ident(table)} TO {_ident(role)}")
    if "job_queue" in existing:
        statements += job_queue_statements(roles)
    if "ephemera" in existing:
        statements += ephemera_statements(roles)
    return statements


def worker_ephemera_rule(components: tuple[str, ...]) -> str:
    """The ephemera a worker of `components` keeps without Redis (shared/house.py): any
    heartbeat of the registry (a process's record names all its components) and the attempts
    of its components' tasks (`{prefix}:attempts:{session}:{component}`), as its Redis user
    may — never a console sign-out or a rate-limit window (nor a media text: without Redis
    none is cached, House.media_cache)."""
    return "key ~ '^[^:]+:(workers:.*|attempts:[^:]+:(" + "|".join(components) + "))$'"


def ephemera_statements(roles: DatabaseRoles) -> list[str]:
    """Without Redis the worker roles read and write only their own kinds of ephemera (as a
    worker's Redis user may only write its keys); the app role, every kind."""
    policies = {"ephemera_app": f"TO {_ident(roles.app)} USING (true) WITH CHECK (true)"}
    served = roles.workers()
    for name, role in _worker_policy_names(roles):
        rule = worker_ephemera_rule(served[role])
        policies[f"ephemera_{name}"] = f"TO {_ident(role)} USING ({rule}) WITH CHECK ({rule})"
    return row_security("ephemera", list(served), policies)


def _worker_policy_names(roles: DatabaseRoles) -> list[tuple[str, str]]:
    """(policy name part, role) of each worker role: `worker`, `worker_<component>`."""
    return [("worker", roles.worker)] + [
        (f"worker_{component}", role) for component, role in sorted(roles.components.items())
    ]


def job_queue_statements(roles: DatabaseRoles) -> list[str]:
    """On the table transport a worker claims, renews and settles task rows and publishes
    rows (results, retries, dead letters, follow-up tasks), but reads no result and no row
    of the DLQ queue (it does see task rows dead-lettered where they were: rejected unread
    or expired, tasks it could have claimed). Results are signed and tasks too, so what it
    may insert it cannot forge. A component's role reads and settles its component's task
    rows only; the worker role, any component's (like a broker user of each component, it
    could settle a task without running it)."""
    policies = {"job_queue_app": f"TO {_ident(roles.app)} USING (true) WITH CHECK (true)"}
    served = roles.workers()
    for name, role in _worker_policy_names(roles):
        tasks = task_queue_rule(served[role])
        who = _ident(role)
        policies |= {
            # Task rows in any state: a row rejected unread stays a task row, in status error.
            f"job_queue_{name}_reads": f"FOR SELECT TO {who} USING ({tasks})",
            # A row rejected unread (oversize) becomes a dead letter where it is.
            f"job_queue_{name}_settles": (
                f"FOR UPDATE TO {who} USING (status <> 'error' AND {tasks}) WITH CHECK ({tasks})"
            ),
            f"job_queue_{name}_publishes": (
                f"FOR INSERT TO {who} WITH CHECK (status IN ('pending', 'retry', 'error'))"
            ),
        }
    workers = ", ".join(map(_ident, served))
    # Whether the DLQ has room (migration 014): a worker sees no dead letter to count.
    room = (
        "DO $$ BEGIN IF to_regprocedure('job_queue_dlq_room(text, text, bigint, bigint, bigint)')"
        " IS NOT NULL THEN GRANT EXECUTE ON FUNCTION"
        f" job_queue_dlq_room(text, text, bigint, bigint, bigint) TO {workers}; END IF; END $$"
    )
    return [*row_security("job_queue", list(served), policies), room]


def row_security(table: str, workers: list[str], policies: dict[str, str]) -> list[str]:
    """The `workers` may select, insert and update rows of `table` as far as `policies` let
    them (each made anew: provisioning is idempotent)."""
    statements = [
        f"GRANT SELECT, INSERT, UPDATE ON TABLE {table} TO {', '.join(map(_ident, workers))}",
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
    component_passwords: dict[str, str] | None = None,
) -> None:
    """Create (or bring up to date) the roles, the database and its ownership and grants;
    `component_passwords` for the roles named in `roles.components`.

    `admin_url` reaches the server as an administrator; `database_url` is the same
    administrator on the application's database, created here when missing."""
    admin = await connect_when_up(admin_url)
    try:
        for role in (roles.owner, roles.app, *roles.workers()):
            exists = await admin.fetchval("SELECT 1 FROM pg_roles WHERE rolname = $1", role)
            if not exists:
                await admin.execute(f"CREATE ROLE {_ident(role)}")
        found = await admin.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", roles.database)
        if not found:
            await admin.execute(f"CREATE DATABASE {_ident(roles.database)}")
        statements = provisioning_statements(
            roles, owner_password, app_password, worker_password, component_passwords
        )
        for statement in statements:
            await admin.execute(statement)
    finally:
        await admin.close()
    in_database = await connect_when_up(database_url)
    try:
        # The migrations' lock: a migration running meanwhile (a deployment's jobs started
        # together) would otherwise race these statements on the same catalog rows and one
        # of the two fail with "tuple concurrently updated". Released with the connection.
        await in_database.execute("SELECT pg_advisory_lock($1)", MIGRATION_LOCK_KEY)
        for statement in schema_statements(roles):
            await in_database.execute(statement)
        tables = await in_database.fetch(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
        )
        for statement in worker_statements(roles, {t["tablename"] for t in tables}):
            await in_database.execute(statement)
    finally:
        await in_database.close()
