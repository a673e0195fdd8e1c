"""Text primitives shared by the analyzers: folding, sentences, words.

`fold` keeps one output character per input character, so a match found in the
folded text is a valid span of the original. Romanian text is often written
without diacritics (or with the legacy cedilla forms ş/ţ), so every lexicon
match runs on folded text.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from workers.analysis.normalise import normalise

# Possessive quantifiers (`++`, `*+`) never give back what they matched: every pattern
# here does a bounded amount of work per character, whatever the input.
_WORD = re.compile(r"[^\W\d_]++(?:[-'’][^\W\d_]++)*+", re.UNICODE)
# A sentence ends at . ! ? … (maybe followed by a closing quote) then space and an
# upper-case letter, digit or quote, or at a line break.
_SENTENCE_END = re.compile(
    r"(?:(?<=[.!?…])|(?<=[.!?…][\"”»)]))\s++(?=[\"'„“(\[A-ZĂÂÎȘŞȚŢ0-9])|\n++"
)
# A longer sentence is cut (at a space where there is one): a run-on text without
# punctuation is not one claim, and per-sentence work stays bounded.
MAX_SENTENCE_CHARS = 1000
# How far back from the cap a cut looks for a space.
_CUT_SEARCH = 100
# Longer than any abbreviation below with its period, plus the space before it.
_ABBREVIATION_WINDOW = 8


# Titles and short forms that end in a period without ending a sentence (RO and EN).
_ABBREVIATIONS = frozenset(
    {"dr", "mr", "mrs", "ms", "prof", "nr", "art", "alin", "lit", "pct", "st", "sf", "str"}
    | {"jud", "mun", "gen", "col", "lt", "sgt", "vs", "etc", "dl", "dna", "dra"}
)
# One of them, as a whole word with its period, at the end of the searched range.
_ABBREVIATION_END = re.compile(rf"(?<!\S)(?:{'|'.join(sorted(_ABBREVIATIONS))})\.\Z", re.IGNORECASE)


@lru_cache(maxsize=4096)
def _fold_char(ch: str) -> str:
    base = unicodedata.normalize("NFD", ch)[0].lower()
    return base[0] if base else ch


class _FoldTable(dict[int, str]):
    """`str.translate` table filled on first sight of each character (then C-speed)."""

    def __missing__(self, code: int) -> str:
        folded = _fold_char(chr(code))
        if len(self) < _FOLD_TABLE_LIMIT:
            self[code] = folded
        return folded


# Distinct characters remembered; a text of random code points must not grow it forever.
_FOLD_TABLE_LIMIT = 20_000
_FOLD_TABLE = _FoldTable()


def fold(text: str) -> str:
    """Lower-case and strip diacritics, one character out per character in."""
    return text.translate(_FOLD_TABLE)


def comparison_form(text: str) -> str:
    """The form claims and fact checks are compared in: normalised, then folded."""
    return fold(normalise(text).text)


@dataclass(frozen=True)
class Sentence:
    """A sentence and where it starts in the original text."""

    start: int
    text: str

    @property
    def end(self) -> int:
        return self.start + len(self.text)


def sentences(text: str) -> list[Sentence]:
    """Split text into sentences, keeping their offsets; empty pieces are dropped.

    A sentence over MAX_SENTENCE_CHARS is cut into pieces of at most that length.
    """
    found: list[Sentence] = []
    cursor = 0
    for boundary in [*_SENTENCE_END.finditer(text), None]:
        stop = boundary.start() if boundary else len(text)
        if boundary and _ends_with_abbreviation(text, cursor, stop):
            continue  # keep the cursor: the next piece joins this one
        found.extend(_pieces(text, cursor, stop))
        cursor = boundary.end() if boundary else len(text)
    return found


def _pieces(text: str, start: int, stop: int) -> list[Sentence]:
    """The stripped text[start:stop] as sentences of at most MAX_SENTENCE_CHARS."""
    if stop - start <= MAX_SENTENCE_CHARS:
        piece = text[start:stop]
        stripped = piece.strip()
        lead = len(piece) - len(piece.lstrip())
        return [Sentence(start + lead, stripped)] if stripped else []
    pieces = []
    while start < stop:
        while start < stop and text[start].isspace():
            start += 1
        end = min(stop, start + MAX_SENTENCE_CHARS)
        if end < stop:
            space = text.rfind(" ", end - _CUT_SEARCH, end)
            end = space if space > start else end
        piece = text[start:end].rstrip()
        if piece:
            pieces.append(Sentence(start, piece))
        start = end
    return pieces


def _ends_with_abbreviation(text: str, start: int, stop: int) -> bool:
    """Whether text[start:stop] ends with a title or short form ("Dr.") that ends no sentence.

    Only the last few characters are read, so a long run of abbreviations stays linear.
    """
    if stop <= start or text[stop - 1] != ".":
        return False
    return _ABBREVIATION_END.search(text, max(start, stop - _ABBREVIATION_WINDOW), stop) is not None


def words(text: str) -> list[str]:
    """Folded word tokens (letters only; hyphenated and apostrophe forms stay one word)."""
    return _WORD.findall(fold(text))


def word_count(folded: str, start: int, end: int) -> int:
    """How many words `words` finds in folded[start:end], without copying it."""
    return len(_WORD.findall(folded, start, end))


def clip(text: str, limit: int = 160) -> str:
    """A short single-line rendering of `text` for evidence and summaries."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"
