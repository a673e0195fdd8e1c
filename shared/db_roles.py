"""PostgreSQL roles: an owner that migrations run as, and an application role that is not a
superuser, creates nothing and holds only row access to the tables and the functions.

    role       login  owns                         may
    owner      yes    the database, every object   run migrations (DDL)
    app        yes    nothing                      SELECT/INSERT/UPDATE/DELETE rows, use
                                                   sequences, call functions

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

from shared.db import MIGRATIONS_TABLE

# PostgreSQL's own default iteration count for SCRAM-SHA-256 verifiers.
SCRAM_ITERATIONS = 4096


@dataclass(frozen=True)
class DatabaseRoles:
    """The two login roles of one database."""

    database: str
    owner: str
    app: str


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
    roles: DatabaseRoles, owner_password: str, app_password: str
) -> list[str]:
    """What the administrator runs, in order, after the roles exist (see `provision`)."""
    db, owner, app = _ident(roles.database), _ident(roles.owner), _ident(roles.app)
    return [
        f"ALTER ROLE {owner} WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE "
        f"PASSWORD {_literal(scram_verifier(owner_password))}",
        f"ALTER ROLE {app} WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT "
        f"PASSWORD {_literal(scram_verifier(app_password))}",
        f"ALTER DATABASE {db} OWNER TO {owner}",
        f"REVOKE ALL ON DATABASE {db} FROM PUBLIC",
        f"GRANT CONNECT, TEMPORARY ON DATABASE {db} TO {app}",
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
    ]


async def provision(
    admin_url: str, database_url: str, roles: DatabaseRoles, owner_password: str, app_password: str
) -> None:
    """Create (or bring up to date) both roles, the database and its ownership and grants.

    `admin_url` reaches the server as an administrator; `database_url` is the same
    administrator on the application's database, created here when missing."""
    admin = await asyncpg.connect(admin_url)
    try:
        for role in (roles.owner, roles.app):
            exists = await admin.fetchval("SELECT 1 FROM pg_roles WHERE rolname = $1", role)
            if not exists:
                await admin.execute(f"CREATE ROLE {_ident(role)}")
        found = await admin.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", roles.database)
        if not found:
            await admin.execute(f"CREATE DATABASE {_ident(roles.database)}")
        for statement in provisioning_statements(roles, owner_password, app_password):
            await admin.execute(statement)
    finally:
        await admin.close()
    in_database = await asyncpg.connect(database_url)
    try:
        for statement in schema_statements(roles):
            await in_database.execute(statement)
    finally:
        await in_database.close()
