"""Hashed character n-gram features of a text's words, the same at training and run time.

Each word comes with the share of it that counts where it stands (1, or less inside a
quote, a report or a denial: the techniques analyser's context), so a slogan a news report
quotes weighs little here too. Each n-gram is hashed with zlib.crc32 (stable across
processes, unlike `hash()`) into one of `buckets` slots; a slot's value is log(1 + its
weighted count), and the vector is scaled to unit length. Pure Python: a worker needs no
scikit-learn to score a text.
"""

from __future__ import annotations

import math
import re
import zlib
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from workers.analysis.lemmas import NUMBER

# Words of letters or digits, as the lexicons split them; possessive: linear on any input.
_TOKEN = re.compile(r"[^\W_]++")
# Longer words are no language's (a 10k-letter "word"): they give no features.
MAX_WORD = 40
# Character n-gram lengths inside a word padded with spaces (" vermin " → " ve", "ver", …).
CHAR_SIZES = (3, 4, 5)
# Words looked at: a 5,000-character text has under 1,000; a longer one is cut there, so
# the time per text is bounded.
MAX_WORDS = 2000

Features = dict[int, float]


@dataclass(frozen=True)
class Word:
    """A folded word, where it is in the folded text, and the share of it that counts."""

    text: str
    start: int
    end: int
    share: float = 1.0


def words_of(folded: str) -> list[Word]:
    """The words of a folded text, every number as one word, at most MAX_WORDS."""
    found = []
    for match in _TOKEN.finditer(folded):
        word = match.group()
        if len(word) <= MAX_WORD:
            found.append(Word(NUMBER if word.isdigit() else word, *match.span()))
            if len(found) == MAX_WORDS:
                break
    return found


def bucket(name: str, buckets: int) -> int:
    """The slot of one feature name: crc32 of its UTF-8 bytes, modulo `buckets`."""
    return zlib.crc32(name.encode("utf-8")) % buckets


def char_grams(word: str) -> list[str]:
    """The character n-grams of one word padded with spaces."""
    padded = f" {word} "
    return [padded[i : i + n] for n in CHAR_SIZES for i in range(len(padded) - n + 1)]


@lru_cache(maxsize=65536)
def char_slots(word: str, buckets: int) -> tuple[int, ...]:
    """The slots of a word's n-grams; words repeat, so each is cut and hashed once."""
    return tuple(bucket(f"c:{gram}", buckets) for gram in char_grams(word))


def features(words: Iterable[Word], buckets: int) -> Features:
    """The hashed feature vector (sparse: slot → value) of a text's words."""
    counts: dict[int, float] = defaultdict(float)
    for word in words:
        if word.share > 0:
            for slot in char_slots(word.text, buckets):
                counts[slot] += word.share
    vector = {slot: math.log1p(count) for slot, count in counts.items()}
    norm = math.sqrt(sum(v * v for v in vector.values())) or 1.0
    return {slot: value / norm for slot, value in vector.items()}
