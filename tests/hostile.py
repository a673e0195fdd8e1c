"""Analyses for tests of the process pool, in a module of their own: a pool's child imports
it to run them, so it imports nothing heavy (a test module would bring pytest along)."""

from __future__ import annotations

import os
import re

from workers.analysis.errors import UnreadableMedia

HOSTILE = "hostile"
# 2^28 backtracking steps, 10 to 20 s: far past any test's timeout, yet finite, so a test run
# against analysis in a thread (the old behaviour) fails instead of freezing for hours.
BACKTRACKING_RUN = 28


def backtrack(content: str = HOSTILE) -> float:
    """Catastrophic backtracking on hostile content, in C code that holds the GIL throughout
    (as a quadratic regex did on 24,000 digits); any other content scores its length."""
    if content == HOSTILE:
        re.match("(a+)+$", "a" * BACKTRACKING_RUN + "b")
    return float(len(content))


def refuse() -> None:
    raise UnreadableMedia("media file 'x.png' does not exist")


def die() -> None:
    os._exit(3)


def no_claims(text: str) -> list[object]:
    """Stands in for extract_claims: finds no claim in ordinary text, spins on hostile text."""
    backtrack(text)
    return []


def buggy(text: str) -> float:
    """An analyser with a bug its input reaches."""
    return float(int(text))
