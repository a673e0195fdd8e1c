"""Measures of how a text is written, whatever it says: pure functions of words and sentences.

Each is a plain number with a documented meaning; `machine_text` turns them into
signals. None of them reads a lexicon.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter

# Moving-average type-token ratio window: long enough to be stable, short enough
# to compare texts of different lengths.
MATTR_WINDOW = 40

# "A, B and C": three items in a row, each of at most three words (folded text).
# Bounded repetitions of possessive word runs: linear on any input.
# Tried only where a word starts, so a long word is read once.
_TRIAD = re.compile(
    r"(?<!\w)\w++(?:\s\w++){0,2}?,\s\w++(?:\s\w++){0,2}?,?\s(?:and|or|si|sau)\s\w++"
)
_DIGITS = re.compile(r"\d++")
# Emotive punctuation: "!!", "?!", "...", and emoji (the Symbols and Pictographs blocks).
_EMOTIVE = re.compile(r"[!?]{2,}+|\.{3,}+|…|[\U0001F300-\U0001FAFF\u2600-\u27BF]")


def sentence_length_variation(lengths: list[int]) -> float:
    """Coefficient of variation of sentence lengths ("burstiness"); humans vary more."""
    if len(lengths) < 2 or not statistics.mean(lengths):
        return 0.0
    return statistics.pstdev(lengths) / statistics.mean(lengths)


def mattr(tokens: list[str], window: int = MATTR_WINDOW) -> float:
    """Moving-average type-token ratio; the plain ratio when the text is shorter than a window."""
    if len(tokens) <= window:
        return len(set(tokens)) / len(tokens) if tokens else 1.0
    counts = Counter(tokens[:window])
    ratios = [len(counts) / window]
    for i in range(window, len(tokens)):
        counts[tokens[i]] += 1
        leaving = tokens[i - window]
        counts[leaving] -= 1
        if not counts[leaving]:
            del counts[leaving]
        ratios.append(len(counts) / window)
    return sum(ratios) / len(ratios)


def repeated_trigram_share(tokens: list[str]) -> float:
    """Share of word trigrams that occur more than once."""
    trigrams = list(zip(tokens, tokens[1:], tokens[2:], strict=False))
    if not trigrams:
        return 0.0
    counts = Counter(trigrams)
    return sum(c for c in counts.values() if c > 1) / len(trigrams)


def enumerations(folded: str) -> int:
    """How many "A, B and C" lists of three the (folded) text has: generated prose loves them."""
    return len(_TRIAD.findall(folded))


def specifics_per_100_words(sentences: list[str], word_total: int) -> float:
    """Numbers and capitalised words inside sentences (names, places, figures) per 100 words:
    reporting is full of them, generic prose has few."""
    found = 0
    for sentence in sentences:
        found += len(_DIGITS.findall(sentence))
        found += sum(1 for w in sentence.split()[1:] if w[:1].isupper())
    return 100.0 * found / word_total if word_total else 0.0


def emotive_marks(text: str) -> int:
    """Runs of "!" or "?", ellipses and emoji: the punctuation of someone talking."""
    return len(_EMOTIVE.findall(text))


def lowercase_starts(sentences: list[str]) -> int:
    """Sentences that start with a lower-case letter (chat, not edited prose)."""
    return sum(1 for s in sentences if s[:1].islower())
