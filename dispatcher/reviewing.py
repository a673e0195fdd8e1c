"""Review actions as the API takes them, for the review endpoints and the admin console alike:
the storage calls (shared/reviews.py) with this deployment's claim lifetime, and a decision
announced on the session's event channel so its event stream sends a `review` event."""

from __future__ import annotations

import structlog

from dispatcher.state import AppState
from shared import reviews
from shared.reviews import ReviewItem

log = structlog.get_logger(__name__)


async def pending(
    state: AppState, limit: int, *, tenant: str | None = None, plan: int | None = None
) -> list[ReviewItem]:
    """Items a reviewer may claim, oldest first (claims past REVIEW_CLAIM_TTL_S included)."""
    return await reviews.pending(
        state.pool, limit, tenant=tenant, plan=plan, claim_ttl_s=state.settings.review_claim_ttl_s
    )


async def claim(state: AppState, session_id: str, reviewer: str) -> ReviewItem | None:
    """`reviews.claim` with this deployment's claim lifetime."""
    return await reviews.claim(
        state.pool, session_id, reviewer, claim_ttl_s=state.settings.review_claim_ttl_s
    )


async def decide(
    state: AppState, session_id: str, reviewer: str, label: str | None, note: str | None
) -> ReviewItem | None:
    """`reviews.decide`, logged and announced to the session's event streams."""
    decided = await reviews.decide(state.pool, session_id, reviewer, label, note)
    if decided is None:
        return None
    log.info(
        "verdict reviewed",
        session_id=session_id,
        reviewer=reviewer,
        status=decided.status,
        label=decided.reviewed_label,
    )
    try:  # Postgres holds the decision; a stream not told re-reads it within REVIEW_POLL_S
        await state.live.announce_review(decided.session_id, decided.public())
    except Exception as exc:
        log.warning("review not announced", session_id=session_id, error=repr(exc))
    return decided


def why_refused(found: ReviewItem, reviewer: str) -> str:
    """Why `reviewer` could not claim or decide the item, in a reviewer's words."""
    if found.decided:
        return f"already {found.status} by {found.reviewed_by}"
    if found.status == "claimed" and found.claimed_by != reviewer:
        return f"claimed by {found.claimed_by}; wait for its claim to lapse"
    return "claim it first"
