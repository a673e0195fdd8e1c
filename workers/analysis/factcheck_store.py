"""The fact-check store in PostgreSQL (migration 002): loading and similarity lookup.

Lookups take a connection or pool; the table is filled from JSON-lines files by the
`factchecks load` command.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from datetime import date
from pathlib import Path
from typing import Any, Protocol

import asyncpg
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from workers.analysis.claim_forms import Rating
from workers.analysis.claims import Verification, best_verification, claim_policy
from workers.analysis.datafiles import data_path
from workers.analysis.errors import FactCheckFileInvalid, FactCheckStoreMissing
from workers.analysis.text import comparison_form

SAMPLE_FILE = data_path("fact_checks.jsonl")
# Candidate filter for the trigram index (`%`): loose on purpose, the exact
# threshold (claims.yaml `match_threshold`) is applied to the better of the two
# measures afterwards, with the check's subject words (check_subject.py), best first.
CANDIDATE_SIMILARITY = 0.2
# The best few: the subject check may pass over the first.
CANDIDATES = 5


class FactCheck(BaseModel):
    """One published fact check: the claim as checked, its rating and who checked it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    claim: str = Field(min_length=3, max_length=1000)
    rating: Rating
    source: str = Field(min_length=1, max_length=200)
    language: str = "und"
    url: str | None = None
    summary: str | None = None
    published_on: date | None = None


class Queryable(Protocol):
    """An asyncpg connection or pool."""

    async def fetch(self, query: str, *args: Any) -> list[Any]: ...
    async def executemany(self, command: str, args: Iterable[Sequence[Any]]) -> None: ...


def read_fact_checks(path: Path = SAMPLE_FILE) -> list[FactCheck]:
    """Parse a JSON-lines file of fact checks; blank lines and `#` comments are skipped."""
    checks = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip() and not line.lstrip().startswith("#"):
            try:
                checks.append(FactCheck.model_validate(json.loads(line)))
            except (ValueError, ValidationError) as exc:
                raise FactCheckFileInvalid(f"{path.name}:{number}: {exc}") from exc
    return checks


_UPSERT = """
INSERT INTO fact_checks (claim, claim_norm, rating, language, source, url, summary, published_on)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
ON CONFLICT (source, claim_norm) DO UPDATE SET
    claim = EXCLUDED.claim, rating = EXCLUDED.rating, language = EXCLUDED.language,
    url = EXCLUDED.url, summary = EXCLUDED.summary, published_on = EXCLUDED.published_on,
    updated_at = now()
"""


async def upsert(db: Queryable, checks: Iterable[FactCheck]) -> int:
    """Insert or update fact checks by (source, claim); returns how many were written."""
    rows = [
        (
            c.claim,
            comparison_form(c.claim),
            c.rating,
            c.language,
            c.source,
            c.url,
            c.summary,
            c.published_on,
        )
        for c in checks
    ]
    try:
        await db.executemany(_UPSERT, rows)
    except asyncpg.UndefinedTableError as exc:
        raise FactCheckStoreMissing("table fact_checks is missing: apply migration 002") from exc
    return len(rows)


# set_config(..., true) is local to the transaction, so a pooled connection keeps its defaults.
_CANDIDATE_THRESHOLD = "SELECT set_config('pg_trgm.similarity_threshold', $1, true)"
_LOOKUP = """
SELECT claim, rating, source, url, language,
       greatest(similarity(claim_norm, $1), strict_word_similarity(claim_norm, $1)) AS score
FROM fact_checks
WHERE claim_norm % $1
ORDER BY score DESC
LIMIT $2
"""


async def lookup(db: asyncpg.Pool | asyncpg.Connection, claim: str) -> Verification:
    """The best fact check for a claim, or UNVERIFIABLE when none is similar enough."""
    threshold = claim_policy().match_threshold
    try:
        async with _transaction(db) as conn:
            await conn.execute(_CANDIDATE_THRESHOLD, str(CANDIDATE_SIMILARITY))
            rows = await conn.fetch(_LOOKUP, comparison_form(claim), CANDIDATES)
    except asyncpg.UndefinedTableError as exc:
        raise FactCheckStoreMissing("table fact_checks is missing: apply migration 002") from exc
    return best_verification(claim, [(float(row["score"]), dict(row)) for row in rows], threshold)


@asynccontextmanager
async def _transaction(db: asyncpg.Pool | asyncpg.Connection) -> AsyncIterator[asyncpg.Connection]:
    """A transaction on a connection, or on one borrowed from a pool."""
    if isinstance(db, asyncpg.Pool):
        async with db.acquire() as conn, conn.transaction():
            yield conn
    else:
        async with db.transaction():
            yield db


async def store_checks(
    conn: asyncpg.Connection, checks: list[FactCheck], only_if_empty: bool
) -> int | None:
    """Upsert `checks` in one transaction; None (nothing written) when `only_if_empty` and
    the store holds fact checks already."""
    async with conn.transaction():
        # Two first starts at once: the lock makes the second see the first one's rows.
        await conn.execute("LOCK TABLE fact_checks IN SHARE ROW EXCLUSIVE MODE")
        if only_if_empty and await conn.fetchval("SELECT EXISTS (SELECT 1 FROM fact_checks)"):
            return None
        return await upsert(conn, checks)
