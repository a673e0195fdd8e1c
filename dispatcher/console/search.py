"""The session search form read into a query: each field checked, with a message a person can act
on when it cannot be used."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import UTC, datetime

from shared.console_store import STATUSES, SessionQuery

FIELDS = ("session_id", "tenant", "status", "label", "since", "until")


class SearchRefused(ValueError):
    """Raised when a search field cannot be used; the message says which and why."""


def session_query(form: Mapping[str, str]) -> SessionQuery:
    """The query a search form asks for; blank fields leave it open."""
    given = {name: (form.get(name) or "").strip() or None for name in FIELDS}
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
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
