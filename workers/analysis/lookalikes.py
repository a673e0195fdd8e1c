"""Hosts that borrow a protected name: look-alike letters, typos, added words, subdomains.

The reverse of a permutation engine such as dnstwist: instead of generating every
misspelling of every brand, each label of a host is folded to a skeleton and compared
with the protected names' skeletons, computed once at start-up. Equal skeletons catch
look-alike letters (Cyrillic, accented, 0/o, rn/m); a bounded edit distance catches
typos (omission, insertion, repetition, replacement, transposition, bit flips, vowel
swaps, plurals); lure words around a name ("secure", "livrare", "stiri") catch a name
with added words, in any label.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from rapidfuzz import process
from rapidfuzz.distance import OSA

from workers.analysis.domain_lists import BrandList, SourceList
from workers.analysis.normalise import look_alikes
from workers.analysis.registrable import HostParts, host_parts

# Shorter names ("ing", "dhl", "bbc") are ordinary words or abbreviations too: they
# count only with a second sign, and never by edit distance.
MIN_LONG_NAME = 5
# A name this long ("royalmail", "instagram") is no ordinary word: beside any other
# words it still names the brand.
DISTINCTIVE_NAME = 8
# With nine letters or more, two edits leave a name recognisable and rarely make
# another real word; below that one edit already does.
TWO_EDITS_FROM = 9
# Look-alike characters ("ernag", "0range") are made, not typed by chance: a name this long
# counts with them alone, short or an ordinary word. Shorter ones ("bt", "ing") are read
# into too many real names.
MIN_DISGUISED_NAME = 4
# The letter sequences that draw another letter in common fonts, read by `Folding.visible`.
VISIBLE_SEQUENCES = (("rn", "m"), ("vv", "w"), ("cl", "d"))
# Short names ("eon", "dvla") slip (a doubled letter, two neighbours swapped) only beside a
# lure word or on a cheap TLD, and from this length.
MIN_SLIP_NAME = 3
MIN_SWAP_NAME = 4
# Categories of the source list whose names are protected: imitating a reliable,
# fact-checking or official source lends its credibility.
PROTECTED_CATEGORIES = frozenset({"reliable", "fact-checker", "official"})
# "LATIN SMALL LETTER L WITH MIDDLE TILDE", "LATIN LETTER SMALL CAPITAL B": the letter.
_LATIN_NAME = re.compile(
    r"LATIN (?:SMALL |CAPITAL )?(?:LETTER|LIGATURE) (?:SMALL CAPITAL )?([A-Z]{1,2})\b"
)


@dataclass(frozen=True)
class Protected:
    """A name lookalikes borrow, and the real domain a report names."""

    name: str
    home: str

    @property
    def long(self) -> bool:
        return len(self.name) >= MIN_LONG_NAME


@dataclass(frozen=True)
class Imitation:
    """Which protected name a host borrows, and how (a key of IMITATION_WAYS)."""

    protected: Protected
    how: str


# How a host imitates a protected name, in English and Romanian.
IMITATION_WAYS: Mapping[str, tuple[str, str]] = {
    "other_suffix": ("same name under another suffix", "același nume cu altă terminație"),
    "homoglyphs": ("look-alike characters", "caractere care arată la fel"),
    "typo": ("one or two characters off", "diferă prin una-două litere"),
    "hyphenated": ("the listed name split by hyphens", "numele cunoscut despărțit prin cratime"),
    "added_words": ("the listed name with added words", "numele cunoscut cu alte cuvinte adăugate"),
    "embedded": (
        "the listed name inside another domain",
        "numele cunoscut în interiorul altui domeniu",
    ),
}


@dataclass(frozen=True)
class Folding:
    """How a label is reduced to the letters it looks like."""

    characters: Mapping[str, str]  # one non-ASCII character → Latin letters
    sequences: tuple[tuple[str, str], ...]  # ASCII sequences read as one letter (rn → m)
    letters: Mapping[int, str]  # ASCII digit/letter swaps (0 → o, i → l)
    swaps: Mapping[int, str]  # letters that look or sit alike (b/d), long names only

    def strict(self, label: str) -> str:
        """The label with look-alike characters, digits and sequences folded."""
        text = self.letters_only(label)
        for sequence, letter in self.sequences:
            text = text.replace(sequence, letter)
        return text

    def visible(self, label: str) -> str:
        """The label with only what no one types by chance folded: digits and non-ASCII
        letters read as the letters they imitate, and the sequences that draw a letter
        (rn → m, vv → w, cl → d); ordinary letters stay ("annex" is not "amex", "lid" not
        "lidl")."""
        text = "".join(c if c.isascii() else self.character(c) for c in label).lower()
        text = "".join(self.letters.get(ord(c), c) if c.isdigit() else c for c in text)
        for sequence, letter in VISIBLE_SEQUENCES:
            text = text.replace(sequence, letter)
        return text

    def letters_only(self, label: str) -> str:
        """The label with look-alike characters and digits folded, sequences kept: "cl"
        may be a "d" or a "c" and an "l", so both readings are compared."""
        text = "".join(c if c.isascii() else self.character(c) for c in label).lower()
        return text.translate(self.letters)

    def loose(self, label: str, sequences: bool = True) -> str:
        """The skeleton with similar letters (b/d, c/e, m/n…) made one, before and after
        sequences are read, so that two look-alike steps ("m" → "rn" → "rr") meet."""
        text = self.letters_only(label).translate(self.swaps)
        if not sequences:
            return text
        for sequence, letter in self.sequences:
            text = text.replace(sequence, letter)
        return text.translate(self.swaps)

    def character(self, ch: str) -> str:
        if ch in self.characters:
            return self.characters[ch]
        base = unicodedata.normalize("NFKD", ch)[:1]
        if base.isascii() and base.isalnum():
            return base.lower()
        named = _LATIN_NAME.match(unicodedata.name(ch, ""))
        return named.group(1).lower() if named else ch


@dataclass(frozen=True)
class BrandIndex:
    """Protected names and their skeletons, computed once; real domains never match."""

    folding: Folding
    owners: Mapping[str, str]  # real registrable domain → brand
    by_strict: Mapping[str, Protected]
    by_loose: Mapping[str, tuple[Protected, str]]
    long_skeletons: tuple[str, ...]
    long_names: tuple[Protected, ...]
    names: tuple[Protected, ...]
    lure_words: frozenset[str]
    lure_lengths: tuple[int, ...]
    # Lure words folded like names: "l0gin", "onIine" and "h0mebank" are lures too.
    lure_skeletons: frozenset[str] = frozenset()
    # Lure words whose inflections are lures too (brands.yaml `inflected_lures`).
    inflected_lures: frozenset[str] = frozenset()
    # Lure words of money and news that end a compound as lures too (`run_on_lures`).
    run_on_lures: frozenset[str] = frozenset()
    # The names of the brands' real domains ("orange" of orange.ro): too ordinary to
    # protect as words, but never written with look-alike characters (`Folding.visible`).
    domain_names: Mapping[str, Protected] = field(default_factory=dict)
    # The short names by their letters with doubled letters made single (slip).
    short_names: Mapping[str, Protected] = field(default_factory=dict)

    def match(self, text: str) -> tuple[Protected, str] | None:
        """(name, "same" | "homoglyphs" | "typo") when `text` reads as a protected name."""
        strict = self.folding.strict(text)
        if hit := self.by_strict.get(strict):
            return hit, "same" if text == hit.name else "homoglyphs"
        if len(strict) < MIN_LONG_NAME - 1:
            return None
        for loose in _readings(text, self.folding):
            if found := self.by_loose.get(loose):
                return found
            if near := self._near(loose, text):
                return near, "typo"
        return None

    def _near(self, loose: str, text: str) -> Protected | None:
        near = process.extract(
            loose, self.long_skeletons, scorer=OSA.distance, score_cutoff=2, limit=3
        )
        for _, distance, i in near:
            name = self.long_names[i].name
            if distance <= _typo_limit(name) and not _other_number(text, name):
                return self.long_names[i]
        return None

    def slip(self, text: str) -> Protected | None:
        """A short protected name with a letter doubled ("eonn") or two neighbours swapped
        ("dlva"), the typos a typosquatter makes of a name too short for edit distance;
        counted only beside a lure word or on a cheap TLD."""
        letters = self.folding.letters_only(text)
        if len(letters) < MIN_SLIP_NAME:
            return None
        hit = self.short_names.get(_single(letters))
        if hit and text != hit.name:
            return hit
        # Swapped neighbours only from MIN_SWAP_NAME letters: three-letter swaps ("lox",
        # "ris") are other names as often as typos of "olx", "irs".
        for i in range(len(letters) - 1) if len(letters) >= MIN_SWAP_NAME else ():
            swapped = letters[:i] + letters[i + 1] + letters[i] + letters[i + 2 :]
            hit = self.short_names.get(_single(swapped))
            if hit and text != hit.name and len(hit.name) >= MIN_SWAP_NAME:
                return hit
        return None

    def is_lure(self, word: str) -> bool:
        if word in self.lure_words or word.isdigit() or lure_stem(word, self.inflected_lures):
            return True
        return len(word) >= MIN_LONG_NAME and self.folding.strict(word) in self.lure_skeletons

    def runs_lure(self, word: str) -> bool:
        """Whether `word` ends in a lure of money owed or returned, or of news (brands.yaml
        `run_on_lures`), after another word of MIN_LURE_REST letters or more ("legacytax",
        "worldnews"): a second sign beside a short name ("dvla-legacytax.uk")."""
        return any(
            len(word) - len(w) >= MIN_LURE_REST and word.endswith(w) for w in self.run_on_lures
        )

    def lure_cuts(self, text: str) -> tuple[list[bool], list[bool]]:
        """(before, after): before[i] when text[:i] is a run of lure words and numbers
        ("securelogin", "2024", or empty), after[i] when text[i:] is. Linear in the text."""
        n, words = len(text), self.lure_words
        before = [True] + [False] * n
        for end in range(1, n + 1):
            before[end] = (before[end - 1] and text[end - 1].isdigit()) or any(
                before[end - k] and text[end - k : end] in words
                for k in self.lure_lengths
                if k <= end
            )
        after = [False] * n + [True]
        for start in range(n - 1, -1, -1):
            after[start] = (after[start + 1] and text[start].isdigit()) or any(
                after[start + k] and text[start : start + k] in words
                for k in self.lure_lengths
                if start + k <= n
            )
        return before, after


# A lure run onto the end of another word ("legacytax") counts beside a word of this many
# letters or more (as the bait words of domains.py).
MIN_LURE_REST = 4
# Host labels that name no one: they neither are nor lend a second sign.
_SERVICE_LABEL = re.compile(r"www\d*")

# Inflections a lure word takes in a host name ("parcels", "coletul", "notificari"), and the
# verb behind a noun ("redeliver" for "redelivery"); the stem left must be this long. Only the
# lures of parcels, payments, sign-ins and notices inflect (brands.yaml `inflected_lures`):
# "stores", "teams", "cares" and "gifts" name real shops and charities ("stores.ebay.fr",
# "who-cares.org").
LURE_ENDINGS = ("s", "es", "ed", "ing", "ul", "ului", "uri", "ele", "ii", "le")
MIN_LURE_STEM = 4
# Forms of a Romanian noun in -are or -ire, without diacritics: the plural, articled or
# not, and the articled singular ("notificari", "notificarile", "notificarea",
# "restituiri").
ROMANIAN_ARE_FORMS = ("arilor", "arile", "arii", "area", "ari")
ROMANIAN_IRE_FORMS = ("irilor", "irile", "irii", "irea", "iri")


def lure_stem(word: str, lure_words: frozenset[str]) -> str | None:
    """The lure word `word` inflects, if any: itself less a common ending, or with a final
    "y" ("redeliver"). Pure."""
    candidates = [word[: -len(end)] for end in LURE_ENDINGS if word.endswith(end)]
    candidates.append(word + "y")
    # A Romanian noun in -are or -ire, plural or articled ("notificari", "restituiri")
    candidates += [word[: -len(end)] + "are" for end in ROMANIAN_ARE_FORMS if word.endswith(end)]
    candidates += [word[: -len(end)] + "ire" for end in ROMANIAN_IRE_FORMS if word.endswith(end)]
    return next(
        (c for c in candidates if len(c) >= MIN_LURE_STEM and c in lure_words and c != word),
        None,
    )


def _single(text: str) -> str:
    """`text` with every run of one letter made one letter ("eonn" → "eon")."""
    return re.sub(r"(.)\1+", r"\1", text)


def _other_number(text: str, name: str) -> bool:
    """Whether `text` is `name` with other digits: a sibling (antena1, antena3), not a typo."""
    return len(text) == len(name) and all(
        a == b or (a.isdigit() and b.isdigit()) for a, b in zip(text, name, strict=True)
    )


def _typo_limit(name: str) -> int:
    return 1 if len(name) < TWO_EDITS_FROM else 2


def folding_from(sources: SourceList) -> Folding:
    """The folding of the source list's homoglyph tables and the Unicode confusables."""
    table = sources.homoglyphs
    characters = {ch: latin.lower() for ch, (latin, _) in look_alikes().items()}
    characters.update({k: v for k, v in table.items() if len(k) == 1 and not k.isascii()})
    sequences = sorted(((k, v) for k, v in table.items() if len(k) > 1), key=lambda kv: -len(kv[0]))
    letters = {ord(k): v for k, v in table.items() if len(k) == 1 and k.isascii()}
    return Folding(characters, tuple(sequences), letters, str.maketrans(sources.look_alike_swaps))


def brand_index(brands: BrandList, sources: SourceList) -> BrandIndex:
    """Every protected name of `brands` and of the source list, with its skeletons."""
    folding = folding_from(sources)
    owners = {d: b.brand for b in brands.brands for d in b.domains}
    owners.update({d: d for d in sources.domains})
    protected = list(_protected(brands, sources))
    by_strict: dict[str, Protected] = {}
    by_loose: dict[str, tuple[Protected, str]] = {}
    near: dict[str, Protected] = {}
    for p in protected:
        by_strict.setdefault(folding.strict(p.name), p)
        if not p.long:
            continue
        for reading in _readings(p.name, folding):
            by_loose.setdefault(reading, (p, "homoglyphs"))
            near.setdefault(reading, p)
        for plural in _plurals(p.name):
            for reading in _readings(plural, folding):
                by_loose.setdefault(reading, (p, "typo"))
    return BrandIndex(
        folding=folding,
        owners=owners,
        by_strict=by_strict,
        by_loose=by_loose,
        long_skeletons=tuple(near),
        long_names=tuple(near.values()),
        names=tuple(protected),
        lure_words=frozenset(brands.lure_words),
        lure_lengths=tuple(sorted({len(w) for w in brands.lure_words})),
        lure_skeletons=frozenset(folding.strict(w) for w in brands.lure_words),
        inflected_lures=frozenset(brands.inflected_lures),
        run_on_lures=frozenset(brands.run_on_lures),
        domain_names=_domain_names(brands, folding),
        short_names={
            key: p
            for p in protected
            if not p.long and len(key := _single(folding.letters_only(p.name))) >= MIN_SLIP_NAME
        },
    )


def _domain_names(brands: BrandList, folding: Folding) -> dict[str, Protected]:
    """The registrable names of the brands' real domains, by strict skeleton."""
    names: dict[str, Protected] = {}
    for brand in brands.brands:
        for domain in brand.domains:
            parts = host_parts(domain)
            if parts and len(parts.name) >= MIN_DISGUISED_NAME and parts.name.isalpha():
                names.setdefault(parts.name, Protected(parts.name, domain))
    return names


def _readings(name: str, folding: Folding) -> set[str]:
    """A name's loose skeletons with its letter sequences read as one letter and as two."""
    return {folding.loose(name), folding.loose(name, sequences=False)}


def _protected(brands: BrandList, sources: SourceList) -> Iterator[Protected]:
    for brand in brands.brands:
        for name in brand.names:
            yield Protected(name, brand.domains[0])
    for domain, entry in sources.domains.items():
        parts = host_parts(domain)
        if entry.category in PROTECTED_CATEGORIES and parts and not parts.subdomain:
            yield Protected(parts.name, domain)


def _plurals(name: str) -> Iterator[str]:
    """The "-es" plurals a typosquatter makes inside a name (one edit covers "-s")."""
    for i in range(2, len(name) - 2):
        if name[i] in "sxz":
            yield name[: i + 1] + "es" + name[i + 1 :]


def imitation(parts: HostParts, index: BrandIndex, cheap_tld: bool) -> Imitation | None:
    """The protected name a host (not a real domain of it) borrows, if any.

    A long name counts alone; a short one needs a second sign: a lure word in any
    label, a cheap TLD, or a digit or foreign letter standing in for one of its letters.
    """
    if parts.registrable in index.owners:
        return None
    name = _readable(parts.name)
    subdomain = tuple(_readable(label) for label in parts.subdomain)
    tokens = [t for t in name.split("-") if t]
    words = [
        t
        for label in (*subdomain, name)
        if not _SERVICE_LABEL.fullmatch(label)
        for t in label.split("-")
        if t
    ]
    lured = (
        cheap_tld
        or any(_lends_sign(i, words, index) for i in range(len(words)))
        or _own_domain_extended(parts, index)
    )
    whole = _whole_name(name, tokens, index, lured)
    if whole and whole.how == "other_suffix" and not lured and regional_suffix(parts.suffix):
        whole = None  # airbnb.co.uk, monzo.me: a brand's own site in a country it serves
    return (
        whole
        or _name_with_words(tokens, index, lured)
        or _in_subdomain(subdomain, name, index, lured)
        or _disguised_domain_name((*subdomain, name), index)
        or _slipped_name(tokens, index, lured)
    )


def _own_domain_extended(parts: HostParts, index: BrandIndex) -> bool:
    """A brand's real .com, .net or .org domain with a country code that is no region
    appended ("bbc.com.co", "paypal.com.co"): the reader sees the real domain, whole. Pure."""
    generic, _, country = parts.suffix.partition(".")
    return (
        bool(country)
        and generic in _GENERIC_SECOND_LEVELS
        and f"{parts.name}.{generic}" in index.owners
        and not regional_suffix(parts.suffix)
    )


_GENERIC_SECOND_LEVELS = frozenset({"com", "net", "org"})


# Country codes that are no country's site in practice: typed for a generic suffix by a slip
# of the finger (.co for .com, .cm, .om, .ne for .net: lloydsbank.co), sold as generic or
# vanity suffixes to anyone (.io, .me, .tv, .cc, .pw …), or where look-alikes of Western
# brands are registered in bulk (.ru, .su, .cn). A brand's exact name there is read as a
# look-alike; its real sites there (monzo.me) are listed in brands.yaml.
NO_REGION_COUNTRY_CODES = frozenset(
    {"co", "cm", "om", "ne", "io", "me", "tv", "cc", "ws", "to", "pw", "ly", "gg", "ai", "nu"}
    | {"fm", "am", "la", "sh", "gl", "gd", "gy", "ac", "vc", "cx", "st", "bz", "ms", "tk"}
    | {"ml", "ga", "cf", "gq", "ru", "su", "cn", "so", "sx", "mn", "ps"}
)


def regional_suffix(suffix: str) -> bool:
    """Whether `suffix` is a country's ("co.uk", "de", "ro"), where a brand's exact name is
    most often the brand's own regional site, unlike under a generic suffix or a country
    code sold or typed as one (NO_REGION_COUNTRY_CODES). Pure."""
    country = suffix.rsplit(".", 1)[-1]
    return len(country) == 2 and country not in NO_REGION_COUNTRY_CODES


def _lends_sign(i: int, words: list[str], index: BrandIndex) -> bool:
    """Whether the host's word `i` is a lure beside a name. A lure that is a protected name
    too ("gov" of gov.ro) lends no sign to itself: it is one beside another protected name
    (`irs-gov.us`), not beside ordinary words (`gov-tech.ro`, `mpass.gov.md`)."""
    token = words[i]
    if not (index.is_lure(token) or index.runs_lure(token)):
        return False
    if index.folding.strict(token) not in index.by_strict:
        return True
    return any(
        index.folding.strict(other) in index.by_strict for j, other in enumerate(words) if j != i
    )


def _slipped_name(tokens: list[str], index: BrandIndex, lured: bool) -> Imitation | None:
    """A name of MIN_SWAP_NAME letters or more with one letter doubled, as the whole host
    name ("emaag", "anaff"), beside a second sign: a cheap TLD or a lure word elsewhere in
    the host (a sign-in page is the third: domains._signin_page). Swapped letters and
    three-letter names are other words as often ("neel", "whoo")."""
    return doubled_name(tokens[0], index) if lured and len(tokens) == 1 else None


def doubled_name(name: str, index: BrandIndex) -> Imitation | None:
    """The protected name `name` writes with one letter doubled, if any (see above)."""
    letters = index.folding.letters_only(name)
    hit = index.short_names.get(_single(letters))
    if hit is None or len(hit.name) < MIN_SWAP_NAME or letters == hit.name:
        return None
    return Imitation(hit, "typo") if len(letters) == len(hit.name) + 1 else None


def _disguised_domain_name(labels: Iterable[str], index: BrandIndex) -> Imitation | None:
    """A brand's real domain name written with look-alike characters, as a label or a
    hyphenated token of one ("contul-meu.0range.ro", "0range-cont.com")."""
    for label in labels:
        for token in label.split("-"):
            hit = index.domain_names.get(index.folding.visible(token))
            if hit and token != hit.name:
                return Imitation(hit, "homoglyphs")
    return None


def _whole_name(name: str, tokens: list[str], index: BrandIndex, lured: bool) -> Imitation | None:
    joined = "".join(tokens)
    found = index.match(joined)
    if not found:
        return None
    protected, kind = found
    if kind == "same":
        how = "other_suffix" if joined == name else "hyphenated"
        return Imitation(protected, how) if protected.long or lured else None
    disguised = (
        kind == "homoglyphs"
        and len(protected.name) >= MIN_DISGUISED_NAME
        and index.folding.visible(joined) == protected.name
    )
    if protected.long or lured or disguised or _stands_in(joined, protected.name):
        return Imitation(protected, kind)
    return None


def _stands_in(text: str, name: str) -> bool:
    """Whether a digit or a non-ASCII letter stands in for a letter of `name`."""
    return any(not c.isascii() or (c.isdigit() and c not in name) for c in text)


def _name_with_words(tokens: list[str], index: BrandIndex, lured: bool) -> Imitation | None:
    core = "".join(t for t in tokens if not index.is_lure(t))
    found = index.match(core) if core and core != "".join(tokens) else None
    if found:
        return Imitation(found[0], "added_words")
    # A number run onto a disguised name ("micros0ft365"), unless the name has digits
    # of its own (antena1 is not antena3 plus a digit).
    bare = core.rstrip("0123456789")
    found = index.match(bare) if bare and bare != core else None
    if found and not any(c.isdigit() for c in found[0].name):
        return Imitation(found[0], "added_words")
    for token in tokens if len(tokens) > 1 else ():
        hit = index.by_strict.get(index.folding.strict(token))
        if hit and (lured or _stands_in(token, hit.name) or len(hit.name) >= DISTINCTIVE_NAME):
            return Imitation(hit, "added_words")
        if lured and (slipped := index.slip(token)):
            return Imitation(slipped, "typo")
    # A name written as two words among others ("posta-romana-licitatii.shop"); two tokens
    # alone are the whole name, read above.
    for first, second in itertools.pairwise(tokens) if len(tokens) > 2 else ():
        hit = index.by_strict.get(index.folding.strict(first + second))
        if hit and (lured or len(hit.name) >= DISTINCTIVE_NAME):
            return Imitation(hit, "added_words")
    return _inside_word("".join(tokens), index)


MIN_RUN_TOGETHER_NAME = 3


def shortened_imitation(
    parts: HostParts,
    index: BrandIndex,
    cheap_tld: bool,
    names: frozenset[str],
    words: frozenset[str],
) -> Imitation | None:
    """A long protected name with one letter inside it left out, as the first token of a
    name with others, on an abused TLD or beside a lure word, where the message names the
    brand itself (`names`) and never writes the shortened word (`words`: every word of its
    prose, folded): "Tesla UK: … tsla-charger-uk.shop", "Amazon: … amzon-deals.shop" (round
    28), dnstwist's omission with added words. A name one letter short is a word as often
    ("case" of Chase, "mono" of Monzo, "papal" of PayPal): the message naming the brand is
    what makes the shortening its typo, and one that writes the word too is a shop called
    so ("Revolut accepted at Revolt Records: revolt-records.shop"). Pure."""
    tokens = [t for t in _readable(parts.name).split("-") if t]
    if len(tokens) < 2 or not (cheap_tld or any(index.is_lure(t) for t in tokens[1:])):
        return None
    token = tokens[0]
    if token in words or index.folding.letters_only(token) != token:
        return None
    for name in names:  # the message's names that are protected, long ones
        protected = index.by_strict.get(index.folding.strict(name))
        if protected and protected.long and _left_out_inside(protected.name, token):
            return Imitation(protected, "typo")
    return None


def _left_out_inside(name: str, token: str) -> bool:
    """Whether `token` is `name` with one letter other than its first or last left out."""
    return len(name) == len(token) + 1 and any(
        name[:i] + name[i + 1 :] == token for i in range(1, len(name) - 1)
    )


def _inside_word(text: str, index: BrandIndex) -> Imitation | None:
    """A protected name run together with lure words: "paypalsecurelogin"; a name of two
    letters (EE, O2, ZF) is inside too many words to count so ("o2online", "eenews")."""
    found = [p for p in index.names if len(p.name) >= MIN_RUN_TOGETHER_NAME and p.name in text]
    found = [p for p in found if p.name != text]
    if not found:
        return None
    before, after = index.lure_cuts(text)
    for protected in found:
        start = text.find(protected.name)
        while start != -1:
            if before[start] and after[start + len(protected.name)]:
                return Imitation(protected, "added_words")
            start = text.find(protected.name, start + 1)
    return None


def _in_subdomain(
    subdomain: tuple[str, ...], name: str, index: BrandIndex, lured: bool
) -> Imitation | None:
    """A real domain or protected name left of an unrelated registrable domain; typos
    do not count there, where ordinary words ("apply", "mail") are common."""
    for window in _windows(subdomain):
        if window in index.owners:
            return Imitation(Protected(window, window), "embedded")
    for label in subdomain:
        tokens = [t for t in label.split("-") if t]
        for found in (
            _whole_name(label, tokens, index, lured),
            _name_with_words(tokens, index, lured),
        ):
            if found and found.how != "typo":
                return Imitation(found.protected, "embedded")
    split = index.match("".join(subdomain[-1:]) + name) if subdomain else None
    return Imitation(split[0], "embedded") if split and split[1] != "typo" else None


def _windows(labels: Iterable[str]) -> Iterator[str]:
    """Runs of two or three labels ("paypal.com", "bbc.co.uk"), hyphens read as dots."""
    flat = [part for label in labels for part in label.split("-")]
    for size in (2, 3):
        for i in range(len(flat) - size + 1):
            yield ".".join(flat[i : i + size])


def _readable(label: str) -> str:
    """A punycode label (xn--…) in Unicode, or the label itself."""
    if not label.startswith("xn--"):
        return label
    try:
        return label.encode("ascii").decode("idna")
    except UnicodeError:
        return label
