"""Trigram similarity computed like PostgreSQL's pg_trgm, for ranking without a database.

The evaluation script and unit tests rank fact checks with these functions; the
claims executor asks Postgres (`factcheck_store.lookup`), which computes the same
measures with `similarity` and `strict_word_similarity` on folded text.
"""

from __future__ import annotations

import re

_ALNUM_WORD = re.compile(r"[^\W_]+")


def trigrams(text: str) -> frozenset[str]:
    """pg_trgm's trigram set: each lower-cased word padded with two spaces before, one after."""
    grams: set[str] = set()
    for word in _ALNUM_WORD.findall(text.lower()):
        padded = f"  {word} "
        grams.update(padded[i : i + 3] for i in range(len(padded) - 2))
    return frozenset(grams)


def similarity(a: str, b: str) -> float:
    """Shared trigrams over all trigrams of the two texts (pg_trgm `similarity`)."""
    ta, tb = trigrams(a), trigrams(b)
    union = ta | tb
    return len(ta & tb) / len(union) if union else 0.0


def strict_word_similarity(needle: str, haystack: str) -> float:
    """Best `similarity` of `needle` to a run of whole words of `haystack`.

    Approximates pg_trgm's `strict_word_similarity`, which looks for the extent of
    the second text most similar to the first.
    """
    words = _ALNUM_WORD.findall(haystack)
    size = len(_ALNUM_WORD.findall(needle))
    best = 0.0
    for width in range(max(1, size - 2), size + 3):
        for start in range(0, max(1, len(words) - width + 1)):
            best = max(best, similarity(needle, " ".join(words[start : start + width])))
    return best


def claim_similarity(checked_claim: str, sentence: str) -> float:
    """How well a sentence states a fact-checked claim: the better of the two measures."""
    return max(similarity(checked_claim, sentence), strict_word_similarity(checked_claim, sentence))
