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
from collections import Counter
from collections.abc import Iterator, Sequence
from itertools import chain

from workers.analysis.lemmas import NUMBER

# Words of letters or digits, as the lexicons split them; possessive: linear on any input.
_TOKEN = re.compile(r"[^\W_]++")
# Longer words are no language's (a 10k-letter "word"): they give no features.
MAX_WORD = 40
# Character n-gram lengths inside a word padded with spaces (" vermin " → " ve", "ver", …).
CHAR_SIZES = (3, 4, 5)
# Words the model reads: the first 200 (about 1,200 characters). It learned from texts of
# 9-59 words; a longer text's later words would mostly dilute what the first ones say, and
# reading a 5,000-character text whole cost the techniques analyser about 4 ms more than
# its 15 ms budget allowed. The lexicon still reads every word.
MAX_WORDS = 200

Features = dict[int, float]
# A folded word and the share of it that counts where it stands (0..1).
SharedWord = tuple[str, float]


def words_of(folded: str) -> Iterator[tuple[str, int, int]]:
    """The words of a folded text with their spans, every number as one word, at most
    MAX_WORDS."""
    count = 0
    for match in _TOKEN.finditer(folded):
        word = match.group()
        if len(word) <= MAX_WORD:
            yield (NUMBER if word.isdigit() else word), match.start(), match.end()
            count += 1
            if count == MAX_WORDS:
                return


def whole_words(folded: str) -> list[SharedWord]:
    """Every word of a folded text counted fully (at most MAX_WORDS): how a text is written
    does not change inside a quotation, as what it urges does."""
    return [(word, 1.0) for word, _, _ in words_of(folded)]


def bucket(name: str, buckets: int) -> int:
    """The slot of one feature name: crc32 of its UTF-8 bytes, modulo `buckets`."""
    return zlib.crc32(name.encode("utf-8")) % buckets


def char_grams(word: str) -> list[str]:
    """The character n-grams of one word padded with spaces."""
    padded = f" {word} "
    return [padded[i : i + n] for n in CHAR_SIZES for i in range(len(padded) - n + 1)]


def char_slots(word: str, buckets: int) -> tuple[int, ...]:
    """The slots of a word's n-grams."""
    return _slots_of([word], buckets)[0]


# Words whose slots a process remembers per slot count (words repeat: each is cut and
# hashed once; a text of random words cannot grow it past this).
SLOT_MEMO_LIMIT = 65536
_SLOT_MEMO: dict[int, dict[str, tuple[int, ...]]] = {}


def _slots_of(words: Sequence[str], buckets: int) -> list[tuple[int, ...]]:
    memo = _SLOT_MEMO.setdefault(buckets, {})
    found = list(map(memo.get, words))  # a lookup in C per word; the rest only once
    if None not in found:
        return found  # type: ignore[return-value]  # no None left: every word was known
    cut = []
    for word, slots in zip(words, found, strict=True):
        if slots is None:
            slots = tuple(bucket(f"c:{gram}", buckets) for gram in char_grams(word))
            if len(memo) < SLOT_MEMO_LIMIT:
                memo[word] = slots
        cut.append(slots)
    return cut


def slot_counts(words: Sequence[SharedWord], buckets: int) -> dict[int, float]:
    """Each slot's weighted count: the shares of the words whose n-grams fall in it."""
    # Most words count fully: each distinct one's slots are counted in C, then its
    # repeats and the few discounted words are added.
    full = Counter(w for w, share in words if share == 1.0)
    distinct = list(full)
    slots = _slots_of(distinct, buckets)
    counts: dict[int, float] = dict(Counter(chain.from_iterable(slots)))
    for word, its_slots in zip(distinct, slots, strict=True):
        times = full[word]
        if times > 1:
            for slot in its_slots:
                counts[slot] += times - 1
    partly = [(w, share) for w, share in words if 0.0 < share < 1.0]
    for (_, share), its_slots in zip(
        partly, _slots_of([w for w, _ in partly], buckets), strict=True
    ):
        for slot in its_slots:
            counts[slot] = counts.get(slot, 0.0) + share
    return counts


def features(words: Sequence[SharedWord], buckets: int) -> Features:
    """The hashed feature vector (sparse: slot → value) of a text's words."""
    vector = {slot: math.log1p(count) for slot, count in slot_counts(words, buckets).items()}
    norm = math.sqrt(sum(v * v for v in vector.values())) or 1.0
    return {slot: value / norm for slot, value in vector.items()}
