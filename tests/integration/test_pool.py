"""The PostgreSQL pool every process uses (shared.db.create_pool), on a real server."""

from __future__ import annotations

import asyncpg
import pytest

from shared import db as database

pytestmark = pytest.mark.integration


async def _last_query(admin: asyncpg.Connection, pid: int) -> str:
    return await admin.fetchval("SELECT query FROM pg_stat_activity WHERE pid = $1", pid)


async def test_a_connection_given_back_sends_nothing_more(database_url):
    """Releasing a pooled connection costs no round trip: the server's last statement on
    that backend is still the caller's own (asyncpg's default sends a reset query)."""
    pool = await database.create_pool(database_url, max_size=1)
    admin = await asyncpg.connect(database_url)
    try:
        async with pool.acquire() as conn:
            pid = conn.get_server_pid()
            await conn.fetchval("SELECT 'the caller''s own statement'")
        assert await _last_query(admin, pid) == "SELECT 'the caller''s own statement'"
        async with pool.acquire() as again:
            assert again.get_server_pid() == pid  # the same connection, reused
    finally:
        await admin.close()
        await pool.close()


async def test_what_a_transaction_holds_ends_with_it_on_a_reused_connection(database_url):
    """Transaction-scoped settings and advisory locks, the only kinds the project takes on
    pooled connections, are gone when the next user gets the connection; a transaction left
    open is rolled back on release."""
    pool = await database.create_pool(database_url, max_size=1)
    try:
        async with pool.acquire() as conn, conn.transaction():
            await conn.execute("SELECT set_config('application_name', 'leaked', true)")
            await conn.execute("SELECT pg_advisory_xact_lock(424242)")
        abandoned = await pool.acquire()
        await abandoned.execute("BEGIN")
        await abandoned.execute("SELECT set_config('application_name', 'left open', true)")
        await pool.release(abandoned)
        async with pool.acquire() as conn:
            assert not conn.is_in_transaction()
            assert await conn.fetchval("SHOW application_name") not in ("leaked", "left open")
            locks = await conn.fetchval(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = $1",
                conn.get_server_pid(),
            )
            assert locks == 0
    finally:
        await pool.close()
