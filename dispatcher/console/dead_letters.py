"""The console's dead letters: list and search them, view one, replay one, a selection or all
matching a filter (back to their origin queue at their priority), purge with confirmation.

The DLQ library (shared/dead_letter_queue.py) does the work on a connection of the operator
role (OPERATOR_AMQP_URL): the API's own role can neither read the DLQ nor publish replays. On
the postgres transport the letters are `error` rows of job_queue (shared/dead_letter_table.py),
which the API's database role reads and replays on its own pool.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import AsyncIterator, Mapping
from types import ModuleType
from typing import Annotated

import asyncpg
import structlog
from aio_pika.abc import AbstractRobustConnection
from fastapi import APIRouter, Form, HTTPException, Request, status
from fastapi.responses import HTMLResponse

from dispatcher.console.access import Console, Posted, SignedIn, TheConsole
from dispatcher.console.cookies import ConsoleSession
from dispatcher.console.pages import render
from dispatcher.console.search import SearchRefused, form_fields
from dispatcher.dependencies import State
from dispatcher.state import AppState
from shared import dead_letter_queue as dlq
from shared.broker import connect
from shared.constants import QUEUE_COMPONENTS
from shared.errors import BrokerUnavailable
from shared.names import Names
from shared.settings import broker_urls
from shared.transport import dead_letters_of

log = structlog.get_logger(__name__)
router = APIRouter(prefix="/admin/dead-letters", include_in_schema=False)

FILTER_FIELDS = ("reason", "component", "tenant", "older_than_min", "younger_than_min")
# Letters one page lists at most (of the first DLQ_SCAN_LIMIT looked at).
PAGE = 100


def letter_filter(form: Mapping[str, str], ids: frozenset[str] = frozenset()) -> dlq.LetterFilter:
    """The filter a search form asks for; blank fields leave it open."""
    given = form_fields(form, FILTER_FIELDS)
    component = given["component"]
    if component is not None and component not in QUEUE_COMPONENTS:
        raise SearchRefused(f"component must be one of {', '.join(QUEUE_COMPONENTS)}")
    return dlq.LetterFilter(
        reason=given["reason"],
        component=component,
        tenant=given["tenant"],
        min_age_s=_minutes("older than", given["older_than_min"]),
        max_age_s=_minutes("younger than", given["younger_than_min"]),
        ids=ids,
    )


def _minutes(name: str, text: str | None) -> float | None:
    if text is None:
        return None
    try:
        minutes = float(text)
    except ValueError:
        raise SearchRefused(f"'{name}' must be a number of minutes, not {text[:20]!r}") from None
    if not math.isfinite(minutes):
        raise SearchRefused(f"'{name}' must be a number of minutes, not {text[:20]!r}")
    if minutes < 0:
        raise SearchRefused(f"'{name}' cannot be negative")
    return minutes * 60


@contextlib.asynccontextmanager
async def operator(state: AppState) -> AsyncIterator[AbstractRobustConnection | asyncpg.Pool]:
    """What holds the dead letters, for one page: the API's pool on the postgres transport;
    else a connection as the operator role, to whichever node of AMQP_URL's and AMQP_HOSTS
    answers (503 when none is configured or no node answers)."""
    if state.settings.transport == "postgres":
        yield state.pool
        return
    url = state.settings.operator_amqp_url
    if url is None:
        raise HTTPException(
            status.HTTP_503_SERVICE_UNAVAILABLE,
            "dead letters need the operator role: OPERATOR_AMQP_URL is not set",
        )
    try:
        connection = await connect(broker_urls(url, state.settings.amqp_hosts), "api-console-dlq")
    except BrokerUnavailable as exc:
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, str(exc)) from exc
    try:
        yield connection
    finally:
        await connection.close()


def _letters(state: AppState) -> ModuleType:
    """The dead-letter operations of the deployment's transport."""
    return dead_letters_of(state.settings.transport)


def _names(state: AppState) -> Names:
    return Names(state.settings.topology_prefix)


@router.get("")
async def letters_page(
    request: Request, state: State, on: TheConsole, session: SignedIn
) -> HTMLResponse:
    """Dead letters matching the search, oldest first."""
    form = {name: request.query_params.get(name, "") for name in FILTER_FIELDS}
    return await _listing(request, state, on, session, form)


async def _listing(
    request: Request,
    state: AppState,
    on: TheConsole,
    session: SignedIn,
    form: Mapping[str, str],
    outcome: str | None = None,
    code: int = status.HTTP_200_OK,
) -> HTMLResponse:
    try:
        wanted = letter_filter(form)
    except SearchRefused as exc:
        return render(
            request, "dead_letters.html", on.cookies, session, status.HTTP_400_BAD_REQUEST,
            form=form, error=str(exc), listing=None, components=QUEUE_COMPONENTS,
            page="dead-letters",
        )  # fmt: skip
    async with operator(state) as connection:
        listing = await _letters(state).list_letters(
            connection, _names(state), wanted, PAGE, state.settings.dlq_scan_limit
        )
    return render(
        request, "dead_letters.html", on.cookies, session, code,
        form=form, listing=listing, outcome=outcome, components=QUEUE_COMPONENTS,
        max_replays=state.settings.dlq_max_replays, page="dead-letters",
    )  # fmt: skip


@router.get("/{letter_id}")
async def letter_page(
    request: Request, letter_id: str, state: State, on: TheConsole, session: SignedIn
) -> HTMLResponse:
    """One dead letter: its headers and whole body."""
    async with operator(state) as connection:
        found = await _letters(state).letter(
            connection, _names(state), letter_id[:64], state.settings.dlq_scan_limit
        )
    if found is None:
        return render(
            request, "missing.html", on.cookies, session, status.HTTP_404_NOT_FOUND,
            what=f"no dead letter {letter_id[:64]} (replayed or purged already?)",
            page="dead-letters",
        )  # fmt: skip
    body = (found.body or b"").decode("utf-8", "replace")
    return render(
        request, "dead_letter.html", on.cookies, session,
        letter=found, body=body, max_replays=state.settings.dlq_max_replays,
        page="dead-letters",
    )  # fmt: skip


def _chosen(ids: list[str], everything: str) -> frozenset[str]:
    """The letters a replay or purge form names; empty when it asks for all matching."""
    if everything == "matching":
        return frozenset()
    chosen = frozenset(i[:64] for i in ids if i)
    if not chosen:
        raise SearchRefused("select at least one dead letter, or choose all matching")
    return chosen


@router.post("/replay")
async def replay(
    request: Request,
    state: State,
    on: TheConsole,
    session: Posted,
    ids: Annotated[list[str], Form(max_length=64)] = [],  # noqa: B006 - FastAPI copies it
    scope: Annotated[str, Form(max_length=16)] = "",
    force: Annotated[str, Form(max_length=8)] = "",
) -> HTMLResponse:
    """Send the selected letters, or all matching the filter, back to their origin queue;
    letters replayed DLQ_MAX_REPLAYS times are refused as loops unless forced."""
    form = await _form_fields(request)
    try:
        wanted = letter_filter(form, _chosen(ids, scope))
    except SearchRefused as exc:
        return await _listing(request, state, on, session, form, str(exc), 400)
    async with operator(state) as connection:
        done = await _letters(state).replay(
            connection, _names(state), wanted, state.settings.dlq_scan_limit,
            state.settings.dlq_max_replays, force=force == "yes",
            scan=state.settings.dlq_scan_limit,
        )  # fmt: skip
    log.warning(
        "dead letters replayed",
        **_who_chose_what(state, on, session, form, ids, scope),
        forced=force == "yes",
        replayed=len(done.replayed),
        refused_loops=len(done.refused_loops),
        unroutable=len(done.unroutable),
    )
    return await _listing(request, state, on, session, form, replay_summary(done))


def replay_summary(done: dlq.ReplayOutcome) -> str:
    """What a replay did, in a sentence."""
    parts = [f"{len(done.replayed)} replayed"]
    if done.refused_loops:
        parts.append(f"{len(done.refused_loops)} refused as loops (replayed too often already)")
    if done.unroutable:
        parts.append(f"{len(done.unroutable)} could not go back (no origin queue, or it is full)")
    return "; ".join(parts) + f" — {done.scanned} of {done.depth} letters looked at."


@router.post("/purge")
async def purge(
    request: Request,
    state: State,
    on: TheConsole,
    session: Posted,
    ids: Annotated[list[str], Form(max_length=64)] = [],  # noqa: B006 - FastAPI copies it
    scope: Annotated[str, Form(max_length=16)] = "",
    confirm: Annotated[str, Form(max_length=8)] = "",
) -> HTMLResponse:
    """Remove the selected letters, or all matching the filter, once confirmed (400 without)."""
    form = await _form_fields(request)
    if confirm != "yes":
        message = "purging removes dead letters for good: tick the confirmation first"
        return await _listing(request, state, on, session, form, message, 400)
    try:
        wanted = letter_filter(form, _chosen(ids, scope))
    except SearchRefused as exc:
        return await _listing(request, state, on, session, form, str(exc), 400)
    async with operator(state) as connection:
        purged = await _letters(state).purge(
            connection, _names(state), wanted, state.settings.dlq_scan_limit
        )
    log.warning(
        "dead letters purged",
        **_who_chose_what(state, on, session, form, ids, scope),
        purged=purged,
    )
    return await _listing(request, state, on, session, form, f"{purged} purged.")


def _who_chose_what(
    state: AppState,
    on: Console,
    session: ConsoleSession,
    form: Mapping[str, str],
    ids: list[str],
    scope: str,
) -> dict[str, object]:
    """The log fields of a replay or purge: the admin's key label and what was chosen."""
    return {
        "operator": on.operator(state, session),
        "scope": scope or "selected",
        "selected": len(ids),
        "filter": {k: v for k, v in form.items() if v},
    }


async def _form_fields(request: Request) -> dict[str, str]:
    form = await request.form()
    return {name: str(form.get(name) or "") for name in FILTER_FIELDS}
