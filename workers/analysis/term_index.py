"""Where in a folded text a lexicon of terms can match: at the words its terms begin with.

A lexicon term is literal words a few spaces apart (a `*` ends a word with a wildcard),
compiled by `term_pattern` into an alternation matched at word boundaries. A match can
only start where a word of the text is the first word of one of the terms (or, for
`word*`, begins with it). So instead of scanning a whole text with every lexicon, the
analysers look up each word of the text once in this index and try a lexicon's pattern only
at the words that can start it (`TermIndex.starts`, then `Starts.finditer` or `.search`).

The index never changes what matches, only where a match is tried: `Starts.finditer` finds
exactly what `pattern.finditer` finds (leftmost first, never overlapping), and a lexicon
with a term that does not begin with a letter or digit is scanned whole (`scanned`).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from workers.analysis.text import fold

_WORD = re.compile(r"\w+")
# Words whose lexicons an index remembers.
MEMO_LIMIT = 50_000
_FIRST_WORD = re.compile(r"(\w+)(\*?)")


@dataclass(frozen=True)
class TermIndex:
    """The lexicons (by name) each first word, or word beginning, can start."""

    by_word: Mapping[str, frozenset[str]]
    by_beginning: Mapping[str, frozenset[str]]
    # The lengths of the beginnings, so a text's word is looked up only at those lengths.
    beginning_lengths: tuple[int, ...]
    # Lexicons a term of which starts with something other than a word: searched whole.
    scanned: frozenset[str]
    _memo: dict[str, frozenset[str]] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, lexicons: Mapping[str, Iterable[str]]) -> TermIndex:
        """The index of `lexicons`, name → raw terms (as written in the data files)."""
        by_word: dict[str, set[str]] = defaultdict(set)
        by_beginning: dict[str, set[str]] = defaultdict(set)
        scanned = set()
        for name, terms in lexicons.items():
            for term in terms:
                first = _FIRST_WORD.match(fold(term.strip()))
                if first is None:
                    scanned.add(name)
                elif first[2]:
                    by_beginning[first[1]].add(name)
                else:
                    by_word[first[1]].add(name)
        return cls(
            {w: frozenset(n) for w, n in by_word.items()},
            {b: frozenset(n) for b, n in by_beginning.items()},
            tuple(sorted({len(b) for b in by_beginning})),
            frozenset(scanned),
        )

    def starts(self, folded: str) -> Starts:
        """Where each lexicon can match in `folded` (a folded text)."""
        found: dict[str, list[int]] = {}
        for word in _WORD.finditer(folded):
            at = word.start()
            for name in self.lexicons_of(word.group()):
                found.setdefault(name, []).append(at)
        return Starts(folded, found, self.scanned)

    def lexicons_of(self, word: str) -> frozenset[str]:
        """The lexicons a term of which can start with `word` (remembered per word, up to
        MEMO_LIMIT words, so a text of random words cannot grow the memo forever)."""
        names = self._memo.get(word)
        if names is None:
            names = self.by_word.get(word, frozenset()).union(
                *(
                    self.by_beginning.get(word[:length], ())
                    for length in self.beginning_lengths
                    if length <= len(word)
                )
            )
            if len(self._memo) < MEMO_LIMIT:
                self._memo[word] = names
        return names


@dataclass(frozen=True)
class Starts:
    """The offsets of the words of one folded text where each lexicon can start a match."""

    folded: str
    at: Mapping[str, list[int]]
    scanned: frozenset[str]

    def finditer(self, name: str, pattern: re.Pattern[str]) -> Iterator[re.Match[str]]:
        """`pattern.finditer(folded)` for lexicon `name`, tried only where it can start: the
        same matches, leftmost first and never overlapping."""
        if name in self.scanned:
            yield from pattern.finditer(self.folded)
            return
        end = 0
        for at in self.at.get(name, ()):
            if at < end:
                continue
            match = pattern.match(self.folded, at)
            if match is not None and match.end() > at:
                end = match.end()
                yield match

    def search(self, name: str, pattern: re.Pattern[str]) -> bool:
        """Whether `pattern` (lexicon `name`'s) matches anywhere in the text."""
        if name in self.scanned:
            return pattern.search(self.folded) is not None
        return any(pattern.match(self.folded, at) is not None for at in self.at.get(name, ()))
