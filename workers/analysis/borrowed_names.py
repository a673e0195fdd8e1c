"""A host that borrows the name the message itself gives: "Dyson Airwrap … dyson-uk-outlet.shop",
"Synevo: rezultatele … synevo-rezultate.live", "AIB: … aib-ie.secure-review.info". No list of
brands can hold every shop, lab, bank and office a lure names; the message names it, and a
host that sets that name beside a word asking for a sign-in or money, or posing as the name's
own outlet, is dressing up as it. Pure.

A name is a word the text writes as one: a capital first letter or all capitals, outside
links and bare hosts (a host's own letters name nothing), its possessive dropped ("Dyson's"),
and two such words side by side run together ("Quantum AI" → quantumai). A coined product
name with a capital inside ("KetoSlim", "GlucoHerb") is a product's own brand, sold on its own
site, and not read: the analyser does not judge a shop by its goods. The words an honest
outlet, shop or campaign names itself with ("news", "online", "store", "vote") are no sign.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from workers.analysis.registrable import HostParts
from workers.analysis.text import fold

# Words of a text read for its names: names written further on are not read. (The text's
# other passes, its normal form and its links taken out, are linear in its length.)
MAX_WORDS = 5_000
# A name borrowed must be this long ("ee-billing.com" is no sign: two letters are a coincidence).
MIN_NAME_LETTERS = 3
# Two capitalised words this close (a space or two) are one name as well.
MAX_GAP = 2

_WORD = re.compile(r"[^\W\d_](?:[^\W\d_]|['’](?=[^\W\d_]))*")
_POSSESSIVE = re.compile(r"['’]s\Z")


@dataclass(frozen=True)
class BorrowingWords:
    """What a borrowed name must stand beside to count (`domains.yaml`)."""

    anywhere: frozenset[str]  # a sign-in or money word, or "official": on any TLD
    on_cheap_tld: frozenset[str]  # an outlet's pose ("outlet", "clearance"), on an abused TLD
    nations: frozenset[str]  # nobody's name; on an abused TLD not a shop's, a pose too
    shop_tlds: frozenset[str]  # where a country says where the shop sells


@dataclass(frozen=True)
class Borrowed:
    """The name a host borrows and the words it sets beside it."""

    name: str
    words: tuple[str, ...]


def written_names(text: str) -> frozenset[str]:
    """The names among the first MAX_WORDS words of a text (folded, possessive and
    apostrophes dropped), single and in pairs. The text is expected without its links and
    hosts. Pure."""
    names: set[str] = set()
    previous: str | None = None
    previous_end = -MAX_GAP - 1
    for match in itertools.islice(_WORD.finditer(text), MAX_WORDS):
        word = match.group(0)
        if not _written_as_name(word):
            previous = None
            continue
        folded = fold(_POSSESSIVE.sub("", word)).replace("'", "").replace("’", "")
        if len(folded) >= MIN_NAME_LETTERS:
            names.add(folded)
        gap = text[previous_end : match.start()]
        if previous is not None and len(gap) <= MAX_GAP and gap.isspace():
            names.add(previous + folded)
        previous, previous_end = folded, match.end()
    return frozenset(names)


def borrowed_name(
    parts: HostParts, names: frozenset[str], cheap_tld: bool, words: BorrowingWords
) -> Borrowed | None:
    """The name of the message a host's registrable name starts with (its first token, or
    its first two run together) beside another of its tokens that asks or poses; or that
    the subdomain next to the registrable name starts with, the registrable name holding
    such a word (`aib-ie.secure-review.info`; not `acme-news.wordpress.com`, a platform's
    name asks nothing). Pure."""
    beside = set(words.anywhere)
    if cheap_tld:
        beside |= words.on_cheap_tld
        if parts.suffix not in words.shop_tlds:
            beside |= words.nations
    name_tokens = _tokens(parts.name)
    for name, used in _openings(name_tokens):
        found = _beside(name, name_tokens[used:], beside)
        if found and _may_be_borrowed(name, names, beside, words):
            return found
    own = [label for label in parts.subdomain if label != "www"]
    for name, _ in _openings(_tokens(own[-1]) if own else []):
        found = _beside(name, name_tokens, beside)
        if found and _may_be_borrowed(name, names, beside, words):
            return found
    return None


def _openings(tokens: list[str]) -> list[tuple[str, int]]:
    """What a label's name may be: its first token, or its first two run together (with
    how many tokens each takes)."""
    found = [(tokens[0], 1)] if tokens else []
    if len(tokens) >= 2:
        found.append((tokens[0] + tokens[1], 2))
    return found


def _may_be_borrowed(
    name: str, names: frozenset[str], beside: set[str], words: BorrowingWords
) -> bool:
    too_short = len(name) < MIN_NAME_LETTERS
    return not too_short and name not in words.nations and name not in beside and name in names


def _beside(name: str, rest: list[str], beside: set[str]) -> Borrowed | None:
    found = tuple(dict.fromkeys(t for t in rest if t in beside))
    return Borrowed(name, found) if found else None


def _tokens(label: str) -> list[str]:
    return [t for t in re.split(r"[-\d]+", fold(_readable(label))) if t]


def _readable(label: str) -> str:
    """A punycode label as its reader sees it ("xn--args-clearance-nob" → "argós-clearance")."""
    try:
        return label.encode("ascii").decode("idna")
    except UnicodeError:
        return label


def _written_as_name(word: str) -> bool:
    """A capital first letter or all capitals, and no capital after a small letter."""
    if not word[:1].isupper():
        return False
    return not any(a.islower() and b.isupper() for a, b in itertools.pairwise(word))
