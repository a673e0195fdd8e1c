"""Dead letters of the table transport (TRANSPORT=postgres): rows of `job_queue` in status
`error`, listed, shown, replayed and purged with the same filters and the same letters as
the DLQ of RabbitMQ (shared.dead_letter_queue).

Two kinds of row are dead letters: those published to the DLQ queue (a failed or poison
task or result, with the dead letter's headers), and rows rejected unread where they were
(too big), whose reason and origin are their own columns. A replay puts a copy back in its
origin queue, a first attempt with one more replay counted, and removes the letter, in one
transaction; nothing is scanned or held, so there is no scan limit here.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import asyncpg

from shared.constants import DEAD_AT_HEADER, ORIGIN_HEADER, REASON_HEADER
from shared.dead_letter_queue import (
    DeadLetter,
    LetterFilter,
    Listing,
    ReplayOutcome,
    describe,
    matches,
    replayed_headers,
)
from shared.job_queue import queue_of
from shared.names import Names

_LETTERS = """
SELECT id, queue, routing_key, priority, body, headers, message_id, correlation_id,
       content_type, reason, finished_at
FROM job_queue
WHERE status = 'error' AND (queue = $1 OR starts_with(queue, $2 || '.'))
ORDER BY id
"""

_REPLAY = """
WITH gone AS (DELETE FROM job_queue WHERE id = $1 AND status = 'error' RETURNING id)
INSERT INTO job_queue (queue, routing_key, priority, body, headers, message_id,
                       correlation_id, content_type)
SELECT $2, $3, $4, $5, $6, $7, $8, $9 FROM gone
"""


def letter_headers(record: Mapping[str, Any]) -> dict[str, Any]:
    """A row's headers as a dead letter's: a row rejected where it was gets the reason,
    origin and time of death a DLQ letter carries (pure)."""
    headers = dict(record["headers"] or {})
    if record["queue"] == record.get("dlq"):
        return headers
    finished = record["finished_at"]
    return {
        **headers,
        REASON_HEADER: headers.get(REASON_HEADER) or f"{record['reason']} in {record['queue']}",
        ORIGIN_HEADER: headers.get(ORIGIN_HEADER) or record["queue"],
        DEAD_AT_HEADER: int(finished.timestamp() * 1000) if finished else None,
    }


async def _letters(pool: asyncpg.Pool, names: Names) -> list[tuple[DeadLetter, Any]]:
    now = time.time()
    rows = await pool.fetch(_LETTERS, names.dlq, names.prefix)
    found = []
    for record in rows:
        headers = letter_headers({**dict(record), "dlq": names.dlq})
        letter = describe(
            names,
            record["body"],
            headers,
            priority=record["priority"],
            message_id=record["message_id"],
            timestamp=None,
            now=now,
        )
        found.append((letter, record))
    return found


async def list_letters(
    pool: asyncpg.Pool,
    names: Names,
    wanted: LetterFilter = LetterFilter(),
    limit: int = 50,
    scan: int | None = None,
) -> Listing:
    """Up to `limit` letters matching `wanted`, oldest first (`scan` is the broker's bound;
    every row is looked at here)."""
    letters = await _letters(pool, names)
    found = [letter for letter, _ in letters if matches(letter, wanted)][:limit]
    return Listing(found, len(letters), len(letters))


async def letter(
    pool: asyncpg.Pool, names: Names, letter_id: str, scan: int | None = None
) -> DeadLetter | None:
    """The letter with this id, body included."""
    for found, record in await _letters(pool, names):
        if found.id == letter_id:
            return replace(found, body=record["body"])
    return None


async def replay(
    pool: asyncpg.Pool,
    names: Names,
    wanted: LetterFilter,
    limit: int,
    max_replays: int,
    *,
    force: bool = False,
    scan: int | None = None,
) -> ReplayOutcome:
    """Put up to `limit` matching letters back in their origin queue at their priority; a
    letter replayed `max_replays` times already is a loop, refused unless `force`."""
    outcome = ReplayOutcome()
    letters = await _letters(pool, names)
    for found, record in letters:
        if len(outcome.replayed) >= limit:
            break
        if not matches(found, wanted):
            continue
        if found.replays >= max_replays and not force:
            outcome.refused_loops.append(found.id)
            continue
        if not found.origin.startswith(names.prefix + "."):
            outcome.unroutable.append(found.id)
            continue
        home = queue_of(names, found.origin)
        headers = replayed_headers(dict(record["headers"] or {}), found.replays)
        await pool.execute(
            _REPLAY,
            record["id"],
            home,
            found.origin,
            record["priority"],
            record["body"],
            headers,
            record["message_id"],
            record["correlation_id"],
            record["content_type"],
        )
        outcome.replayed.append(found.id)
    return replace(outcome, scanned=len(letters), depth=len(letters))


async def purge(
    pool: asyncpg.Pool, names: Names, wanted: LetterFilter, scan: int | None = None
) -> int:
    """Delete the letters matching `wanted`; how many went."""
    gone = [record["id"] for found, record in await _letters(pool, names) if matches(found, wanted)]
    if gone:
        await pool.execute(
            "DELETE FROM job_queue WHERE id = ANY($1::bigint[]) AND status = 'error'", gone
        )
    return len(gone)
