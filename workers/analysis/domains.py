"""Reputation of the URLs and domains in an input: listed sources, lookalikes, risky hosts.

Pure: nothing is fetched or resolved. The list and thresholds live in `data/domains.yaml`,
the protected brands in `data/brands.yaml`; registrable domains come from the Public
Suffix List bundled with `publicsuffixlist`; lookalikes are found by `lookalikes.py`.
"""

from __future__ import annotations

import ipaddress
import itertools
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

from rapidfuzz.distance import OSA

from workers.analysis.borrowed_names import BorrowingWords, borrowed_name, written_names
from workers.analysis.datafiles import load_validated
from workers.analysis.domain_lists import (
    Brand,
    BrandList,
    Category,
    CategoryLabel,
    ListedDomain,
    SourceList,
)
from workers.analysis.lookalikes import (
    IMITATION_WAYS,
    BrandIndex,
    brand_index,
    doubled_name,
    imitation,
    shortened_imitation,
)
from workers.analysis.normalise import normalise
from workers.analysis.registrable import HostParts, host_parts, public_suffixes
from workers.analysis.text import clip, fold

MAX_HOSTS = 20
# URLs and bare domains read from a text before giving up on finding MAX_HOSTS distinct
# hosts: a text of thousands of links costs no more than this many.
MAX_CANDIDATES = 200
# Of a link's path, only this many characters are read for sign-in words.
MAX_PATH_CHARS = 2_000
# How the evidence names a look-alike found on a sign-in page, in English and Romanian.
SIGNIN_PAGE, SIGNIN_PAGE_RO = ", on a sign-in page", ", pe o pagină de autentificare"
# DNS limits (RFC 1035): a longer label or name cannot exist, so it is assessed as
# such and never compared character by character with the list.
MAX_LABEL_CHARS = 63
MAX_HOST_CHARS = 253
# How much of an impossible host name a report shows.
SHOWN_HOST_CHARS = 80
# The category of a protected brand's real domain (its labels are in domains.yaml).
BRAND_CATEGORY = "brand"
# The reason of a host nobody listed: says we know nothing, so it is no evidence.
UNKNOWN_REASON = "not in the source list"
BAIT_REASON = "a name made of bait words"
POSING_REASON = "a domain name set before another domain"
# A word run together with an alarm or bait word must be this long to count as one.
MIN_REST = 4
ALARM_REASON = "a name that sells a hidden truth or a poison"
SHORTENER_REQUEST_REASON = "link shortener in a message asking to pay or sign in"
SHORTENER_SLUG_REASON = "link shortener whose address names"
GOVERNMENT_REASON = "a government word in a name outside government domains"
BORROWED_REASON = "borrows a name the message gives"
# Suffixes a posing name ends with (posing_domain): generic ones only. Country codes are
# language subdomains too (`ro.example.com`), and `co-`, `net-`, `info-` start real names
# (`co-operativebank`, `net-a-porter`, `info-trafic`); those two rules differ:
POSING_SUFFIXES = frozenset({"com", "org", "gov", "edu", "net"})  # a subdomain's last label
POSING_PREFIXES = frozenset({"com", "org", "gov", "edu"})  # a name's first hyphenated token
# A sum of money with its currency: "£940", "$6.99", "1.850 lei", "50 EUR".
# (Romanian puts "de" between a number from 20 up and its noun: "50 de lei".)
_AMOUNT = re.compile(
    r"(?i)(?:[£$€]\s?\d|\d(?:[\d.,]{0,12}\d)?\s?(?:de\s)?"
    r"(?:lei|ron|eur|euro|euros|usd|gbp|dollars|pounds)\b)"
)

# A URL in text; its host may be an IPv6 address in brackets (bounded), the rest runs to the
# first space or bracket.
_URL = re.compile(r"(?i)\b(?:https?://(?:\[[0-9a-f:.%]{1,64}+\])?|www\.)[^\s<>\"'()\[\]{}]*+")
# A bare domain: labels of DNS length (possessive, so a long run is read once) and a
# known suffix, not inside a word, an email address or a path.
_BARE = r"(?<![\w@./-])((?:[\w-]{{1,63}}+\.){{1,8}}(?:{tlds}))(?![\w-])(?!\.\w)"
# The path after a bare host, up to the next space.
_BARE_PATH = re.compile(r"/\S{1,2000}")
# One part of an IPv4 address as inet_aton reads it: hexadecimal, octal or decimal.
_IPV4_PART = re.compile(r"0[xX][0-9a-fA-F]*+|0[0-7]*+|[1-9][0-9]*+")


@dataclass(frozen=True)
class Reputation:
    """The shipped source list and risk levels, ready to query."""

    domains: Mapping[str, ListedDomain]
    categories: Mapping[str, Category]
    shorteners: frozenset[str]
    risky_tlds: frozenset[str]
    bait_words: frozenset[str]
    request_words: frozenset[str]
    giving_words: frozenset[str]
    signin_path_words: frozenset[str]
    alarm_words: tuple[str, ...]  # longest first
    government_words: frozenset[str]
    nation_words: frozenset[str]
    word_tlds: frozenset[str]
    service_words: frozenset[str]
    illness_words: frozenset[str]
    cure_offer_words: frozenset[str]
    shop_tlds: frozenset[str]
    shop_words: frozenset[str]
    aid_words: frozenset[str]
    aid_topics: frozenset[str]
    slug_alone_words: frozenset[str]
    slug_sold_words: frozenset[str]
    bait_inside: tuple[str, ...]  # bait words that count run together with another word
    borrowing: BorrowingWords
    brands: BrandIndex
    risks: Mapping[str, float]
    bare_domain: re.Pattern[str]


@dataclass(frozen=True)
class HostAssessment:
    """One host: what we know of it, each reason with its risk, and the resulting risk."""

    host: str
    display: str
    category: str | None = None
    reasons: tuple[tuple[str, float], ...] = ()

    @property
    def risk(self) -> float:
        return max((r for _, r in self.reasons), default=0.0)


@dataclass(frozen=True)
class DomainReport:
    """Every host found and the worst risk among them (0 when the input names none).

    `url_given`: the input had a `url` field, so the component applies even when no
    host could be read from it.
    """

    hosts: tuple[HostAssessment, ...] = field(default_factory=tuple)
    url_given: bool = False

    @property
    def score(self) -> float:
        return max((h.risk for h in self.hosts), default=0.0)

    @property
    def applicable(self) -> bool:
        return self.url_given or bool(self.hosts)

    @property
    def evidence_count(self) -> int:
        """Findings behind the score: every reason except "not in the source list",
        which says we know nothing of a host."""
        return sum(r != UNKNOWN_REASON for h in self.hosts for r, _ in h.reasons)


def reputation_from(sources: SourceList, brands: BrandList) -> Reputation:
    """Build a Reputation from `data/domains.yaml` and `data/brands.yaml`."""
    # Every abused TLD but those that are file extensions too ("invoice.zip", "clip.mov"):
    # those are read only in a link with its scheme.
    bare = {*sources.bare_domain_tlds, *sources.risky_tlds} - set(sources.file_tlds)
    tlds = "|".join(sorted(map(re.escape, bare), key=len, reverse=True))
    risks = {
        k: float(getattr(sources, f"{k}_risk"))
        for k in (
            "shortener",
            "risky_tld",
            "raw_ip",
            "invalid_host",
            "lookalike",
            "unknown",
            "bait_on_risky_tld",
            "bait_name",
            "posing_domain",
            "shortener_request",
            "alarm_name",
            "borrowed_name",
        )
    }
    return Reputation(
        domains=sources.domains,
        categories=sources.categories,
        shorteners=frozenset(sources.shorteners),
        risky_tlds=frozenset(sources.risky_tlds),
        bait_words=frozenset(sources.bait_words),
        request_words=frozenset(sources.request_words),
        giving_words=frozenset(sources.giving_words),
        signin_path_words=frozenset(sources.signin_path_words),
        alarm_words=tuple(sorted(sources.alarm_words, key=lambda w: (-len(w), w))),
        government_words=frozenset(sources.government_words),
        nation_words=frozenset(sources.nation_words),
        word_tlds=frozenset(sources.word_tlds),
        service_words=frozenset(sources.service_words),
        illness_words=frozenset(sources.illness_words),
        cure_offer_words=frozenset(sources.cure_offer_words),
        shop_tlds=frozenset(sources.shop_tlds),
        shop_words=frozenset(sources.shop_words),
        aid_words=frozenset(sources.aid_words),
        aid_topics=frozenset(sources.aid_topics),
        slug_alone_words=frozenset(sources.slug_alone_words),
        slug_sold_words=frozenset(sources.slug_sold_words),
        bait_inside=tuple(
            sorted(
                w
                for w in sources.bait_words
                if len(w) >= sources.bait_inside_min_letters and w not in sources.bait_not_inside
            )
        ),
        borrowing=BorrowingWords(
            on_cheap_tld=frozenset(sources.borrowed_name_on_cheap_tld),
            anywhere=frozenset({*sources.borrowed_name_anywhere, *sources.signin_path_words}),
            nations=frozenset(sources.nation_words),
            shop_tlds=frozenset(sources.shop_tlds),
        ),
        brands=brand_index(brands, sources),
        risks=risks,
        bare_domain=re.compile(_BARE.format(tlds=tlds), re.IGNORECASE),
    )


def shipped_lists() -> tuple[SourceList, BrandList]:
    """The shipped data files, validated (cached): DataFileError names a broken field."""
    return load_validated("domains.yaml", SourceList), load_validated("brands.yaml", BrandList)


@lru_cache(maxsize=1)
def default_reputation() -> Reputation:
    """The shipped source list and brands, validated and indexed once per process."""
    return reputation_from(*shipped_lists())


# The category of a host a tenant blocked, and the risk a link to one contributes.
TENANT_BLOCKED = "blocked-by-tenant"
TENANT_BLOCKED_CATEGORY = Category(
    risk=90,
    label=CategoryLabel(en="blocked by your organisation", ro="blocat de organizația dvs."),
)


@lru_cache(maxsize=16)
def tenant_reputation(blocked: tuple[str, ...], brands: tuple[str, ...]) -> Reputation:
    """The shipped lists with a tenant's blocked hosts listed (high risk) and its own brand
    domains protected from lookalikes; a few tenants' are kept indexed per process."""
    if not blocked and not brands:
        return default_reputation()
    sources, shipped = shipped_lists()
    listed = {h: ListedDomain(category=TENANT_BLOCKED, note="") for h in blocked}
    sources = sources.model_copy(
        update={
            "domains": {**sources.domains, **listed},
            "categories": {**sources.categories, TENANT_BLOCKED: TENANT_BLOCKED_CATEGORY},
        }
    )
    own = [b for b in map(_tenant_brand, brands) if b is not None]
    return reputation_from(sources, shipped.model_copy(update={"brands": [*shipped.brands, *own]}))


def _tenant_brand(domain: str) -> Brand | None:
    """A tenant's brand domain as a protected brand named after its first label."""
    name = "".join(ch for ch in domain.split(".")[0] if ch.isascii() and ch.isalnum())
    if len(name) < 3:  # too short to tell a lookalike from a coincidence
        return None
    return Brand(brand=domain, kind="tenant", names=[name], domains=[domain])


def assess_domains_for(
    text: str, url: str | None, blocked: tuple[str, ...], brands: tuple[str, ...]
) -> tuple[DomainReport, dict[str, Any]]:
    """`assess_domains` and its evidence with a tenant's lists."""
    reputation = tenant_reputation(blocked, brands)
    report = assess_domains(text, url, reputation)
    return report, report_data(report, reputation)


def extract_hosts(
    text: str, url: str | None = None, reputation: Reputation | None = None
) -> list[str]:
    """Normalised hosts of the input URL and of the URLs and bare domains in the text, in order.

    The text is read without invisible characters and in NFKC form (look-alikes are
    kept: they are the evidence); at most MAX_HOSTS hosts from MAX_CANDIDATES candidates.
    """
    return list(_linked_hosts(text, url, reputation or default_reputation()))


def _linked_hosts(text: str, url: str | None, reputation: Reputation) -> dict[str, bool]:
    """Each host `extract_hosts` finds, in order, with whether one of its links' paths asks
    the reader to sign in, verify or pay (`signin_path_words`): one pass over the links."""
    text = normalise(text, fold_look_alikes=False).text
    hosts: dict[str, bool] = {}
    linked: set[str] = set()
    titled: set[str] = set()  # named with a capital, as a name is ("Ghișeul.ro")
    lowered: set[str] = set()
    for item, is_link in itertools.islice(_candidates(text, url, reputation), MAX_CANDIDATES):
        host = normalise_host(item)
        if not host:
            continue
        if host not in hosts and len(hosts) == MAX_HOSTS:
            continue  # no more hosts, but a later link may still show one of them signing in
        signing_in = is_link and _asks_to_sign_in(item, reputation.signin_path_words)
        hosts[host] = hosts.get(host, False) or signing_in
        if is_link:
            linked.add(host)
        else:
            (titled if item[:1].isupper() else lowered).add(host)
    owned = reputation.brands.owners
    return {
        h: s
        for h, s in hosts.items()
        if not _named_in_its_letters(h, linked, owned if h not in lowered else {}, h in titled)
    }


def _named_in_its_letters(
    host: str, linked: set[str], owned: Mapping[str, str], titled: bool
) -> bool:
    """Whether a host the text only names (no link) is a host the input links to, or, when
    written with a capital as a name is (`titled`), a protected brand's own domain, in the
    diacritics of its language ("plătiți pe Ghișeul.ro", "platforme precum Ghișeul.ro"):
    the site named in prose, not a second one. Pure.

    Only Romanian letters may differ (ă â î ș ț and the cedilla forms): "ghíșeul.ro" is
    read. A look-alike with its own link (a scheme or a path) is still read, and so is one
    written in lower case beside no link to the real site ("plătiți pe ghișeul.ro")."""
    if host in linked or "xn--" not in host:
        return False
    written = unicode_host(host)
    plain = written.translate(_ROMANIAN_LETTERS)
    named = plain in linked or (titled and plain in owned)
    return plain != written and plain.isascii() and named


# Romanian letters and what they are without their marks.
_ROMANIAN_LETTERS = str.maketrans("ăâîșşțţ", "aaissst")


def _candidates(text: str, url: str | None, reputation: Reputation) -> Iterator[tuple[str, bool]]:
    """(candidate, whether it is a link) for the input URL, the text's links and its bare
    domains (a link when a path follows)."""
    if url:
        yield url, True
    for m in _URL.finditer(text):
        yield m.group(0).rstrip(".,;:!?"), True
    without_urls = _URL.sub(" ", text)
    for m in reputation.bare_domain.finditer(without_urls):
        if _sentence_start(m.group(1).rsplit(".", 1)[1]):
            continue  # "our giveaway.Win a bike", "confirm.Cam atât": a space left out
        # A bare host with a path ("ghișeul.ro/plata", "bit.ly/alocatie-2025") is typed to
        # be followed: a link, path and all.
        path = _BARE_PATH.match(without_urls, m.end(1))
        if path:
            yield m.group(1) + path.group(0).rstrip(".,;:!?"), True
        else:
            yield m.group(1), False


def _sentence_start(suffix: str) -> bool:
    """Whether a bare host's suffix is written as a sentence's first word ("Win", "Cam"):
    a full stop with its space left out, not a domain (one in capitals, "BIT.LY", is)."""
    return suffix[:1].isupper() and not suffix.isupper()


def _asks_to_sign_in(link: str, signin_words: frozenset[str]) -> bool:
    try:
        path = urlsplit(link if "://" in link else "http://" + link).path
    except ValueError:
        return False
    return bool(set(re.findall(r"[a-z]+", fold(path[:MAX_PATH_CHARS]).lower())) & signin_words)


def normalise_host(raw: str) -> str | None:
    """Lower-case ASCII (punycode) host of a URL or bare domain, without `www.` or port."""
    candidate = raw.strip()
    if "://" not in candidate:
        candidate = "http://" + candidate
    try:
        host = urlsplit(candidate).hostname
    except ValueError:
        return None
    if not host:
        return None
    host = host.rstrip(".").lower()
    host = host.removeprefix("www.")
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return host


def unicode_host(host: str) -> str:
    """The readable form of a punycode host (xn--…), or the host itself."""
    try:
        return host.encode("ascii").decode("idna")
    except UnicodeError:
        return host


def edit_distance(a: str, b: str, limit: int | None = None) -> int:
    """Edit distance where swapping two neighbouring letters counts as one edit.

    Optimal string alignment: typosquatters swap letters ("reutres") as often as they
    replace them, and plain Levenshtein would count a swap twice. With `limit`, any
    distance above it is reported as limit + 1 (and found sooner).
    """
    return int(OSA.distance(a, b, score_cutoff=limit))


def listed_entry(host: str, reputation: Reputation) -> tuple[str, ListedDomain] | None:
    """The list entry of a host or of its nearest listed parent domain."""
    labels = host.split(".")
    for i in range(len(labels) - 1):
        parent = ".".join(labels[i:])
        if parent in reputation.domains:
            return parent, reputation.domains[parent]
    return None


def assess_host(host: str, reputation: Reputation | None = None) -> HostAssessment:
    """What the shipped list and the host's shape say about one host."""
    reputation = reputation or default_reputation()
    if not is_dns_name(host):
        shown = clip(host, SHOWN_HOST_CHARS)
        reason = "host name longer than DNS allows"
        return HostAssessment(shown, shown, None, ((reason, reputation.risks["invalid_host"]),))
    display = unicode_host(host)
    if address := ip_address_of(host):
        reason = f"raw IP address ({address})"
        return HostAssessment(host, display, None, ((reason, reputation.risks["raw_ip"]),))
    if host == "localhost" or host.endswith(".localhost"):
        reason = "raw IP address (localhost: this machine)"
        return HostAssessment(host, display, None, ((reason, reputation.risks["raw_ip"]),))
    entry = listed_entry(host, reputation)
    if entry:
        listed, info = entry
        risk = reputation.categories[info.category].risk
        reason = f"listed as {info.category} ({listed}): {info.note}".rstrip(": ")
        return HostAssessment(host, display, info.category, ((reason, risk),))
    # A brand's own shortener (goo.gl, t.co) still hides where it leads.
    if host not in reputation.shorteners and (owned := brand_domain(host, reputation)):
        domain, owner = owned
        reason = f"official domain of {owner} ({domain})"
        return HostAssessment(host, display, BRAND_CATEGORY, ((reason, 0.0),))
    return HostAssessment(host, display, None, tuple(_shape_reasons(host, display, reputation)))


def brand_domain(host: str, reputation: Reputation) -> tuple[str, str] | None:
    """(real domain, brand) when a host is a protected brand's domain or a subdomain of one."""
    labels = host.split(".")
    for i in range(len(labels) - 1):
        parent = ".".join(labels[i:])
        if owner := reputation.brands.owners.get(parent):
            return parent, owner
    return None


def _shape_reasons(host: str, display: str, reputation: Reputation) -> Iterable[tuple[str, float]]:
    risks = reputation.risks
    yield UNKNOWN_REASON, risks["unknown"]
    if host in reputation.shorteners:
        yield "link shortener hides the destination", risks["shortener"]
    tld = host.rsplit(".", 1)[-1]
    cheap_tld = tld in reputation.risky_tlds
    if cheap_tld:
        yield f"top-level domain .{tld} is often abused", risks["risky_tld"]
    if display != host:
        yield f"internationalised name ({host})", risks["risky_tld"]
    parts = host_parts(host)
    if parts and (found := imitation(parts, reputation.brands, cheap_tld)):
        known = found.protected.home
        yield f"imitates {known}: {IMITATION_WAYS[found.how][0]}", risks["lookalike"]
    if parts and (bait := bait_reason(parts, cheap_tld, reputation)):
        yield bait
    if parts and (posed := posing_domain(parts, cheap_tld)):
        yield f"{POSING_REASON} ({posed})", risks["posing_domain"]
    if parts and (word := government_word(parts, cheap_tld, reputation)):
        yield f"{GOVERNMENT_REASON} ({word})", risks["posing_domain"]


def posing_domain(parts: HostParts, cheap_tld: bool = False) -> str | None:
    """The domain name a host writes in front of its real one, if any. Pure.

    "e-zpass.com" in `e-zpass.com-tollpay.icu` (a suffix as the first hyphenated token of
    the name, right after a label of its own); "shop.com" in `shop.com.pay-now.xyz` (a
    suffix as the last label of the subdomain, after a label that is none). Only the
    generic suffixes count (POSING_SUFFIXES, POSING_PREFIXES): a language subdomain
    (`ro.`, `de.`) or a name such as `net-a-porter` is no pose. A country's second-level
    suffix ending the subdomain after a name poses too ("tvlicensing.co.uk" in
    `tvlicensing.co.uk.renewal-portal.click`), and on a cheap TLD a country code does
    ("stirileprotv.ro" in `stirileprotv.ro.news-live24.click`); only real public suffixes
    count.
    """
    own = [label for label in parts.subdomain if label != "www"]
    first, _, rest = parts.name.partition("-")
    if own and rest and first in POSING_PREFIXES:
        return f"{own[-1]}.{first}"
    if len(own) >= 2 and own[-1] in POSING_SUFFIXES and own[-2] not in POSING_SUFFIXES:
        return f"{own[-2]}.{own[-1]}"

    def suffix(name: str) -> bool:
        return public_suffixes().is_public(name, accept_unknown=False)

    if len(own) >= 3 and suffix(f"{own[-2]}.{own[-1]}") and not suffix(own[-3]):
        return ".".join(own[-3:])
    if (
        cheap_tld
        and len(own) >= 2
        and len(own[-1]) == 2
        and suffix(own[-1])
        and not suffix(own[-2])
    ):
        return f"{own[-2]}.{own[-1]}"
    return None


def government_word(parts: HostParts, cheap_tld: bool, reputation: Reputation) -> str | None:
    """A word that says government ("gov", "guvern") as a token of a registrable name that
    offers something besides, which is then no government's: theirs sit under their own
    suffixes (gov.uk, gov.ro, .gov), so `gov-solar-grants.uk.com` or
    `counciltax-refund-gov.co` only pose as one. A name that is the word alone (gov.wales,
    gov.bc.ca) or a compound with nothing to offer (e-gov.ro, gov-tech.ro) is no sign: the
    second sign is a bait, country or aid word among its other tokens, or a cheap TLD. The
    word glued to a country ("govuk", a government's domain written as one word) counts as
    the word, with the same second signs (`govuk-refund.com`, `govro-ajutor-incalzire.com`;
    round 28): not a project named for it (`govuk-frontend.netlify.app`,
    `govuk-tech-radar.io`). Pure."""
    tokens = [t for t in parts.name.split("-") if t]
    glued = next((t for t in tokens if _government_of_a_nation(t, reputation)), None)
    found = glued or next((t for t in tokens if t in reputation.government_words), None)
    if found is None or len(tokens) < 2:
        return None
    others = set(tokens) - {found}
    offered = others & (
        reputation.bait_words
        | reputation.nation_words
        | reputation.aid_words
        | reputation.aid_topics
    )
    return found if offered or cheap_tld else None


def _government_of_a_nation(token: str, reputation: Reputation) -> bool:
    """ "govuk", "govro", "guvernro": a government word and a country's name or code."""
    return any(
        token.startswith(word) and token[len(word) :] in reputation.nation_words
        for word in reputation.government_words
    )


def shortener_request(
    text: str, request_words: frozenset[str], giving_words: frozenset[str] = frozenset()
) -> bool:
    """Whether a message asks for money or a sign-in: two request words, or one beside a
    sum with its currency, in its own words (links left out). A donation counts only asked
    through the link itself ("donate through this link only"). Pure."""
    own = _URL.sub(" ", text)  # a link's letters (a shortener's random slug) are no words
    words = set(re.findall(r"[a-z]+", fold(own).lower()))
    found = words & request_words
    if words & giving_words and _THROUGH_LINK.search(fold(own)):
        found |= words & giving_words
    return len(found) >= 2 or (bool(found) and bool(_AMOUNT.search(own)))


# Money asked to go through the link itself.
_THROUGH_LINK = re.compile(
    r"(?i)\b(?:(?:through|via|using|on) (?:this|the|that) link|only through|this link only"
    r"|(?:doar |numai )?(?:prin|pe) (?:acest |linkul |link)|prin link)"
)


def bait_tokens(labels: Iterable[str], bait_words: frozenset[str]) -> tuple[tuple[str, ...], int]:
    """The bait words among the hyphen-separated tokens of `labels`, and how many tokens
    there are. Pure."""
    tokens = [t for label in labels for t in label.split("-") if t]
    return tuple(dict.fromkeys(t for t in tokens if t in bait_words)), len(tokens)


def national_service(parts: HostParts, shop: bool, reputation: Reputation) -> tuple[str, ...]:
    """A country as a token of a cheap domain's name: a cheap domain passing itself off as a
    national service or offer ("voltsaver-pro-uk.top", "loto-ro-castiguri.xyz"). On a TLD
    that is an ordinary word only beside a service's word (brands.yaml lure words:
    "heating-support-uk.online") or a money word ("ai-profit-romania.online"), not beside
    other words ("romania-travel.online", "uk-weather.online"); never on a shop's TLD, where
    it says where the shop sells ("flexijoint-uk.shop"). Pure."""
    if shop:
        return ()
    tokens = [t for t in parts.name.split("-") if t]
    nation = [t for t in tokens if t in reputation.nation_words]
    if not nation or len(nation) == len(tokens):  # "uk.xyz": the country alone is no service
        return ()
    if parts.suffix not in reputation.word_tlds:
        return tuple(nation)
    served = [t for t in tokens if t not in nation and t in reputation.service_words]
    return tuple(nation) if served else ()


def illness_offer(parts: HostParts, reputation: Reputation) -> tuple[str, ...]:
    """A chronic illness in the name of a domain on an abused TLD, selling its cure
    ("diabet-stop.click"); not on a TLD that is an ordinary word or a shop's
    ("arthritis-care.online"). Pure."""
    if parts.suffix in reputation.word_tlds:
        return ()
    tokens = _name_tokens(parts.name)
    found = tuple(t for t in tokens if t in reputation.illness_words)
    return found if found and any(t in reputation.cure_offer_words for t in tokens) else ()


def aid_offer(parts: HostParts, reputation: Reputation) -> tuple[str, ...]:
    """Help with heating or energy in a cheap domain's name, not a shop's: an offer of aid no
    public body makes there ("ajutor-incalzire-2025.online", "ajutorincalzire.online"); help
    alone ("ajutor-teme.online") or a topic alone ("smart-heating-energy.online") is an
    honest name. Pure."""
    if parts.suffix in reputation.shop_tlds:
        return ()
    return aid_named(_name_tokens(parts.name), reputation)


def aid_named(tokens: Sequence[str], reputation: Reputation) -> tuple[str, ...]:
    """The help and its topic among `tokens`, each whole or the two run together. Pure."""
    help_ = [t for t in tokens if t in reputation.aid_words]
    topic = [t for t in tokens if t in reputation.aid_topics]
    if help_ and topic:
        return (help_[0], topic[0])
    for t in tokens:
        for word in reputation.aid_words:
            if t.startswith(word) and t[len(word) :] in reputation.aid_topics:
                return (word, t[len(word) :])
    return ()


def _name_tokens(name: str) -> list[str]:
    """A registrable name's words, split at hyphens and digits ("ajutor-incalzire2025")."""
    return [t for t in re.split(r"[-\d]+", name) if t]


def bait_reason(
    parts: HostParts, cheap_tld: bool, reputation: Reputation
) -> tuple[str, float] | None:
    """A name assembled from bait words: one in any label on a cheap TLD (or a country as a
    token of its name, "pension-protect-uk.click"), or two in a
    registrable name of three or more tokens elsewhere ("truth-exposed-now.com",
    "energy-rebate-claim.net"); or an alarm word in the name, on any TLD ("cerul-otravit");
    subdomains alone are an organisation's own business. Pure."""
    if cheap_tld:
        labels = (*parts.subdomain, parts.name)
        found, _ = bait_tokens(labels, reputation.bait_words)
        found = found or bait_inside(labels, reputation.bait_inside)
        shop = parts.suffix in reputation.shop_tlds
        if shop:  # a shop's discounts and vouchers are its business ("reduceri-haine.shop")
            found = tuple(w for w in found if w not in reputation.shop_words)
        if parts.suffix in reputation.word_tlds:  # its word said again: "local-news.news"
            found = tuple(w for w in found if w != parts.suffix)
        found = (
            found
            or national_service(parts, shop, reputation)
            or aid_offer(parts, reputation)
            or illness_offer(parts, reputation)
        )
        if found:
            words = ", ".join(found)
            risk = reputation.risks["bait_on_risky_tld"]
            return f"{BAIT_REASON} ({words}) on a cheap domain", risk
    else:
        found, tokens = bait_tokens((parts.name,), reputation.bait_words)
        if len(found) >= 2 and tokens >= 3:
            return f"{BAIT_REASON} ({', '.join(found)})", reputation.risks["bait_name"]
    if alarm := alarm_word(parts.name, reputation.alarm_words):  # on any TLD
        return f"{ALARM_REASON} ({alarm})", reputation.risks["alarm_name"]
    return None


def bait_inside(labels: Iterable[str], words: Iterable[str]) -> tuple[str, ...]:
    """Bait words run together with another word at the start or end of a token
    ("truthjabfiles", "giftcardnow"): the other word MIN_REST letters or more, so
    "premium" is no "premiu" and "secure" no "cure"; never inside ("designing"). Pure."""
    tokens = [t for label in labels for t in label.split("-") if t]
    return tuple(
        dict.fromkeys(
            w
            for t in tokens
            for w in words
            if len(t) - len(w) >= MIN_REST and (t.startswith(w) or t.endswith(w))
        )
    )


def alarm_word(name: str, words: Sequence[str]) -> str | None:
    """An alarm word that is a token of a registrable name, or starts or ends one beside
    a word of MIN_REST letters or more (`adevarnecenzurat`, not `redpillow`). Pure."""
    for token in (t for t in name.split("-") if t):
        for word in words:  # longest first: the word a reader sees
            rest = len(token) - len(word)
            if token == word or (rest >= MIN_REST and token.startswith(word)):
                return word
            if rest >= MIN_REST and token.endswith(word):
                return word
    return None


def is_dns_name(host: str) -> bool:
    """Whether a host fits DNS: at most 253 characters, labels of at most 63."""
    if len(host) > MAX_HOST_CHARS:
        return False
    return all(len(label) <= MAX_LABEL_CHARS for label in host.split("."))


def ip_address_of(host: str) -> str | None:
    """The IP address a host names, in any notation a browser or inet_aton accepts, or None.

    IPv6 (brackets already removed), dotted quad, and the older IPv4 forms: one to four
    parts, each decimal, octal (leading 0) or hexadecimal (0x), the last part filling
    the remaining bytes — 2130706433, 0x7f000001, 0177.0.0.1, 0x7f.1, 127.1 are all
    127.0.0.1.
    """
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        pass
    parts = host.split(".")
    if not 1 <= len(parts) <= 4 or not all(_IPV4_PART.fullmatch(p) for p in parts):
        return None
    *head, last = [_ipv4_part(p) for p in parts]
    if any(v > 255 for v in head) or last >= 256 ** (4 - len(head)):
        return None
    number = 0
    for value in head:
        number = number * 256 + value
    return str(ipaddress.IPv4Address(number * 256 ** (4 - len(head)) + last))


def _ipv4_part(part: str) -> int:
    if part[:2].lower() == "0x":
        return int(part[2:] or "0", 16)
    return int(part, 8) if len(part) > 1 and part[0] == "0" else int(part)


def assess_domains(
    text: str, url: str | None = None, reputation: Reputation | None = None
) -> DomainReport:
    """Assess every host named by the input."""
    reputation = reputation or default_reputation()
    hosts = _linked_hosts(text, url, reputation)
    assessed = []
    message: _Message | None = None  # read once, if an unknown host needs it
    for host, signing_in in hosts.items():
        found = assess_host(host, reputation)
        if found.category is None and _named_host(found.host) and (parts := host_parts(host)):
            message = _read_message(text, reputation) if message is None else message
            found = _borrowing(found, parts, message.names, reputation)
            found = _shortening(found, parts, message, reputation)
        assessed.append(_signin_page(found, reputation) if signing_in else found)
    if any(h.host in reputation.shorteners for h in assessed):
        slugs = shortener_slugs(text, url, reputation)
        asking = shortener_request(text, reputation.request_words, reputation.giving_words)
        assessed = [_asking(h, reputation, asking, slugs.get(h.host)) for h in assessed]
    return DomainReport(tuple(assessed), url_given=bool(url))


@dataclass(frozen=True)
class _Message:
    """What the text writes outside its links and bare hosts: the names it gives
    (borrowed_names.py) and every word, folded."""

    names: frozenset[str]
    words: frozenset[str]


def _read_message(text: str, reputation: Reputation) -> _Message:
    prose = _URL.sub(" ", normalise(text, fold_look_alikes=False).text)
    prose = reputation.bare_domain.sub(" ", prose)
    return _Message(written_names(prose), frozenset(_PROSE_WORD.findall(fold(prose))))


_PROSE_WORD = re.compile(r"[^\W\d_]++")


def _named_host(host: str) -> bool:
    """A host that can carry a name: a DNS name, not an address or this machine."""
    local = host == "localhost" or host.endswith(".localhost")
    return is_dns_name(host) and ip_address_of(host) is None and not local


def _borrowing(
    host: HostAssessment, parts: HostParts, names: frozenset[str], reputation: Reputation
) -> HostAssessment:
    """An unknown host's assessment when its name starts with a name the message gives,
    beside a word that asks or poses (borrowed_names.py)."""
    tld = host.host.rsplit(".", 1)[-1]
    found = borrowed_name(parts, names, tld in reputation.risky_tlds, reputation.borrowing)
    if found is None:
        return host
    reason = f"{BORROWED_REASON} ({found.name}) beside {', '.join(found.words)}"
    return _with_reason(host, reason, reputation.risks["borrowed_name"])


def _shortening(
    host: HostAssessment, parts: HostParts, message: _Message, reputation: Reputation
) -> HostAssessment:
    """An unknown host's assessment when it writes a brand the message names with a letter
    left out (lookalikes.shortened_imitation), unless it imitates one already."""
    if any(reason.startswith("imitates ") for reason, _ in host.reasons):
        return host
    cheap_tld = host.host.rsplit(".", 1)[-1] in reputation.risky_tlds
    found = shortened_imitation(parts, reputation.brands, cheap_tld, message.names, message.words)
    if found is None:
        return host
    reason = f"imitates {found.protected.home}: {IMITATION_WAYS[found.how][0]}"
    return _with_reason(host, reason, reputation.risks["lookalike"])


def _with_reason(host: HostAssessment, reason: str, risk: float) -> HostAssessment:
    return HostAssessment(host.host, host.display, host.category, (*host.reasons, (reason, risk)))


def shortener_slugs(text: str, url: str | None, reputation: Reputation) -> dict[str, str]:
    """For each link shortener linked to, what the address's own words name when they sell
    something (`slug_names`: "tinyurl.com/lidl-voucher-paste"). The sender chose those
    words; a shortener's random slug has none."""
    found: dict[str, str] = {}
    text = normalise(text, fold_look_alikes=False).text
    for item, is_link in itertools.islice(_candidates(text, url, reputation), MAX_CANDIDATES):
        host = normalise_host(item) if is_link else None
        if (
            host in reputation.shorteners
            and host not in found
            and (named := slug_names(item, reputation))
        ):
            found[host] = named
    return found


def slug_names(link: str, reputation: Reputation) -> str | None:
    """What a link's path names that sells, when it names two things: a protected brand, a
    bait, alarm or sign-in word, "free", a country beside a bait word, or help with heating
    ("lidl-voucher-paste", "netflix-free-year", "login-verify-card", "alocatie-2025-ro",
    "heating-grant-2025"); each a whole word of the path. One alone is the ordinary address
    of an honest page ("ghid-pensie-2025", "kaufland-oferte", "stiri-locale", "cadou-nunta",
    "free-school-meals-uk"), but for a miracle cure's or a leak's word beside what it sells
    (a remedy, a document) or a number of days, which names the page by itself
    ("ceai-minune-7zile", "3soda-cure", "leaked-lab-files"; not "cure-cancer-run-2025").
    Pure."""
    try:
        path = urlsplit(link if "://" in link else "http://" + link).path
    except ValueError:
        return None
    folded = fold(path[:MAX_PATH_CHARS]).lower()
    words = re.findall(r"[a-z]+", folded)
    brands = reputation.brands
    alone = next((a for w in words if (a := _alone_word(w, reputation))), None)
    if alone and (_DAYS.search(folded) or any(w in reputation.slug_sold_words for w in words)):
        return alone
    signs: dict[str, None] = dict.fromkeys(aid_named(words, reputation))
    if alone:
        signs[alone] = None
    nations = [w for w in words if w in reputation.nation_words]
    for word in words:
        hit = brands.by_strict.get(brands.folding.strict(word))
        if hit and len(hit.name) >= MIN_SLUG_NAME:
            signs[hit.name] = None
        elif (
            word in _SLUG_WORDS
            or word in reputation.signin_path_words
            or word in reputation.bait_words
            or word in reputation.alarm_words
        ):
            signs[word] = None
    if nations and any(w in reputation.bait_words for w in signs):
        signs[nations[0]] = None  # "alocatie-2025-ro", not "free-school-meals-uk"
    return ", ".join(signs) if len(signs) >= 2 else None


def _alone_word(word: str, reputation: Reputation) -> str | None:
    """A miracle cure's or a leak's word, whole or ending or starting a word run together
    ("ceaiminune"). Pure."""
    if word in reputation.slug_alone_words:
        return word
    return next(
        (
            a
            for a in reputation.slug_alone_words
            if len(a) >= MIN_RUN_TOGETHER_ALONE and (word.endswith(a) or word.startswith(a))
        ),
        None,
    )


# A run-together slug word counts from this many letters ("minune", "leacul", not "cure").
MIN_RUN_TOGETHER_ALONE = 5
# A number of days, hours or weeks in a slug: what a miracle page promises ("7zile").
_DAYS = re.compile(r"\d+-?(?:zile|days|ore|hours|nopti|nights|saptamani|weeks)")


# A protected name counts in a slug from this many letters ("lidl", not "ing", "bt").
MIN_SLUG_NAME = 4
# Words of a giveaway that count in a slug beside another sign.
_SLUG_WORDS = frozenset({"free", "gratis", "gratuit"})


def _signin_page(host: HostAssessment, reputation: Reputation) -> HostAssessment:
    """An unknown host's assessment when its link asks to sign in: a protected name written
    with one letter doubled, as the whole name, counts there ("emaag.ro/cont/verificare");
    nothing else does (a brand's regional site has sign-in pages too)."""
    parts = host_parts(host.host)
    if host.category or parts is None or any("imitates" in r for r, _ in host.reasons):
        return host
    found = doubled_name(parts.name, reputation.brands) if not parts.subdomain else None
    if not found:
        return host
    way = IMITATION_WAYS[found.how][0]
    reason = f"imitates {found.protected.home}: {way}{SIGNIN_PAGE}"
    return _with_reason(host, reason, reputation.risks["lookalike"])


def _asking(
    host: HostAssessment, reputation: Reputation, asking: bool, slug: str | None
) -> HostAssessment:
    """A shortener's assessment in a message that asks for money or a sign-in, or under an
    address whose words sell (shortener_slugs)."""
    if host.host not in reputation.shorteners or not (asking or slug):
        return host
    risk = reputation.risks["shortener_request"]
    reason = SHORTENER_REQUEST_REASON if asking else f"{SHORTENER_SLUG_REASON} {slug}"
    return HostAssessment(host.host, host.display, host.category, (*host.reasons, (reason, risk)))


def report_data(report: DomainReport, reputation: Reputation | None = None) -> dict[str, Any]:
    """JSON-ready evidence: each host with its category and reasons, worst first."""
    reputation = reputation or default_reputation()
    worst = sorted(report.hosts, key=lambda h: -h.risk)
    return {
        "applicable": report.applicable,
        "evidence_count": report.evidence_count,
        "hosts": [
            {
                "host": h.display,
                "ascii": h.host,
                "category": h.category,
                "risk": h.risk,
                "reasons": [r for r, _ in h.reasons],
            }
            for h in worst
        ],
        "summary": [_summary(h, "en", reputation) for h in worst[:5] if h.risk > 0 or h.category],
        "summary_ro": [
            _summary(h, "ro", reputation) for h in worst[:5] if h.risk > 0 or h.category
        ],
    }


def _summary(host: HostAssessment, language: str, reputation: Reputation) -> str:
    if host.category:
        label = getattr(reputation.categories[host.category].label, language)
        return f"{host.display}: {label}"
    strongest = max(host.reasons, key=lambda r: r[1])[0]
    if language == "ro":
        strongest = _ro_reason(strongest)
    return f"{host.display}: {strongest}"


_RO_REASONS = (
    ("not in the source list", "nu apare în lista de surse"),
    ("link shortener hides the destination", "scurtător de link care ascunde destinația"),
    ("raw IP address", "adresă IP în loc de domeniu"),
    ("host name longer than DNS allows", "nume de domeniu mai lung decât permite DNS"),
    ("imitates", "imită"),
    ("top-level domain", "domeniu de nivel superior des folosit abuziv"),
    ("internationalised name", "nume internaționalizat"),
    (BAIT_REASON, "nume compus din cuvinte-momeală"),
    (POSING_REASON, "un nume de domeniu pus în fața altui domeniu"),
    (ALARM_REASON, "un nume care promite adevăruri ascunse sau otrăvuri"),
    (SHORTENER_REQUEST_REASON, "scurtător de link într-un mesaj care cere bani sau autentificare"),
    (SHORTENER_SLUG_REASON, "scurtător de link a cărui adresă numește"),
    (GOVERNMENT_REASON, "un cuvânt al guvernului într-un nume din afara domeniilor guvernului"),
    (BORROWED_REASON, "împrumută un nume dat în mesaj"),
)


def _ro_reason(reason: str) -> str:
    for en, ro in _RO_REASONS:
        if reason.startswith(en):
            if en == "imitates":
                return ro + _ro_ways(reason[len(en) :]).replace(SIGNIN_PAGE, SIGNIN_PAGE_RO)
            # the name it poses as, the word
            if en in (POSING_REASON, ALARM_REASON, GOVERNMENT_REASON, SHORTENER_SLUG_REASON):
                return ro + reason[len(en) :]
            if en == BORROWED_REASON:  # the name, and the words beside it
                return ro + reason[len(en) :].replace(" beside ", " lângă ")
            if en == BAIT_REASON:  # the words found, and where
                rest = reason[len(en) :].replace(" on a cheap domain", " pe un domeniu ieftin")
                return ro + rest
            return ro
    return reason


def _ro_ways(text: str) -> str:
    for en, ro in IMITATION_WAYS.values():
        text = text.replace(en, ro)
    return text
