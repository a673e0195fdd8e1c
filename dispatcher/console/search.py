"""The session search form read into a query: each field checked, with a message a person can act
on when it cannot be used."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from dispatcher.schemas import control_character_in
from shared.console_store import STATUSES, SessionQuery

FIELDS = ("session_id", "tenant", "status", "label", "since", "until")


class SearchRefused(ValueError):
    """Raised when a search field cannot be used; the message says which and why."""


def session_query(form: Mapping[str, str]) -> SessionQuery:
    """The query a search form asks for; blank fields leave it open."""
    given = form_fields(form, FIELDS)
    status = given["status"]
    if status is not None and status not in STATUSES:
        raise SearchRefused(f"status must be one of {', '.join(STATUSES)}")
    return SessionQuery(
        session_id=_session_id(given["session_id"]),
        tenant=given["tenant"],
        status=status,
        label=given["label"],
        since=_time("since", given["since"]),
        until=_time("until", given["until"]),
    )


def form_fields(form: Mapping[str, str], names: Sequence[str]) -> dict[str, str | None]:
    """The form's `names`, stripped, blank ones None; refused when one holds a control
    character (NUL cannot even reach PostgreSQL)."""
    given = {name: (form.get(name) or "").strip() or None for name in names}
    for name, text in given.items():
        problem = control_character_in(text or "")
        if problem:
            raise SearchRefused(f"{name.replace('_', ' ')} {problem}")
    return given


def _session_id(text: str | None) -> uuid.UUID | None:
    if text is None:
        return None
    try:
        return uuid.UUID(text)
    except ValueError:
        raise SearchRefused(f"session id {text[:60]!r} is not a UUID") from None


def _time(name: str, text: str | None) -> datetime | None:
    """An ISO time; one without a zone is UTC (what a datetime-local field sends)."""
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise SearchRefused(f"{name} {text[:40]!r} is not a time like 2026-11-30T14:00") from None
    try:  # a time near year 1 or 9999 may fall outside the calendar once in UTC
        return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(UTC)
    except OverflowError:
        raise SearchRefused(f"{name} {text[:40]!r} is out of range once in UTC") from None
