"""Text as the analysers read it, with a map back to the text the client sent.

Manipulative text can hide from a lexicon behind characters a reader never sees or
cannot tell apart: zero-width joiners inside words, bidi controls, fullwidth or
mathematical letters, Cyrillic and Greek look-alikes. `normalise` undoes that:

- invisible characters are dropped: every format character (Unicode category Cf:
  zero-width spaces and joiners, bidi embeddings, overrides and isolates, the BOM,
  soft hyphens), the combining grapheme joiner, variation selectors and the Hangul
  fillers used as blank letters;
- each character with its combining marks is put in NFKC form (fullwidth and
  mathematical letters become plain ones, ş + ̦ compose); a letter keeps at most
  MAX_MARKS_PER_LETTER marks, the rest of a "zalgo" pile is dropped;
- look-alike letters are folded to the Latin letter they imitate (the Unicode
  confusables table, as shipped by `confusable-homoglyphs`), keeping their case.
  Look-alikes that are themselves Latin (ɑ, ı, ꜱ) are always folded. A Cyrillic,
  Greek or other letter is folded only inside a word that also has a Latin letter,
  or in a word made only of look-alikes when most words of the text are Latin:
  genuine Cyrillic text ("Путин", "сегодня") stays as it is. Romanian letters
  (ă â î ș ş ț ţ) are Latin and never folded.

Every character of the result records the span of the original it came from, so a
match in the normalised text maps back to an original substring (`span`, `quote`).
One pass per step and a bounded amount of work per character: linear on any input.
"""

from __future__ import annotations

import itertools
import operator
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

# Enough for any real letter (Vietnamese stacks two); the rest of a pile is noise.
MAX_MARKS_PER_LETTER = 3
# Invisible characters outside category Cf: combining grapheme joiner, Hangul fillers.
_EXTRA_INVISIBLE = frozenset("\u034f\u115f\u1160\u3164\uffa0")
# Romanian letters are Latin: listed so no table entry can ever fold them away.
ROMANIAN_LETTERS = frozenset("ăâîșşțţĂÂÎȘŞȚŢ")
# Scripts whose look-alikes are folded wherever they occur.
_LATIN_LIKE_SCRIPTS = frozenset({"LATIN", "COMMON"})
# Stop memoising characters past this many distinct ones (a text of random code points).
_MEMO_LIMIT = 20_000


@dataclass(frozen=True)
class NormalisedText:
    """The normalised text, the original, and where each normalised character came from.

    `starts[i]`/`ends[i]` delimit the original characters that produced character i;
    both are None when the text needed no change (then offsets are shared).
    """

    text: str
    original: str
    starts: Sequence[int] | None = None
    ends: Sequence[int] | None = None

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original span [start, end) that the normalised span [start, end) came from."""
        if self.starts is None or self.ends is None:
            return start, end
        if end <= start:
            at = self.starts[start] if start < len(self.starts) else len(self.original)
            return at, at
        return self.starts[start], self.ends[end - 1]

    def quote(self, start: int, end: int) -> str:
        """The original substring behind the normalised span [start, end)."""
        first, last = self.span(start, end)
        return self.original[first:last]


def normalise(text: str, *, fold_look_alikes: bool = True) -> NormalisedText:
    """`text` without invisible characters, in NFKC, look-alikes folded (see module doc).

    `fold_look_alikes=False` keeps look-alikes as they are (for host names, where a
    look-alike is the evidence).
    """
    if text.isascii():
        return NormalisedText(text, text)
    work = _work()
    if work.invisible.isdisjoint(text) and not work.changed.search(text):
        # Already visible and in NFKC (most text is): offsets are shared; folding keeps them.
        clean = _fold_look_alikes(text) if fold_look_alikes else text
        return NormalisedText(clean, text)
    chars, starts, ends = _visible_nfkc(text, work)
    clean = "".join(chars)
    if fold_look_alikes:
        clean = _fold_look_alikes(clean)
    return NormalisedText(clean, text, starts, ends)


def prepare() -> None:
    """Build the tables now (about 0.3 s of CPU, once per process) rather than on first use.

    A process pool that forks its workers after calling this gives them ready tables.
    """
    _work()
    _folding()


_memo: dict[str, str | None] = {}
_UNKNOWN = "\x00unknown"


def _replacement(ch: str) -> str | None:
    """What a character becomes on its own: "" if invisible, None for a combining mark."""
    found = _memo.get(ch, _UNKNOWN)
    if found is not _UNKNOWN:
        return found
    category = unicodedata.category(ch)
    result: str | None
    if category == "Cf" or ch in _EXTRA_INVISIBLE or _is_variation_selector(ch):
        result = ""
    elif category[0] == "M":
        result = None
    else:
        result = unicodedata.normalize("NFKC", ch)
    if len(_memo) < _MEMO_LIMIT:
        _memo[ch] = result
    return result


def _is_variation_selector(ch: str) -> bool:
    return "\ufe00" <= ch <= "\ufe0f" or "\U000e0100" <= ch <= "\U000e01ef"


@dataclass(frozen=True)
class _Work:
    """What pass 1 looks for, built once from the Basic Multilingual Plane."""

    changed: re.Pattern[str]  # a mark, an NFKC-changed or an astral character
    special: re.Pattern[str]  # a run of those or of invisible characters
    invisible: frozenset[str]  # invisible characters of the BMP
    one_for_one: dict[int, str]  # characters NFKC turns into one character (astral: lazily)
    not_one_for_one: re.Pattern[str]  # a special BMP character not in `one_for_one`
    not_one_for_one_astral: frozenset[str]  # astral marks, invisibles and expansions


@lru_cache(maxsize=1)
def _work() -> _Work:
    changed: list[tuple[int, int]] = []
    special: list[tuple[int, int]] = []
    other: list[tuple[int, int]] = []
    invisible: set[str] = set()
    one_for_one = _OneForOne()
    for code in range(0x80, 0x10000):
        ch = chr(code)
        replacement = _replacement(ch)
        if 0xD800 <= code <= 0xDFFF or replacement == ch:
            continue
        if replacement == "":
            invisible.add(ch)
        else:
            _add(changed, code)
        if replacement is not None and len(replacement) == 1:
            one_for_one[code] = replacement
        else:
            _add(other, code)
        _add(special, code)
    # Astral characters are all special (checked one by one); the planes with marks,
    # invisible or expanding characters are swept for those (plane 1, tags and selectors).
    other_astral: set[str] = set()
    for code in itertools.chain(range(0x10000, 0x20000), range(0xE0000, 0xE1000)):
        replacement = _replacement(chr(code))
        if replacement is None or len(replacement) != 1:
            other_astral.add(chr(code))
    _memo.clear()  # the sweep filled it with characters no text may ever use
    # sre keeps a BMP-only class as a bitmap, one with astral ranges as a list: two classes.
    astral = "[\\U00010000-\\U0010ffff]"
    return _Work(
        changed=re.compile(f"[{_ranges(changed)}]|{astral}"),
        special=re.compile(f"(?:[{_ranges(special)}]|{astral})++"),
        invisible=frozenset(invisible),
        one_for_one=one_for_one,
        not_one_for_one=re.compile(f"[{_ranges(other)}]"),
        not_one_for_one_astral=frozenset(other_astral),
    )


class _OneForOne(dict[int, str]):
    """Translation to NFKC of characters that stay one character; astral ones filled lazily."""

    def __missing__(self, code: int) -> str:
        replacement = unicodedata.normalize("NFKC", chr(code))
        if len(self) < _MEMO_LIMIT * 4:
            self[code] = replacement
        return replacement


def _add(ranges: list[tuple[int, int]], code: int) -> None:
    if ranges and ranges[-1][1] == code - 1:
        ranges[-1] = (ranges[-1][0], code)
    else:
        ranges.append((code, code))


def _ranges(ranges: list[tuple[int, int]]) -> str:
    return "".join(f"\\u{lo:04x}-\\u{hi:04x}" for lo, hi in ranges)


def _visible_nfkc(text: str, work: _Work) -> tuple[list[str], list[int], list[int]]:
    """Pass 1: drop invisibles, NFKC each letter with its (capped) marks, record origins."""
    if not work.changed.search(text):
        # Only invisibles to drop (the common evasion): C-speed, no loop in Python.
        kept = map(operator.not_, map(work.invisible.__contains__, text))
        starts = list(itertools.compress(range(len(text)), kept))
        chars = [text[i] for i in starts] if len(starts) < len(text) else list(text)
        return chars, starts, list(map(operator.add, starts, itertools.repeat(1)))
    return _visible_nfkc_slowly(text, work)


def _visible_nfkc_slowly(text: str, work: _Work) -> tuple[list[str], list[int], list[int]]:
    """Pass 1 character by character where characters change; runs of others in bulk."""
    chars: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    base_at = -1  # where the current letter's output begins in `chars`
    cluster = ""  # the current letter and its kept marks, as written
    copied = 0  # text[:copied] is handled
    for run in work.special.finditer(text):
        first, stop = run.span()
        if first > copied:  # ordinary characters, copied as they are
            chars.extend(text[copied:first])
            starts.extend(range(copied, first))
            ends.extend(range(copied + 1, first + 1))
            base_at, cluster = len(chars) - 1, text[first - 1]
        copied = stop
        segment = text[first:stop]
        if not work.not_one_for_one.search(segment) and work.not_one_for_one_astral.isdisjoint(
            segment
        ):
            # Fullwidth or mathematical letters, emoji: one for one, translated in bulk.
            chars.extend(segment.translate(work.one_for_one))
            starts.extend(range(first, stop))
            ends.extend(range(first + 1, stop + 1))
            base_at, cluster = len(chars) - 1, text[stop - 1]
            continue
        for i in range(first, stop):
            ch = text[i]
            replacement = _memo.get(ch, _UNKNOWN)
            if replacement is _UNKNOWN:
                replacement = _replacement(ch)
            if replacement == "":
                continue
            if replacement is not None:
                base_at, cluster = len(chars), ch
                if len(replacement) == 1:
                    chars.append(replacement)
                    starts.append(i)
                    ends.append(i + 1)
                else:
                    _emit(chars, starts, ends, replacement, i, i + 1)
            elif base_at >= 0 and len(cluster) <= MAX_MARKS_PER_LETTER:
                # A mark: re-emit its letter composed with the marks so far, spanning them.
                cluster += ch
                origin = starts[base_at]
                del chars[base_at:], starts[base_at:], ends[base_at:]
                _emit(chars, starts, ends, unicodedata.normalize("NFKC", cluster), origin, i + 1)
            # else a mark with nothing to sit on, or one too many: dropped
    if copied < len(text):
        chars.extend(text[copied:])
        starts.extend(range(copied, len(text)))
        ends.extend(range(copied + 1, len(text) + 1))
    return chars, starts, ends


def _emit(
    chars: list[str], starts: list[int], ends: list[int], out: str, start: int, end: int
) -> None:
    chars.extend(out)
    starts.extend([start] * len(out))
    ends.extend([end] * len(out))


@lru_cache(maxsize=1)
def look_alikes() -> dict[str, tuple[str, bool]]:
    """Letter → (Latin letter it imitates, fold everywhere?) from the Unicode confusables.

    Case is kept (Cyrillic "А" → "A", "а" → "a"); the second value is true for
    look-alikes of Latin or common script, which no RO/EN word uses genuinely.
    """
    from confusable_homoglyphs import categories, confusables

    table: dict[str, tuple[str, bool]] = {}
    for ch, glyphs in confusables.confusables_data.items():
        if len(ch) != 1 or ch.isascii() or not ch.isalpha() or ch in ROMANIAN_LETTERS:
            continue
        if unicodedata.normalize("NFKC", ch) != ch:
            continue  # NFKC turns it into a plain letter before this table is read
        latin = [g["c"] for g in glyphs if len(g["c"]) == 1 and g["c"].isascii()]
        latin = [c for c in latin if c.isalpha()]
        if latin:
            everywhere = categories.alias(ch) in _LATIN_LIKE_SCRIPTS
            table[ch] = (_with_case_of(ch, latin[0]), everywhere)
    return table


def _with_case_of(source: str, target: str) -> str:
    """`target` in the case of `source`; I and l are each other's look-alikes."""
    if source.isupper():
        return "I" if target in "Il" else target.upper()
    return "l" if target == "I" else target.lower()


@dataclass(frozen=True)
class _Folding:
    """The look-alike table as regular expressions and translation tables."""

    look_alike: re.Pattern[str]  # one look-alike letter
    latin: re.Pattern[str]  # one Latin letter
    foreign: re.Pattern[str]  # one letter neither Latin nor a look-alike
    always: dict[int, str]  # look-alikes folded everywhere
    every: dict[int, str]  # every look-alike


# Latin letters: ASCII, Latin-1, Extended-A/B, Extended Additional.
_LATIN_RANGES = "A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u1e00-\u1eff"
_LETTER = re.compile(r"[^\W\d_]")
_LETTERS = re.compile(r"[^\W\d_]++")


@lru_cache(maxsize=1)
def _folding() -> _Folding:
    table = look_alikes()
    basic = re.escape("".join(sorted(c for c in table if c <= "\uffff")))
    astral = re.escape("".join(sorted(c for c in table if c > "\uffff")))
    # sre keeps a BMP-only class as a bitmap; the few astral ones sit behind a range check.
    look_alike = f"[{basic}]|(?=[\\U00010000-\\U0010ffff])[{astral}]"
    return _Folding(
        look_alike=re.compile(look_alike),
        latin=re.compile(f"[{_LATIN_RANGES}]"),
        foreign=re.compile(f"(?![{_LATIN_RANGES}]|{look_alike})[^\\W\\d_]"),
        always={ord(c): latin for c, (latin, everywhere) in table.items() if everywhere},
        every={ord(c): latin for c, (latin, _) in table.items()},
    )


def _fold_look_alikes(text: str) -> str:
    """Pass 2: fold look-alikes, word by word (see the module doc for which). Same length."""
    if look_alikes().keys().isdisjoint(text):
        return text
    folding = _folding()
    latin = folding.latin.subn("", text)[1]
    foreign = _LETTER.subn("", text)[1] - latin - folding.look_alike.subn("", text)[1]
    mostly_latin = latin > foreign
    pieces: list[str] = []
    copied = 0
    for word in _LETTERS.finditer(text):
        letters = word.group()
        if not folding.look_alike.search(letters):
            continue
        pieces.append(text[copied : word.start()])
        has_latin = folding.latin.search(letters) is not None
        fold_all = has_latin or (mostly_latin and not folding.foreign.search(letters))
        pieces.append(letters.translate(folding.every if fold_all else folding.always))
        copied = word.end()
    pieces.append(text[copied:])
    return "".join(pieces)
