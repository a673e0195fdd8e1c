"""The console's human review: the queue oldest first, claim an item (one reviewer at a
time), confirm or override its label with a note (shared/reviews.py). The reviewer is the
signed-in admin key itself, named as the review API names it (`shared.api_keys.key_label`)."""

from __future__ import annotations

import uuid
from typing import Annotated

import structlog
from fastapi import APIRouter, Form, Request, status
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from dispatcher.console.access import Console, Posted, SignedIn, TheConsole
from dispatcher.console.pages import HEADERS, render
from dispatcher.dependencies import State
from dispatcher.schemas import PlainText
from dispatcher.state import AppState
from shared import console_store, reviews
from shared.review_policy import LABELS
from shared.reviews import ReviewItem

log = structlog.get_logger(__name__)

router = APIRouter(prefix="/admin/review", include_in_schema=False)

# Items one page of the queue shows.
PAGE = 100
MAX_NOTE_CHARS = 2000


def reviewer(state: AppState, on: Console, session: SignedIn) -> str:
    """Who the signed-in admin is in the review record: its key's label, `tenant/ab12cd34`."""
    me = on.operator(state, session)
    assert me is not None  # SignedIn admitted it
    return me


@router.get("")
async def queue_page(
    request: Request, state: State, on: TheConsole, session: SignedIn
) -> HTMLResponse:
    """Verdicts waiting for a reviewer, oldest first (lapsed claims included)."""
    waiting = await reviews.pending(state.pool, PAGE, claim_ttl_s=state.settings.review_claim_ttl_s)
    return render(
        request, "review.html", on.cookies, session, items=waiting, page="review",
        decided=_decided_session(request.query_params.get("decided", "")),
    )  # fmt: skip


def _decided_session(text: str) -> str:
    """The session the page reports as just decided: only a session id, so a link cannot
    make the console show a message of its own choosing."""
    try:
        return str(uuid.UUID(text))
    except ValueError:
        return ""


@router.get("/{session_id}")
async def item_page(
    request: Request, session_id: str, state: State, on: TheConsole, session: SignedIn
) -> HTMLResponse:
    """One queued verdict with its session's input and results, and what may be done now."""
    return await _item(request, state, on, session, session_id)


async def _item(
    request: Request,
    state: AppState,
    on: Console,
    session: SignedIn,
    session_id: str,
    problem: str | None = None,
    code: int = status.HTTP_200_OK,
) -> HTMLResponse:
    found = await reviews.review_of(state.pool, session_id)
    if found is None:
        return render(
            request, "missing.html", on.cookies, session, status.HTTP_404_NOT_FOUND,
            what=f"session {session_id[:60]} has no verdict in the review queue", page="review",
        )  # fmt: skip
    record = await console_store.session_record(state.pool, uuid.UUID(found.session_id))
    return render(
        request, "review_item.html", on.cookies, session, code,
        item=found, s=record, me=reviewer(state, on, session), labels=LABELS,
        error=problem, page="review",
    )  # fmt: skip


@router.post("/{session_id}/claim")
async def claim(
    request: Request, session_id: str, state: State, on: TheConsole, session: Posted
) -> Response:
    """Take the item (or renew one's own claim): 303 to it; 409 with why when another
    reviewer holds it or it is decided."""
    me = reviewer(state, on, session)
    claimed = await reviews.claim(
        state.pool, session_id, me, claim_ttl_s=state.settings.review_claim_ttl_s
    )
    if claimed is None:
        found = await reviews.review_of(state.pool, session_id)
        why = refusal(found, me) if found else None
        return await _item(request, state, on, session, session_id, why, status.HTTP_409_CONFLICT)
    return RedirectResponse(
        f"/admin/review/{claimed.session_id}", status.HTTP_303_SEE_OTHER, headers=HEADERS
    )


@router.post("/{session_id}/decision")
async def decide(
    request: Request,
    session_id: str,
    state: State,
    on: TheConsole,
    session: Posted,
    label: Annotated[PlainText, Form(max_length=32)] = "",
    note: Annotated[PlainText, Form(max_length=MAX_NOTE_CHARS)] = "",
) -> Response:
    """Confirm the label (none chosen, or the same) or override it, with a note; only the
    reviewer holding the claim may (409 otherwise, 400 for a label that is not one)."""
    if label and label not in LABELS:
        wrong = f"label must be one of {', '.join(LABELS)}"
        return await _item(request, state, on, session, session_id, wrong, 400)
    me = reviewer(state, on, session)
    decided = await reviews.decide(state.pool, session_id, me, label or None, note or None)
    if decided is None:
        found = await reviews.review_of(state.pool, session_id)
        why = refusal(found, me) if found else None
        return await _item(request, state, on, session, session_id, why, status.HTTP_409_CONFLICT)
    log.info("verdict reviewed", session_id=session_id, reviewer=me, status=decided.status)
    await _announce(state, decided)
    return RedirectResponse(
        f"/admin/review?decided={decided.session_id}", status.HTTP_303_SEE_OTHER, headers=HEADERS
    )


def refusal(found: ReviewItem, me: str) -> str:
    """Why this reviewer cannot act on the item now."""
    if found.decided:
        return f"already {found.status} by {found.reviewed_by}"
    if found.status == "claimed" and found.claimed_by != me:
        return f"claimed by {found.claimed_by}; wait for its claim to lapse"
    return "claim it first"


async def _announce(state: AppState, decided: ReviewItem) -> None:
    """Wake the session's event streams; Postgres holds the decision, so Redis may fail."""
    try:
        await state.live.announce_review(decided.session_id, decided.public())
    except Exception as exc:
        log.warning("review not announced", session_id=decided.session_id, error=repr(exc))
