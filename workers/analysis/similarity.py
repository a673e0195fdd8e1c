"""Trigram similarity computed like PostgreSQL's pg_trgm, for ranking without a database.

The evaluation script and unit tests rank fact checks with these functions; the
claims executor asks Postgres (`factcheck_store.lookup`), which computes the same
measures with `similarity` and `strict_word_similarity` on folded text.
"""

from __future__ import annotations

import re
from functools import lru_cache

_ALNUM_WORD = re.compile(r"[^\W_]+")


def trigrams(text: str) -> frozenset[str]:
    """pg_trgm's trigram set: each lower-cased word padded with two spaces before, one after."""
    return frozenset().union(*map(_word_trigrams, _ALNUM_WORD.findall(text.lower())))


@lru_cache(maxsize=1 << 16)
def _word_trigrams(word: str) -> frozenset[str]:
    """The trigrams of one lower-cased word (a text's set is the union of its words')."""
    padded = f"  {word} "
    return frozenset(padded[i : i + 3] for i in range(len(padded) - 2))


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def similarity(a: str, b: str) -> float:
    """Shared trigrams over all trigrams of the two texts (pg_trgm `similarity`)."""
    return _jaccard(trigrams(a), trigrams(b))


def strict_word_similarity(needle: str, haystack: str) -> float:
    """Best `similarity` of `needle` to a run of whole words of `haystack`.

    Approximates pg_trgm's `strict_word_similarity`, which looks for the extent of
    the second text most similar to the first. A run's trigrams are the union of its
    words' (each word's set computed once), the same set as the joined run's.
    """
    words = [trigrams(word) for word in _ALNUM_WORD.findall(haystack)]
    wanted = trigrams(needle)
    size = len(_ALNUM_WORD.findall(needle))
    best = 0.0
    for width in range(max(1, size - 2), size + 3):
        for start in range(0, max(1, len(words) - width + 1)):
            best = max(best, _jaccard(wanted, frozenset().union(*words[start : start + width])))
    return best


def claim_similarity(checked_claim: str, sentence: str) -> float:
    """How well a sentence states a fact-checked claim: the better of the two measures."""
    return max(similarity(checked_claim, sentence), strict_word_similarity(checked_claim, sentence))
