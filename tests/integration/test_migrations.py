"""Numbered migrations: applied once, safe to run twice and from two processes at once."""

import asyncio

import asyncpg
import pytest

from shared.db import migrate, migration_files
from tests import services as svc

pytestmark = pytest.mark.integration


async def test_migrations_apply_once_even_when_run_twice_concurrently(services):
    """Two concurrent migrators plus a third run: every migration is recorded exactly once."""
    name = svc.unique("verdict_mig_")
    url = await svc.create_database(services.database_admin_url, name)
    try:
        first, second = await asyncio.gather(migrate(url), migrate(url))
        third = await migrate(url)
        shipped = [n for _, n, _ in migration_files()]
        assert sorted(first + second) == shipped  # each applied by exactly one of the two
        assert third == []
        conn = await asyncpg.connect(url)
        try:
            versions = await conn.fetch("SELECT version FROM schema_migrations ORDER BY version")
            tables = {
                r["tablename"]
                for r in await conn.fetch(
                    "SELECT tablename FROM pg_tables WHERE schemaname='public'"
                )
            }
        finally:
            await conn.close()
        assert [r["version"] for r in versions] == [v for v, _, _ in migration_files()]
        assert {"sessions", "component_results", "verdicts"} <= tables
    finally:
        await svc.drop_database(services.database_admin_url, name)


async def test_statements_are_planned_for_their_arguments_every_time(pool, database_url):
    """No generic plan cached on near-empty tables outlives their growth: not in the pool's
    connections, nor inside the fan-in function, whoever calls it (migration 004). A plain
    connection keeps the server's default, so it is the pool that sets it."""
    plain = await asyncpg.connect(database_url)
    try:
        assert await plain.fetchval("SHOW plan_cache_mode") == "auto"
    finally:
        await plain.close()
    assert await pool.fetchval("SHOW plan_cache_mode") == "force_custom_plan"
    config = await pool.fetchval("SELECT proconfig FROM pg_proc WHERE proname = 'record_results'")
    assert "plan_cache_mode=force_custom_plan" in config
