"""What the words around a cue do to it: a slogan quoted in a news report is not the
slogan, a claim introduced by "it is not true that" is not the claim, satire says so.

Pure functions of the normalised, folded text and its words; the result is a factor
(0..1) that a finding's weight is multiplied by.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from workers.analysis.satire import credited_to_satire, satire_disowned

# Quoted passages: „…” and "…" (Romanian and English), «…», “…”, ‘…’ and '…' between
# non-letters, whose inside may hold a word's apostrophe ('If this wasn't you, call…').
# Bounded and possessive: each opening mark scans at most 400 characters.
_QUOTED = re.compile(
    r"„[^”“\"\n]{1,400}+[”“\"]|«[^»\n]{1,400}+»|“[^”\n]{1,400}+”|\"[^\"\n]{1,400}+\""
    r"|‘[^’\n]{1,400}+’|(?<!\w)'(?:[^'\n]|(?<=\w)'(?=\w)){1,400}+'(?!\w)"
)
# Sentence ends; a quote's inner "." also ends one, which only makes sentences shorter.
# A point between digits ("1.45 GBP", "2.000 de lei") is part of a number, not an end.
_SENTENCE_END = re.compile(r"[.!?…\n]++(?!\d)")
# A satire label counts near the start or the end of a text, where sites put it.
SATIRE_LABEL_REACH = 300
# How far (characters) from a quote its speaker's verb may be: "X said:" / "…, he said."
ATTRIBUTION_REACH = 80

# Factors, each the share of a cue's weight that still counts.
# Quoted and attributed ("the protesters chanted «…»"): the report is not the slogan.
QUOTED_ATTRIBUTED = 0.0
# Quoted without a speaker: often scare quotes, which are a technique of their own.
QUOTED = 0.5
# Reported speech without quotes ("the minister said that …"): mostly reporting.
REPORTED = 0.3
# Introduced as false ("it is not true that …", "nu este adevărat că …").
DENIED = 0.0
# Labelled satire: the reader is told it is not meant.
SATIRE = 0.25
# A service's own notice, which says what it will never ask ("Coinbase will never ask for your
# password", "Nu îți vom cere niciodată parola"): its deadline, its "if this wasn't you, lock
# your account" and its form to fill are the service's, at half weight (round 23: 74 texts of
# dev hold such a line, every one labelled techniques low; phishing copies it seldom, and its
# host is the domain component's to read). Only the families a lure is made of count less.
OWN_NOTICE = 0.5
# The learned wording cue too (round 24): a notice names what a lure asks for ("DWP will never
# ask you to pay a fee or share your bank PIN"), and the model reads those words as a lure's.
NOTICE_KINDS = frozenset({"pressure", "urgency", "data_request", "learned_wording"})
# Larger than any offset: (start, _AFTER_ANY) sorts after every span that starts at start.
_AFTER_ANY = 1 << 62


@dataclass(frozen=True)
class TextContext:
    """Where the quotes, sentence ends, speakers' verbs and denials of one text are."""

    quotes: Sequence[tuple[int, int]]
    sentence_ends: Sequence[int]
    attributions: Sequence[tuple[int, int]]
    denials: Sequence[tuple[int, int]]
    satire: bool
    # The text is a service's own notice (`OWN_NOTICE`).
    notice: bool = False
    # The quotes are a message the writer received and passes on or asks about, without
    # calling it a scam (`passed_on`): the lure itself, not a report of it.
    passed_on: bool = False

    def sentence_of(self, at: int) -> int:
        return bisect_right(self.sentence_ends, at)

    def factor(self, start: int, end: int, spread: bool = False) -> float:
        """The share of a finding's weight that counts at [start, end); a `spread` finding
        (a cue's words with others between them) can be introduced from inside."""
        share = SATIRE if self.satire else 1.0
        quote = self._quote_around(start, end)
        if quote is not None:
            if self.passed_on:
                return share
            attributed = self._attribution_near(*quote)
            return share * (QUOTED_ATTRIBUTED if attributed else QUOTED)
        last = end if spread else start + 1
        if self._introduced(self.denials, start, last):
            return share * DENIED
        if self._introduced(self.attributions, start, last):
            return share * REPORTED
        return share

    def kind_factor(self, kind: str) -> float:
        """The share of a finding of technique `kind` that counts in this text as a whole."""
        return OWN_NOTICE if self.notice and kind in NOTICE_KINDS else 1.0

    def discounted(self, length: int) -> list[tuple[int, int]]:
        """Sorted spans outside which nothing but satire lowers a word's share: the quotes,
        and each sentence from a speaker's verb or a denial on (`length`: the text's)."""
        spans = list(self.quotes)
        for start, _ in [*self.attributions, *self.denials]:
            i = self.sentence_of(start)
            spans.append((start, self.sentence_ends[i] if i < len(self.sentence_ends) else length))
        return sorted(spans)

    def _quote_around(self, start: int, end: int) -> tuple[int, int] | None:
        """The quote that holds the start or the end of [start, end): a cue whose words run
        into a quote ("they chanted «…»") is the quote's."""
        for at in (start, end - 1):
            i = bisect_right(self.quotes, (at, _AFTER_ANY)) - 1
            if i >= 0 and self.quotes[i][0] <= at < self.quotes[i][1]:
                return self.quotes[i]
        return None

    def _attribution_near(self, start: int, end: int) -> bool:
        i = bisect_left(self.attributions, (start - ATTRIBUTION_REACH, -1))
        return i < len(self.attributions) and self.attributions[i][0] <= end + ATTRIBUTION_REACH

    def _introduced(self, spans: Sequence[tuple[int, int]], start: int, end: int) -> bool:
        """Whether one of `spans` (speakers' verbs, denials) introduces the finding: before
        it in its sentence, or inside it between its first and last words ("the senator said
        those refugees are …" is one cue from "senator"). A finding that starts or ends with
        the word ("call your MP", "the media will not tell") is not introduced by it."""
        sentence = self.sentence_of(start)
        i = bisect_left(spans, (end, -1)) - 1
        while i >= 0 and self.sentence_of(spans[i][0]) == sentence:
            if spans[i][0] != start and spans[i][1] < end:
                return True
            i -= 1
        return False


def quotes(folded: str) -> list[tuple[int, int]]:
    """Spans of the quoted passages, marks included, in order."""
    return [m.span() for m in _QUOTED.finditer(folded)]


def passed_on(
    folded: str,
    quoted: Sequence[tuple[int, int]],
    received: re.Pattern[str] | None,
    recognised: re.Pattern[str] | None,
) -> bool:
    """Whether the quotes of a text are a lure its writer got and passes on or asks about
    ("Nan forwarded me this, is it real?? 'Tesla UK: Congratulations! … tsla-….shop'",
    "Uite ce mi-a venit, intru? „… 89,20 lei … ppc-….info”"): the writer's own words, outside
    the quotes, say so and do not call it a scam ("E țeapă, nu?", "didn't click"), and what
    is quoted carries a lure's sign, a link or a sum of money. A report quotes a lure to warn
    of it; a forward is the lure, sent on (round 28); a forwarded notice or advice with
    neither ("the vet says chocolate is toxic to dogs, is it real?") is told of. Pure."""
    if not quoted or received is None:
        return False
    if not any(_LURE_SIGN.search(folded, start, end) for start, end in quoted):
        return False
    frame = list(folded)
    for start, end in quoted:
        frame[start:end] = " " * (end - start)
    own = "".join(frame)
    if not received.search(own):
        return False
    return recognised is None or not recognised.search(own)


# A lure's sign inside a quote: a link or a bare host, or a sum of money.
_LURE_SIGN = re.compile(
    r"https?://|www\.|[a-z0-9-]\.(?:com|net|org|info|top|xyz|online|site|club|shop|live|click"
    r"|icu|biz|store|link|win|vip|app|io|me|co|uk|ro)\b"
    r"|[£$€]\s?\d|\d[\d.,]{0,12}+\s?(?:lei|ron|eur|euro|gbp|usd|pounds?|dollars?)\b"
)


def sentence_ends(folded: str) -> list[int]:
    return [m.end() for m in _SENTENCE_END.finditer(folded)]


def labelled_satire(folded: str, label: re.Pattern[str] | None) -> bool:
    """Whether a satire label ("satiră", "pamflet", "satire") opens or closes the text, or
    the text is credited to a satire outlet ("Times New Roman: …", satire.py)."""
    if credited_to_satire(folded):
        return True
    if label is None or satire_disowned(folded):
        return False
    head = label.search(folded, 0, SATIRE_LABEL_REACH)
    return bool(head or label.search(folded, max(0, len(folded) - SATIRE_LABEL_REACH)))


# What a warning tells the reader never to do, or advises whoever already did it, is no
# lure's request ("never enter your PIN", "nu introduceți datele cardului", "if you've
# entered your card details, call your bank", "cei care au introdus deja datele"; round 26:
# five warnings of four writers read as a request for data). A "not" just before the verb
# forbids only when it opens its clause ("please do not", "vă rugăm să nu"): "if you do not
# verify", "dacă nu confirmați", "why not update", "If not, verify" are still requests; and
# what was done counts only when it was not denied ("pentru că nu ați confirmat adresa").
_NEGATIONS = frozenset({"not", "t", "never", "nu", "niciodata", "nici"})
# Words that may open a prohibition before its "not" ("don" of "don't", "please", "să",
# "niciodată nu").
_PROHIBITION_OPENERS = frozenset(
    {"do", "don", "please", "you", "should", "so", "just", "never"}
    | {"va", "rugam", "sa", "te", "rog", "niciodata"}
)
# Words that may stand between the "not" and its verb ("don't ever enter", "nu vă introduceți").
_BETWEEN = frozenset({"ever", "va", "iti", "ti", "vreodata"})
# Auxiliaries of what was done ("you've entered", "have already given", "ați introdus").
_DONE = frozenset({"ve", "have", "has", "had", "already", "ati", "au", "ai", "am"})
# Where a clause ends, in folded text: punctuation, or "and"/"or"/"but" and their Romanian.
_CLAUSE_BREAK = re.compile(r"[,;:()\u2013\u2014]|\s-\s|\b(?:and|or|but|si|sau|dar|iar)\b")
_WORD = re.compile(r"\w+")


def advises_against(before: str) -> bool:
    """Whether a verb whose sentence runs `before` it (folded text, from the sentence's
    start) is forbidden or told of as done: "never", "don't", "nu" opening its clause, or a
    "have"/"ați" not denied, right before it. Pure."""
    words = _WORD.findall(_CLAUSE_BREAK.split(before)[-1])
    while words and words[-1] in _BETWEEN:
        words.pop()
    if not words:
        return False
    if words[-1] in _NEGATIONS:
        return all(w in _PROHIBITION_OPENERS for w in words[:-1])
    if words[-1] in _DONE:
        return not _NEGATIONS & set(words[-3:-1])
    return False
