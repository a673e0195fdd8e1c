"""Evidence found in a text and how findings turn into a 0-100 risk score."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

# Caps keep the executor's result small: it travels in a message and a jsonb column.
MAX_FINDINGS = 25
MAX_SUMMARY = 5
# Evidence quotes longer than this (a flood of "!" or of invisible characters inside a
# span) keep their first characters; start and end still give the whole span.
MAX_QUOTE_CHARS = 500


def evidence_quote(original: str, start: int, end: int) -> str:
    """The original text of a span, cut to MAX_QUOTE_CHARS."""
    return original[start : min(end, start + MAX_QUOTE_CHARS)]


@dataclass(frozen=True)
class Finding:
    """One piece of evidence: what kind it is, where it is in the text, and its weight 0..1."""

    kind: str
    start: int
    end: int
    text: str
    weight: float
    source: str = "lexicon"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def saturating_score(total_weight: float, steepness: float = 1.5) -> float:
    """Map a sum of weights to 0-100 so that risk rises fast at first and never exceeds 100.

    With the default steepness one strong finding (0.3) gives ~36 and four give ~84.
    """
    return round(100.0 * (1.0 - math.exp(-steepness * max(total_weight, 0.0))), 1)


def diminishing_sum(weights: Iterable[float]) -> float:
    """Sum of weights where each repeat counts half the one before (largest first).

    Repeating one word should not score like using many techniques: the total of a
    kind is bounded by twice its largest weight.
    """
    return sum(w * 0.5**i for i, w in enumerate(sorted(weights, reverse=True)))


def combine_probabilities(probabilities: Iterable[float]) -> float:
    """The chance that at least one independent signal is right: 1 - Π(1 - p)."""
    remaining = 1.0
    for p in probabilities:
        remaining *= 1.0 - min(max(p, 0.0), 1.0)
    return 1.0 - remaining
