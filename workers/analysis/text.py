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

_WORD = re.compile(r"[^\W\d_]+(?:[-'’][^\W\d_]+)*", re.UNICODE)
# A sentence ends at . ! ? … (maybe followed by a closing quote) then space and an
# upper-case letter, digit or quote, or at a line break.
_SENTENCE_END = re.compile(r"(?:(?<=[.!?…])|(?<=[.!?…][\"”»)]))\s+(?=[\"'„“(\[A-ZĂÂÎȘŞȚŢ0-9])|\n+")


# Titles and short forms that end in a period without ending a sentence (RO and EN).
_ABBREVIATIONS = frozenset(
    {"dr", "mr", "mrs", "ms", "prof", "nr", "art", "alin", "lit", "pct", "st", "sf", "str"}
    | {"jud", "mun", "gen", "col", "lt", "sgt", "vs", "etc", "dl", "dna", "dra"}
)


@lru_cache(maxsize=4096)
def _fold_char(ch: str) -> str:
    base = unicodedata.normalize("NFD", ch)[0].lower()
    return base[0] if base else ch


def fold(text: str) -> str:
    """Lower-case and strip diacritics, one character out per character in."""
    return "".join(_fold_char(ch) for ch in text)


@dataclass(frozen=True)
class Sentence:
    """A sentence and where it starts in the original text."""

    start: int
    text: str

    @property
    def end(self) -> int:
        return self.start + len(self.text)


def sentences(text: str) -> list[Sentence]:
    """Split text into sentences, keeping their offsets; empty pieces are dropped."""
    found: list[Sentence] = []
    cursor = 0
    for boundary in [*_SENTENCE_END.finditer(text), None]:
        stop = boundary.start() if boundary else len(text)
        piece = text[cursor:stop]
        stripped = piece.strip()
        if stripped and boundary and _ends_with_abbreviation(stripped):
            continue  # keep the cursor: the next piece joins this one
        if stripped:
            found.append(Sentence(cursor + piece.index(stripped), stripped))
        cursor = boundary.end() if boundary else len(text)
    return found


def _ends_with_abbreviation(piece: str) -> bool:
    last = piece.rsplit(None, 1)[-1]
    return last.endswith(".") and fold(last[:-1]) in _ABBREVIATIONS


def words(text: str) -> list[str]:
    """Folded word tokens (letters only; hyphenated and apostrophe forms stay one word)."""
    return _WORD.findall(fold(text))


def clip(text: str, limit: int = 160) -> str:
    """A short single-line rendering of `text` for evidence and summaries."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"
