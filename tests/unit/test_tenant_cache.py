"""The API's cache of tenant settings: one read per tenant at a time, no stale version kept
after a notified change, and the last settings served while PostgreSQL cannot be read."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import asyncpg
import pytest

from shared.tenant_settings import TenantSettings
from shared.tenant_store import TenantRecord, TenantSettingsCache


def record(version: int) -> TenantRecord:
    return TenantRecord("t1", version, TenantSettings(), datetime(2026, 1, 1, tzinfo=UTC))


class Database:
    """The rows the cache reads, a gate that holds reads back, and an outage switch."""

    def __init__(self) -> None:
        self.version = 1
        self.down = False
        self.gate = asyncio.Event()
        self.gate.set()
        self.reads = 0
        self.reading = asyncio.Event()  # a read has taken its snapshot

    async def load(self, tenant: str) -> TenantRecord | None:
        self.reads += 1
        seen = self.version  # what the read's snapshot holds
        self.reading.set()
        await self.gate.wait()
        if self.down:
            raise asyncpg.CannotConnectNowError("the database system is starting up")
        return record(seen)


def cache_of(db: Database, ttl_s: float = 3600) -> TenantSettingsCache:
    return TenantSettingsCache(None, ttl_s, loader=db.load)  # type: ignore[arg-type]


async def test_a_read_overtaken_by_a_notified_change_is_not_kept():
    """The change commits and is notified while a read of the old row is on its way: that
    read answers its caller, but the next use reads again and gets the new version."""
    db = Database()
    cache = cache_of(db)
    db.gate.clear()
    reading = asyncio.ensure_future(cache.get("t1"))
    await db.reading.wait()
    db.version = 2
    cache.forget("t1")  # the NOTIFY
    db.gate.set()
    assert (await reading).version == 1
    assert (await cache.get("t1")).version == 2


async def test_callers_of_one_tenant_share_one_read():
    """A burst of submissions of a tenant not yet cached makes one query, not one each."""
    db = Database()
    cache = cache_of(db)
    db.gate.clear()
    waiting = [asyncio.ensure_future(cache.get("t1")) for _ in range(10)]
    await db.reading.wait()
    await asyncio.sleep(0.01)  # every caller has asked meanwhile
    db.gate.set()
    assert [r.version for r in await asyncio.gather(*waiting)] == [1] * 10
    assert db.reads == 1


async def test_with_postgres_away_a_tenant_read_before_keeps_its_last_settings():
    """Expired, notified or after a lost listener: while PostgreSQL cannot be read, the last
    settings read are used; a tenant never read gets the error."""
    db = Database()
    cache = cache_of(db, ttl_s=0)  # every use reads again
    assert (await cache.get("t1")).version == 1
    db.down = True
    cache.forget()  # the listener lost its connection
    assert (await cache.get("t1")).version == 1
    with pytest.raises(asyncpg.CannotConnectNowError):
        await cache.get("t2")
    db.down, db.version = False, 3
    assert (await cache.get("t1")).version == 3
