"""The attempts workers make at a session's components, kept for a day so the
console's timeline shows when each started and how it ended (retried, dead-lettered) — the
record in Postgres keeps only the attempt whose result was applied. Kept in the process's
house (shared/house.py): Redis, or PostgreSQL's ephemera without it.

Best effort: an attempt not written (Redis away) is only missing from a timeline.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Literal

from shared.constants import LIVE_STATE_TTL_S
from shared.house import Shelf
from shared.keys import Keys

# How an attempt ended: its result reported (`ok`, `failed`), nothing to do (`skipped`: the
# session was final or the result recorded), a retry scheduled, or a dead letter.
AttemptEnd = Literal["ok", "failed", "skipped", "retry", "dead_letter"]
# A task is attempted at most MAX_ATTEMPTS (≤ 10) times, plus lock waits; far above that
# something loops, and the list keeps only its newest entries.
MAX_KEPT = 50


@dataclass(frozen=True)
class Attempt:
    """One run of one task by one worker (times are Unix seconds)."""

    attempt: int
    worker_id: str
    started_at: float
    ended_at: float
    end: AttemptEnd
    detail: str = ""  # the retry delay or the dead letter's reason


class AttemptLog:
    """Writes attempts off the tasks' path (Shelf.append_soon): a task never waits for its
    own entry, and a busy worker writes many entries per round trip. Best effort, like the
    record itself."""

    def __init__(self, shelf: Shelf, keys: Keys) -> None:
        self._shelf = shelf
        self._keys = keys

    def add(self, session_id: str, component: str, attempt: Attempt) -> None:
        key = self._keys.attempts(session_id, component)
        self._shelf.append_soon(key, json.dumps(asdict(attempt)), MAX_KEPT, LIVE_STATE_TTL_S)


async def read(
    shelf: Shelf, keys: Keys, session_id: str, components: Sequence[str]
) -> dict[str, list[Attempt]]:
    """Every component's recorded attempts, oldest first (components with none left out)."""
    names = {keys.attempts(session_id, c): c for c in components}
    found = await shelf.lists(list(names))
    return {
        names[key]: [Attempt(**json.loads(raw)) for raw in entries]
        for key, entries in found.items()
        if entries
    }
