"""Tenant settings in PostgreSQL (`tenant_settings`, migration 009) and the readers' cache.

Writes go through `change`, which bumps the tenant's version in the same statement; a
trigger then NOTIFYs `tenant_settings` with the tenant's name. Readers on the hot path (the
API, for every submission) ask a `TenantSettingsCache`: one query per tenant, then memory
until a notification says the tenant changed, or TENANT_SETTINGS_TTL_S passes (should a
notification be missed while the listening connection was down).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg
import structlog

from shared.db import UNAVAILABLE
from shared.errors import TenantSettingsError
from shared.listener import Listener
from shared.tenant_settings import TenantSettings, stored, validated

log = structlog.get_logger(__name__)

CHANNEL = "tenant_settings"


@dataclass(frozen=True)
class TenantRecord:
    """A tenant's settings as stored: their version and when they last changed."""

    tenant: str
    version: int
    settings: TenantSettings
    updated_at: datetime

    def as_json(self) -> dict[str, Any]:
        return {
            "tenant": self.tenant,
            "version": self.version,
            "updated_at": self.updated_at.isoformat(),
            "settings": stored(self.settings),
        }


def _record(row: asyncpg.Record) -> TenantRecord:
    return TenantRecord(
        row["tenant"], row["version"], validated(row["settings"]), row["updated_at"]
    )


async def load(conn: asyncpg.Pool | asyncpg.Connection, tenant: str) -> TenantRecord | None:
    """The tenant's settings, or None when it has none."""
    row = await conn.fetchrow("SELECT * FROM tenant_settings WHERE tenant = $1", tenant)
    return _record(row) if row else None


async def every(conn: asyncpg.Pool | asyncpg.Connection) -> list[TenantRecord]:
    """Every tenant that has settings, by name."""
    rows = await conn.fetch("SELECT * FROM tenant_settings ORDER BY tenant")
    return [_record(r) for r in rows]


async def change(
    pool: asyncpg.Pool, tenant: str, edit: Callable[[dict[str, Any]], TenantSettings]
) -> TenantRecord:
    """Apply `edit` to the tenant's stored settings (an empty document when it has none) and
    store the result under the next version; concurrent changes of one tenant queue."""
    if not tenant.strip() or len(tenant) > 200:
        raise TenantSettingsError("a tenant is named by 1 to 200 characters")
    async with pool.acquire() as conn, conn.transaction():
        # Serialise writers of one tenant, including the first (no row to lock yet).
        await conn.execute(
            "SELECT pg_advisory_xact_lock(hashtext('tenant_settings:' || $1))", tenant
        )
        current = await conn.fetchval(
            "SELECT settings FROM tenant_settings WHERE tenant = $1", tenant
        )
        updated = edit(dict(current or {}))
        row = await conn.fetchrow(
            """
            INSERT INTO tenant_settings (tenant, version, settings) VALUES ($1, 1, $2)
            ON CONFLICT (tenant) DO UPDATE
                SET version = tenant_settings.version + 1, settings = EXCLUDED.settings,
                    updated_at = now()
            RETURNING *
            """,
            tenant,
            stored(updated),
        )
    return _record(row)


class TenantSettingsCache:
    """Each tenant's settings from memory; read from PostgreSQL on first use, after a change
    was notified, or once `ttl_s` has passed. `reads` counts the queries made.

    Concurrent callers for one tenant share one read. A read that began before a change was
    notified is returned to its callers but not kept (it may hold the old version). With
    PostgreSQL away, a tenant read before keeps its last settings (a notified or expired
    entry included) until a read succeeds; one never read raises the error."""

    def __init__(
        self,
        pool: asyncpg.Pool,
        ttl_s: float,
        clock: Callable[[], float] = time.monotonic,
        loader: Callable[[str], Awaitable[TenantRecord | None]] | None = None,
    ) -> None:
        self._pool = pool
        self._load_from_db = loader or (lambda tenant: load(pool, tenant))
        self._ttl_s = ttl_s
        self._clock = clock
        self._held: dict[str, tuple[float, TenantRecord | None]] = {}
        self._loading: dict[str, asyncio.Future[TenantRecord | None]] = {}
        # Bumped by every notification (per tenant) and every listener loss (all tenants).
        self._generations: dict[str, int] = {}
        self._epoch = 0
        # Set once a listener is in place: from then on a change reaches the cache at once
        # (until then, and while the listener is away, entries expire by their TTL only).
        self.listening = asyncio.Event()
        self.reads = 0

    async def get(self, tenant: str) -> TenantRecord | None:
        held = self._held.get(tenant)
        if held is not None and self._clock() - held[0] < self._ttl_s:
            return held[1]
        loading = self._loading.get(tenant)
        if loading is None:
            loading = asyncio.ensure_future(self._load(tenant))
            self._loading[tenant] = loading
            loading.add_done_callback(lambda done: self._done_loading(tenant, done))
        try:
            return await asyncio.shield(loading)
        except (*UNAVAILABLE, asyncpg.PostgresError) as exc:
            if held is None:
                raise
            log.warning("tenant settings unreadable, using the last read", error=repr(exc))
            return held[1]

    async def _load(self, tenant: str) -> TenantRecord | None:
        generation = self._generation(tenant)
        self.reads += 1
        record = await self._load_from_db(tenant)
        if self._generation(tenant) == generation:  # no change notified meanwhile
            self._held[tenant] = (self._clock(), record)
        return record

    def _done_loading(self, tenant: str, done: asyncio.Future[TenantRecord | None]) -> None:
        if self._loading.get(tenant) is done:
            del self._loading[tenant]
        if not done.cancelled():
            done.exception()  # retrieved here too: every caller may have gone meanwhile

    def _generation(self, tenant: str) -> tuple[int, int]:
        return self._epoch, self._generations.get(tenant, 0)

    def forget(self, tenant: str | None = None) -> None:
        """One tenant's entry is out of date (a change was notified), or every entry is. The
        entries are kept, expired: the next use reads again, and falls back on them only
        while PostgreSQL cannot be read."""
        if tenant is None:
            self._epoch += 1
            tenants = list(self._held)
        else:
            self._generations[tenant] = self._generations.get(tenant, 0) + 1
            tenants = [tenant] if tenant in self._held else []
        for name in tenants:
            self._held[name] = (-math.inf, self._held[name][1])

    async def listen(self, listener: Listener) -> None:
        """Forget a tenant whenever PostgreSQL notifies a change of it (on the process's
        listener, shared/listener.py), until cancelled; everything held is forgotten whenever
        listening starts again, as a change may have been missed meanwhile."""
        await listener.follow(CHANNEL, self.forget, on_gap=self._listening_again)
        try:
            if listener.connected.is_set():  # already listening: no gap will be announced
                self._listening_again()
            await asyncio.Event().wait()
        finally:
            await listener.unfollow(CHANNEL, self.forget)

    def _listening_again(self) -> None:
        self.forget()  # what changed before the listener was in place
        self.listening.set()
