"""A tenant's sessions as its quotas count them, in PostgreSQL (the system of record)."""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg

# Counted up to the cap only: a tenant far over it costs no longer a scan than one at it.
IN_FLIGHT_SQL = """
SELECT (SELECT count(*) FROM (SELECT 1 FROM sessions
                              WHERE tenant = $1 AND status = 'processing' LIMIT $2) AS open
       ) AS open,
       $3::text IS NOT NULL
       AND EXISTS (SELECT 1 FROM idempotency_keys WHERE tenant = $1 AND key = $3) AS replay
"""


@dataclass(frozen=True)
class InFlight:
    """A tenant's sessions still processing, and whether a request replays an earlier one."""

    processing: int  # counted up to the cap asked about, no further
    replay: bool  # the idempotency key already names a session of the tenant


async def in_flight(
    conn: asyncpg.Connection | asyncpg.Pool, tenant: str, cap: int, idempotency_key: str | None
) -> InFlight:
    """How many of the tenant's sessions are processing (at most `cap`), in one statement."""
    row = await conn.fetchrow(IN_FLIGHT_SQL, tenant, cap, idempotency_key)
    return InFlight(processing=row["open"], replay=row["replay"])
