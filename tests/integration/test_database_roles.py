"""PostgreSQL roles on a server the test owns, with scram-sha-256 for every TCP login: the
application role does the pipeline's work and nothing more; migrations run as the owner."""

from __future__ import annotations

import asyncpg
import pytest

from aggregator.explanation import explain
from aggregator.fanin import record_results
from shared import sessions
from shared.db import create_pool, migrate
from shared.db_roles import DatabaseRoles, provision, scram_verifier
from shared.messages import Result, now_ms
from shared.sessions import NewSession
from tests.cli import verdict
from tests.conftest import make_settings
from tests.owned_postgres import owned_postgres

pytestmark = pytest.mark.integration

ROLES = DatabaseRoles("verdict", "verdict_owner", "verdict_app")
WEIGHTS = {"techniques": 1.0}


def test_a_scram_verifier_has_postgres_layout():
    """SCRAM-SHA-256$iterations:salt$StoredKey:ServerKey, and a fresh salt each time."""
    verifier = scram_verifier("pw", salt=b"0123456789abcdef")
    assert verifier.startswith("SCRAM-SHA-256$4096:MDEyMzQ1Njc4OWFiY2RlZg==$")
    assert scram_verifier("pw") != scram_verifier("pw")


async def test_the_app_role_works_rows_and_nothing_else(services, database_url):
    """Provisioned twice (`verdict db provision`, then again), migrated as the owner: the app
    role records sessions and results but is no superuser, creates and drops nothing and
    cannot touch the migrations table; a wrong password is refused and only verifiers are
    stored."""
    with owned_postgres(auth_host="scram-sha-256") as server:
        settings = make_settings(services, database_url, "unused")
        settings = settings.model_copy(update={"database_url": server.socket_url("verdict")})
        passwords = {"POSTGRES_OWNER_PASSWORD": "owner-pw", "POSTGRES_APP_PASSWORD": "app-pw"}
        run = verdict(settings, "db", "provision", **passwords)
        assert run.returncode == 0, run.stderr
        assert "owner verdict_owner, application role verdict_app" in run.stdout
        await provision(
            server.socket_url(), server.socket_url("verdict"), ROLES, "owner-pw", "app-pw"
        )
        assert await migrate(server.tcp_url("verdict_owner", "owner-pw", "verdict"))
        app_url = server.tcp_url("verdict_app", "app-pw", "verdict")
        pool = await create_pool(app_url, max_size=2)
        try:
            sid = sessions.new_session_id()
            await sessions.create(pool, NewSession(sid, "t", 3, "text", {"content": "x"}, 60))
            result = Result(
                session_id=sid, component="techniques", success=True, score=40, timestamp=now_ms()
            )
            await record_results(pool, [result], WEIGHTS, explain)
            assert (await sessions.load(pool, sid)).results["techniques"]["score"] == 40
            async with pool.acquire() as conn:
                assert (
                    await conn.fetchval(
                        "SELECT rolsuper FROM pg_roles WHERE rolname = current_user"
                    )
                    is False
                )
                for forbidden in (
                    "CREATE TABLE spy (x int)",
                    "DROP TABLE sessions",
                    "ALTER TABLE sessions ADD COLUMN x int",
                    "DELETE FROM schema_migrations",
                    "CREATE EXTENSION IF NOT EXISTS pg_stat_statements",
                ):
                    with pytest.raises(asyncpg.InsufficientPrivilegeError):
                        await conn.execute(forbidden)
        finally:
            await pool.close()
        with pytest.raises(asyncpg.InvalidPasswordError):
            await asyncpg.connect(server.tcp_url("verdict_app", "wrong", "verdict"))
        admin = await asyncpg.connect(server.socket_url())
        try:
            stored = await admin.fetch(
                "SELECT rolpassword FROM pg_authid WHERE rolname = ANY($1)",
                [ROLES.owner, ROLES.app],
            )
        finally:
            await admin.close()
        assert all(row["rolpassword"].startswith("SCRAM-SHA-256$") for row in stored)
