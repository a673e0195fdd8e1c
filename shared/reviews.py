"""The review queue in PostgreSQL: verdicts a person confirms or overrides.

The fan-in queues a verdict (aggregator/fanin.py, in the statement that writes it); the API
lists the queue oldest first, lets one reviewer at a time claim an item, and lets only that
reviewer decide it. A claim lapses after `claim_ttl_s`: an abandoned item returns to the
queue and another reviewer may take it.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeAlias

import asyncpg

from shared.constants import REVIEW_CLAIM_TTL_S

Db: TypeAlias = asyncpg.Connection | asyncpg.Pool

# An open item: pending, or claimed by someone whose claim has not lapsed (`$ttl` seconds).
_OPEN = (
    "status = 'pending'"
    " OR (status = 'claimed' AND claimed_at < now() - make_interval(secs => {ttl}))"
)


@dataclass(frozen=True)
class ReviewItem:
    """One queued verdict and what became of it."""

    session_id: str
    tenant: str
    plan: int
    label: str  # as the pipeline computed it
    score: float | None
    confidence: float
    reasons: tuple[str, ...]
    queued_at: datetime
    status: str  # pending | claimed | confirmed | overridden
    claimed_by: str | None = None
    claimed_at: datetime | None = None
    reviewed_label: str | None = None
    note: str | None = None
    reviewed_by: str | None = None
    reviewed_at: datetime | None = None

    @property
    def decided(self) -> bool:
        return self.status in ("confirmed", "overridden")

    def public(self) -> dict[str, Any]:
        """What the session's owner sees in its result: the outcome, not who reviewed."""
        return {
            "status": self.status,
            "label": self.reviewed_label,
            "note": self.note,
            "reviewed_at": self.reviewed_at.isoformat() if self.reviewed_at else None,
        }

    def document(self) -> dict[str, Any]:
        """Everything about the item, for reviewers (the admin API and the console)."""
        return {
            "session_id": self.session_id,
            "tenant": self.tenant,
            "plan": self.plan,
            "label": self.label,
            "score": self.score,
            "confidence": self.confidence,
            "reasons": list(self.reasons),
            "queued_at": self.queued_at.isoformat(),
            "status": self.status,
            "claimed_by": self.claimed_by,
            "claimed_at": self.claimed_at.isoformat() if self.claimed_at else None,
            "reviewed_label": self.reviewed_label,
            "note": self.note,
            "reviewed_by": self.reviewed_by,
            "reviewed_at": self.reviewed_at.isoformat() if self.reviewed_at else None,
        }


@dataclass(frozen=True)
class Backlog:
    """Items waiting for a decision and the age of the oldest, in seconds (0 when none)."""

    waiting: int
    oldest_age_s: float


def _item(row: asyncpg.Record) -> ReviewItem:
    return ReviewItem(
        session_id=str(row["session_id"]),
        tenant=row["tenant"],
        plan=row["plan"],
        label=row["label"],
        score=row["score"],
        confidence=row["confidence"],
        reasons=tuple(row["reasons"]),
        queued_at=row["queued_at"],
        status=row["status"],
        claimed_by=row["claimed_by"],
        claimed_at=row["claimed_at"],
        reviewed_label=row["reviewed_label"],
        note=row["note"],
        reviewed_by=row["reviewed_by"],
        reviewed_at=row["reviewed_at"],
    )


def _uuid(session_id: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(session_id)
    except ValueError:
        return None


async def pending(
    db: Db,
    limit: int = 50,
    *,
    tenant: str | None = None,
    plan: int | None = None,
    claim_ttl_s: float = REVIEW_CLAIM_TTL_S,
) -> list[ReviewItem]:
    """Items a reviewer may claim, oldest first: pending ones and those whose claim lapsed;
    optionally one tenant's or one plan's only."""
    rows = await db.fetch(
        "SELECT * FROM review_queue"
        f" WHERE ({_OPEN.format(ttl='$2')})"
        " AND ($3::text IS NULL OR tenant = $3) AND ($4::smallint IS NULL OR plan = $4)"
        " ORDER BY queued_at, session_id LIMIT $1",
        limit,
        claim_ttl_s,
        tenant,
        plan,
    )
    return [_item(row) for row in rows]


async def claim(
    db: Db, session_id: str, reviewer: str, *, claim_ttl_s: float = REVIEW_CLAIM_TTL_S
) -> ReviewItem | None:
    """Claim an item for `reviewer` (again, for its holder: the claim is renewed); None when
    it is not queued, decided, or claimed by another reviewer whose claim holds."""
    sid = _uuid(session_id)
    if sid is None:
        return None
    # The row lock makes two concurrent claims of one item queue up: the second re-checks
    # the condition on the updated row and finds it claimed.
    row = await db.fetchrow(
        "UPDATE review_queue SET status = 'claimed', claimed_by = $2, claimed_at = now()"
        f" WHERE session_id = $1 AND day = session_day($1) AND ({_OPEN.format(ttl='$3')}"
        " OR (status = 'claimed' AND claimed_by = $2))"
        " RETURNING *",
        sid,
        reviewer,
        claim_ttl_s,
    )
    return _item(row) if row else None


async def decide(
    db: Db, session_id: str, reviewer: str, label: str | None, note: str | None
) -> ReviewItem | None:
    """Confirm the verdict's label (`label` None or the same) or override it, with a note;
    only the reviewer holding the claim may (an expired claim nobody took over still
    counts). None when this reviewer holds no claim on it."""
    sid = _uuid(session_id)
    if sid is None:
        return None
    row = await db.fetchrow(
        "UPDATE review_queue SET"
        " status = CASE WHEN coalesce($3, label) = label THEN 'confirmed' ELSE 'overridden' END,"
        " reviewed_label = coalesce($3, label), note = $4, reviewed_by = $2, reviewed_at = now()"
        " WHERE session_id = $1 AND day = session_day($1)"
        " AND status = 'claimed' AND claimed_by = $2"
        " RETURNING *",
        sid,
        reviewer,
        label,
        note,
    )
    return _item(row) if row else None


async def review_of(db: Db, session_id: str) -> ReviewItem | None:
    """The session's review item; None when its verdict was never queued."""
    sid = _uuid(session_id)
    if sid is None:
        return None
    row = await db.fetchrow(
        "SELECT * FROM review_queue WHERE session_id = $1 AND day = session_day($1)", sid
    )
    return _item(row) if row else None


async def backlog(db: Db) -> Backlog:
    """How many items wait for a decision (claimed ones included) and the oldest one's age."""
    row = await db.fetchrow(
        "SELECT count(*) AS waiting,"
        " coalesce(extract(epoch FROM now() - min(queued_at)), 0)::float8 AS oldest"
        " FROM review_queue WHERE status IN ('pending', 'claimed')"
    )
    return Backlog(row["waiting"], row["oldest"])
