"""Human review of verdicts, for admin keys: the queue, claims and decisions.

The reviewer is the admin key itself, named by `Caller.key_label` (`tenant/ab12cd34`): two
admin keys of one tenant are two reviewers, as in the console. A decision is announced on the
session's event channel, so its owner's event stream sends it as a `review` event.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, status
from pydantic import BaseModel, ConfigDict, Field, field_validator

from dispatcher import answers, reviewing
from dispatcher.dependencies import KEY_SCHEMES, Admin, State
from dispatcher.schemas import PlainText
from dispatcher.state import AppState
from shared import reviews
from shared.review_policy import LABELS
from shared.reviews import ReviewItem

REVIEW_API = "/api/v3/review"
# A page of the queue: enough for a reviewer's screen, small enough to read at once.
MAX_PAGE = 200
MAX_NOTE_CHARS = 2000

router = APIRouter(prefix=REVIEW_API, tags=["review"], dependencies=KEY_SCHEMES)


class Decision(BaseModel):
    """A reviewer's decision: no label (or the verdict's own) confirms it, another overrides
    it; a note says why."""

    model_config = ConfigDict(extra="forbid")

    label: str | None = None
    note: PlainText | None = Field(None, max_length=MAX_NOTE_CHARS)

    @field_validator("label")
    @classmethod
    def _a_verdict_label(cls, value: str | None) -> str | None:
        if value is not None and value not in LABELS:
            raise ValueError(f"label must be one of {list(LABELS)}")
        return value


@router.get("", responses=answers.REVIEW_QUEUE)
async def queue(
    who: Admin,
    state: State,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 50,
    tenant: Annotated[PlainText | None, Query(max_length=128)] = None,
    plan: Annotated[int | None, Query(ge=1, le=6)] = None,
) -> dict[str, Any]:
    """Verdicts waiting for a reviewer, oldest first (claims that lapsed included)."""
    items = await reviewing.pending(state, limit, tenant=tenant, plan=plan)
    return {"items": [item.document() for item in items]}


@router.get("/{session_id}", responses=answers.REVIEW_ITEM)
async def item(session_id: str, who: Admin, state: State) -> dict[str, Any]:
    """One queued verdict and what became of it; 404 when it was never queued."""
    return (await _queued(state, session_id)).document()


@router.post("/{session_id}/claim", responses=answers.REVIEW_ACTION)
async def claim(session_id: str, who: Admin, state: State) -> dict[str, Any]:
    """Take an item for review (or renew one's own claim); 409 while another reviewer holds
    it or once it is decided."""
    claimed = await reviewing.claim(state, session_id, who.key_label)
    if claimed is None:
        raise _refusal(await _queued(state, session_id), who.key_label)
    return claimed.document()


@router.post("/{session_id}/decision", responses=answers.REVIEW_ACTION)
async def decide(session_id: str, decision: Decision, who: Admin, state: State) -> dict[str, Any]:
    """Confirm or override the verdict's label; only the reviewer holding the claim may."""
    me = who.key_label
    decided = await reviewing.decide(state, session_id, me, decision.label, decision.note)
    if decided is None:
        raise _refusal(await _queued(state, session_id), me)
    return decided.document()


async def _queued(state: AppState, session_id: str) -> ReviewItem:
    found = await reviews.review_of(state.pool, session_id)
    if found is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, "this session's verdict is not queued")
    return found


def _refusal(found: ReviewItem, reviewer: str) -> HTTPException:
    """409 saying why this reviewer cannot act on the item now."""
    return HTTPException(status.HTTP_409_CONFLICT, reviewing.why_refused(found, reviewer))
