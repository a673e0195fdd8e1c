"""Human review of verdicts, for admin keys: the queue, claims and decisions.

The reviewer is the admin key's tenant. A decision is announced on the session's event
channel, so its owner's event stream sends it as a `review` event.
"""

from __future__ import annotations

from typing import Annotated, Any

import structlog
from fastapi import APIRouter, HTTPException, Query, status
from pydantic import BaseModel, ConfigDict, Field, field_validator

from dispatcher.dependencies import Admin, State
from dispatcher.state import AppState
from shared import live, reviews
from shared.review_policy import LABELS
from shared.reviews import ReviewItem

log = structlog.get_logger(__name__)

REVIEW_API = "/api/v3/review"
# A page of the queue: enough for a reviewer's screen, small enough to read at once.
MAX_PAGE = 200
MAX_NOTE_CHARS = 2000

router = APIRouter(prefix=REVIEW_API, tags=["review"])


class Decision(BaseModel):
    """A reviewer's decision: no label (or the verdict's own) confirms it, another overrides
    it; a note says why."""

    model_config = ConfigDict(extra="forbid")

    label: str | None = None
    note: str | None = Field(None, max_length=MAX_NOTE_CHARS)

    @field_validator("label")
    @classmethod
    def _a_verdict_label(cls, value: str | None) -> str | None:
        if value is not None and value not in LABELS:
            raise ValueError(f"label must be one of {list(LABELS)}")
        return value


@router.get("")
async def queue(
    who: Admin,
    state: State,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 50,
    tenant: Annotated[str | None, Query(max_length=128)] = None,
    plan: Annotated[int | None, Query(ge=1, le=6)] = None,
) -> dict[str, Any]:
    """Verdicts waiting for a reviewer, oldest first (claims that lapsed included)."""
    items = await reviews.pending(
        state.pool,
        limit,
        tenant=tenant,
        plan=plan,
        claim_ttl_s=state.settings.review_claim_ttl_s,
    )
    return {"items": [item.document() for item in items]}


@router.get("/{session_id}")
async def item(session_id: str, who: Admin, state: State) -> dict[str, Any]:
    """One queued verdict and what became of it; 404 when it was never queued."""
    return (await _queued(state, session_id)).document()


@router.post("/{session_id}/claim")
async def claim(session_id: str, who: Admin, state: State) -> dict[str, Any]:
    """Take an item for review (or renew one's own claim); 409 while another reviewer holds
    it or once it is decided."""
    claimed = await reviews.claim(
        state.pool, session_id, who.tenant, claim_ttl_s=state.settings.review_claim_ttl_s
    )
    if claimed is None:
        raise _refusal(await _queued(state, session_id), who.tenant)
    return claimed.document()


@router.post("/{session_id}/decision")
async def decide(session_id: str, decision: Decision, who: Admin, state: State) -> dict[str, Any]:
    """Confirm or override the verdict's label; only the reviewer holding the claim may."""
    decided = await reviews.decide(
        state.pool, session_id, who.tenant, decision.label, decision.note
    )
    if decided is None:
        raise _refusal(await _queued(state, session_id), who.tenant)
    log.info(
        "verdict reviewed",
        session_id=session_id,
        reviewer=who.tenant,
        status=decided.status,
        label=decided.reviewed_label,
    )
    await _announce(state, decided)
    return decided.document()


async def _queued(state: AppState, session_id: str) -> ReviewItem:
    found = await reviews.review_of(state.pool, session_id)
    if found is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, "this session's verdict is not queued")
    return found


def _refusal(found: ReviewItem, reviewer: str) -> HTTPException:
    """409 saying why this reviewer cannot act on the item now."""
    if found.decided:
        why = f"already {found.status} by {found.reviewed_by}"
    elif found.status == "claimed" and found.claimed_by != reviewer:
        why = f"claimed by {found.claimed_by}; wait for its claim to lapse"
    else:
        why = "claim it first"
    return HTTPException(status.HTTP_409_CONFLICT, why)


async def _announce(state: AppState, decided: ReviewItem) -> None:
    """Wake the session's event streams; Postgres holds the decision, so Redis may fail."""
    try:
        await live.announce_review(
            state.redis, state.settings.key_prefix, decided.session_id, decided.public()
        )
    except Exception as exc:
        log.warning("review not announced", session_id=decided.session_id, error=repr(exc))
