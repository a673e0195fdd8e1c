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
from typing import Any

from workers.analysis.text import fold

_WORD = re.compile(r"\w+")
# Words whose lexicons an index remembers, and the longest it remembers (a 100,000-letter
# "word" is looked up each time, not kept).
MEMO_LIMIT = 50_000
MEMO_WORD_MAX = 40
# A lexicon with more places to try than one in this many characters of a text is scanned
# whole instead ("a.a.a.…", "nu nu nu …": every word can start a term): a match costs
# about as much as scanning twenty characters. The scan finds the same matches.
SCAN_RATIO = 20
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
    # The words of a text that start a term of some lexicon: one scan finds them all.
    candidates: re.Pattern[str]
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
            re.compile(rf"(?<!\w){_trie(by_word, by_beginning)}"),
        )

    def starts(self, folded: str) -> Starts:
        """Where each lexicon can match in `folded` (a folded text)."""
        memo = self._memo
        # The words' offsets by the set of lexicons they can start: one append per word.
        by_names: dict[frozenset[str], list[int]] = {}
        for word in self.candidates.finditer(folded):
            text = word.group()
            names = memo.get(text)
            if names is None:
                names = self.lexicons_of(text)
            by_names.setdefault(names, []).append(word.start())
        found: dict[str, list[int]] = {}
        for names, offsets in by_names.items():
            for name in names:
                found.setdefault(name, []).extend(offsets)
        for offsets in found.values():
            offsets.sort()  # runs of sorted offsets: linear
        # Past this many places, one scan of the text costs less than a match at each.
        crowded = len(folded) // SCAN_RATIO + 1
        scanned = self.scanned | {n for n, offsets in found.items() if len(offsets) > crowded}
        return Starts(folded, found, scanned)

    def lexicons_of(self, word: str) -> frozenset[str]:
        """The lexicons a term of which can start with `word` (remembered per word of up to
        MEMO_WORD_MAX letters, up to MEMO_LIMIT words, so a text of random words cannot grow
        the memo forever)."""
        names = self._memo.get(word)
        if names is None:
            names = self.by_word.get(word, frozenset()).union(
                *(
                    self.by_beginning.get(word[:length], ())
                    for length in self.beginning_lengths
                    if length <= len(word)
                )
            )
            if len(self._memo) < MEMO_LIMIT and len(word) <= MEMO_WORD_MAX:
                self._memo[word] = names
        return names


def _trie(words: Iterable[str], beginnings: Iterable[str]) -> str:
    """A regex that matches, at a word's start, the whole word when it is one of `words` or
    begins with one of `beginnings`; written as a trie, so a position is tried against the
    words that share its first letters, not against every word."""
    trie: dict[str, Any] = {}
    for ending, keys in ((_WORD_END, words), (_BEGINNING_END, beginnings)):
        for key in keys:
            node = trie
            for char in key:
                node = node.setdefault(char, {})
            node[ending] = True
    return _node(trie) if trie else "(?!)"


# Trie leaves (keys no single letter can be): a whole word ends here, or a beginning does.
_WORD_END, _BEGINNING_END = "", "..."


def _node(node: Mapping[str, Any]) -> str:
    branches = [re.escape(c) + _node(child) for c, child in sorted(node.items()) if len(c) == 1]
    if _BEGINNING_END in node:
        branches.append(r"\w*+")  # possessive: the match always takes the whole word
    elif _WORD_END in node:
        branches.append(r"(?!\w)")
    return branches[0] if len(branches) == 1 else f"(?:{'|'.join(branches)})"


@dataclass(frozen=True)
class Starts:
    """The offsets of the words of one folded text where each lexicon can start a match;
    the lexicons in `scanned` are searched whole."""

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

    def possible(self, names: Iterable[str]) -> set[str]:
        """Those of `names` that can match somewhere in the text: the lexicons with a word
        to start at and those searched whole (most sentences have none)."""
        return (self.at.keys() | self.scanned) & set(names)

    def search(self, name: str, pattern: re.Pattern[str]) -> bool:
        """Whether `pattern` (lexicon `name`'s) matches anywhere in the text."""
        if name in self.scanned:
            return pattern.search(self.folded) is not None
        offsets = self.at.get(name)
        if not offsets:  # most lexicons, in most sentences
            return False
        return any(pattern.match(self.folded, at) is not None for at in offsets)
