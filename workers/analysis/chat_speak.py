"""Chat spellings spelled out, so a lexicon written in full words reads text typed fast.

People on phones and in comment sections write "u", "ur", "pls", "ppl", "dont", "b4", and in
Romanian "pt", "nush", "trb", "dc": a lexicon that knows "share to protect your loved ones"
or "nu știu" misses "SHARE to protect ur loved ones" and "nush". `spelled_out` replaces each
such word of a normalised text with its full spelling, and keeps the map back to the
original (`NormalisedText.span`), so evidence still quotes what the client sent.

Only whole words stand alone in running text are replaced: not inside a link, a host, an
e-mail address, a path or a hashtag ("bit.ly/u", "u.nu", "r/conspiracy", "#ppl"), and a word
in capitals is spelled out in capitals ("U MUST" → "YOU MUST"). The list holds spellings
that are no other word in either language; where a spelling is also a word in its own right
in capitals ("BC", "DC", "PT"), only the lower-case spelling is replaced.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from workers.analysis.normalise import NormalisedText, normalise

# Spelled out whatever their case ("U", "Ur", "PLS").
_ANY_CASE: Mapping[str, str] = {
    # English
    "u": "you",
    "ur": "your",
    "urs": "yours",
    "pls": "please",
    "plz": "please",
    "ppl": "people",
    "b4": "before",
    "cuz": "because",
    "coz": "because",
    "bcuz": "because",
    "thx": "thanks",
    "thnx": "thanks",
    "msg": "message",
    "govt": "government",
    "tmrw": "tomorrow",
    "2moro": "tomorrow",
    "2day": "today",
    "abt": "about",
    "yr": "year",
    "yrs": "years",
    "dont": "don't",
    "doesnt": "doesn't",
    "didnt": "didn't",
    "isnt": "isn't",
    "arent": "aren't",
    "wasnt": "wasn't",
    "werent": "weren't",
    "couldnt": "couldn't",
    "shouldnt": "shouldn't",
    "wouldnt": "wouldn't",
    "havent": "haven't",
    "hasnt": "hasn't",
    "theyre": "they're",
    "youre": "you're",
    "thats": "that's",
    "whats": "what's",
    "theres": "there's",
    "ive": "I've",
    "im": "I'm",
    # Romanian
    "nush": "nu știu",
    "nushtiu": "nu știu",
    "ptr": "pentru",
    "trb": "trebuie",
    "tre": "trebuie",
    "cnv": "cineva",
    "nmc": "nimic",
    "dpdv": "din punct de vedere",
}
# Spelled out in lower case only: in capitals each is something else (BC, DC, PT, CV, TB,
# the letter R).
_LOWER_ONLY: Mapping[str, str] = {
    "r": "are",
    "bc": "because",
    "rn": "right now",
    "pt": "pentru",
    "dc": "de ce",
    "cv": "ceva",
    "tb": "trebuie",
}

# One of the spellings standing alone: after the start, a space or an opening bracket or
# quote; before the end, a space, or punctuation that ends a phrase (a full stop only before
# a space or the end).
_SPELLING = re.compile(
    r"(?<![^\s(\[\"'“„«])("
    + "|".join(sorted(map(re.escape, {*_ANY_CASE, *_LOWER_ONLY}), key=len, reverse=True))
    + r")(?=$|[\s,;!?)\]\"'”»]|[.:](?:\s|$))",
    re.IGNORECASE,
)


_SPELLINGS = frozenset({*_ANY_CASE, *_LOWER_ONLY})
# What may stand before or after a spelling that `_SPELLING` still takes for one.
_EDGES = "([\"'“„«,;!?)]”».:"


def _full(word: str) -> str | None:
    lower = word.lower()
    full = _ANY_CASE.get(lower)
    if full is None and word == lower:
        full = _LOWER_ONLY.get(lower)
    if full is None:
        return None
    if word.isupper() and (len(word) > 1 or lower == "u"):
        return full.upper()
    if word[0].isupper():
        return full[0].upper() + full[1:]
    return full


def read_form(text: str) -> NormalisedText:
    """`text` as the text analysers read it: normalised, chat spellings written in full. A
    model's quote or a tenant's term is read the same way before it is looked for."""
    return spelled_out(normalise(text))


def spelled_out(clean: NormalisedText) -> NormalisedText:
    """`clean` with each chat spelling of the lists written in full; every character of a
    spelled-out word maps back to the whole word it replaced."""
    text = clean.text
    # Most texts hold none: a split and a set test (a tenth of a scan with the pattern).
    if _SPELLINGS.isdisjoint(word.strip(_EDGES) for word in text.lower().split()):
        return clean
    pieces: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    copied = 0
    for m in _SPELLING.finditer(text):
        full = _full(m[1])
        if full is None:
            continue
        _copy(clean, copied, m.start(), pieces, starts, ends)
        start, end = clean.span(m.start(), m.end())
        pieces.append(full)
        starts.extend([start] * len(full))
        ends.extend([end] * len(full))
        copied = m.end()
    if not pieces:
        return clean
    _copy(clean, copied, len(text), pieces, starts, ends)
    return NormalisedText("".join(pieces), clean.original, starts, ends)


def _copy(
    clean: NormalisedText,
    first: int,
    last: int,
    pieces: list[str],
    starts: list[int],
    ends: list[int],
) -> None:
    """Characters [first, last) of `clean` as they are, with where each came from."""
    pieces.append(clean.text[first:last])
    if clean.starts is None or clean.ends is None:
        starts.extend(range(first, last))
        ends.extend(range(first + 1, last + 1))
    else:
        starts.extend(clean.starts[first:last])
        ends.extend(clean.ends[first:last])
