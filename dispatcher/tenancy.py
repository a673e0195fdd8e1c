"""Whose session is it: the tenant from PostgreSQL, the system of record, remembered in-process.

Redis live state is only a cache of progress and never decides ownership. A session's tenant
never changes, so a found tenant may be remembered; "not found" never is (the row may be
committed a moment later).
"""

from __future__ import annotations

import uuid
from collections import OrderedDict

import asyncpg

from shared import sessions


def parse_session_id(session_id: str) -> uuid.UUID | None:
    """The session id as a UUID, or None for anything that cannot name a session."""
    try:
        return uuid.UUID(session_id)
    except ValueError:
        return None


class SessionTenants:
    """session id → tenant, read from `sessions`, with a bounded LRU of positive answers."""

    def __init__(self, pool: asyncpg.Pool, size: int) -> None:
        self.pool = pool
        self.size = size
        self._known: OrderedDict[uuid.UUID, str] = OrderedDict()

    async def owns(self, tenant: str, session_id: str) -> bool:
        """True when the session exists and belongs to `tenant`."""
        sid = parse_session_id(session_id)
        return sid is not None and await self._tenant_of(sid) == tenant

    async def exists(self, session_id: str) -> bool:
        """True while the session's row exists (never answered from memory)."""
        sid = parse_session_id(session_id)
        return sid is not None and await self._read_and_remember(sid) is not None

    async def _tenant_of(self, sid: uuid.UUID) -> str | None:
        tenant = self._known.get(sid)
        if tenant is not None:
            self._known.move_to_end(sid)
            return tenant
        return await self._read_and_remember(sid)

    async def _read_and_remember(self, sid: uuid.UUID) -> str | None:
        tenant = await sessions.tenant_of(self.pool, sid)
        if tenant is not None:
            self._known[sid] = tenant
            self._known.move_to_end(sid)
            while len(self._known) > self.size:
                self._known.popitem(last=False)
        return tenant
