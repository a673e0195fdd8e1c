"""The forms of a check-worthy claim and the register of a risky one, read from one sentence.

`data/claims.yaml` holds the lexicons and weights, validated by `ClaimsSpec`. Forms say
that a sentence asserts something a fact check could settle (a number, a cause, a cure,
an insider's admission); the register says how it is put (passed around on WhatsApp,
with a cover-up, calmly sourced, hedged). Both are pure functions of the sentence.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache, update_wrapper
from typing import Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from workers.analysis.datafiles import load_validated
from workers.analysis.satire import credited_to_satire, satire_disowned
from workers.analysis.technique_lexicon import checked_terms
from workers.analysis.techniques import term_pattern
from workers.analysis.term_index import Starts, TermIndex
from workers.analysis.text import fold

Form = Literal[
    "number",
    "percentage",
    "date",
    "named_entity",
    "superlative",
    "causal",
    "absolute",
    "admission",
    "authority_claim",
    "health",
    "cure",
    "drastic_measure",
    "plot",
    "group",
    # A share of a crime, a burden or a betrayal laid on a group ("7 din 10 furturi au fost
    # comise de cetățeni străini", "illegal immigrants commit forty percent of …").
    "group_blame",
    "absolute_causal",
    "harm",
    "accusation",
    "inference",
    # Derived, not read from a lexicon: something concrete (a name, a date, a number) told
    # as a rumour — said to be hidden, and passed around or pressed on the reader (`rumoured`).
    "rumour",
]
Register = Literal[
    "conspiracy",
    "viral_sources",
    "unsourced",
    "reported_claim",
    "urgency",
    "debunked",
    "satire",
    "revelation",
    "sourced",
    "studied",
    "hedges",
    "advice",
    # A referral to a doctor closing a professional's tip; heard in the sentences around it.
    "referral",
    "emotive",
    # Derived, not read from a lexicon: a figure in a text that attributes nothing anywhere
    # (claims.extract_claims), the commonest shape of an invented statistic.
    "unattributed_figure",
    # Derived: the learned claims model reads the text as worded like those that assert
    # false or unverified claims (claims.extract_claims, wording_model.py).
    "learned_wording",
    # Derived: the sentence the learned claims model reads as the most claim-like, in a text
    # it reads as asserting false or unverified claims while the forms found none risky
    # (claims.extract_claims).
    "learned_claim",
]
Rating = Literal["false", "misleading", "mixed", "unproven", "true"]

FORMS: tuple[Form, ...] = Form.__args__  # type: ignore[attr-defined]
REGISTERS: tuple[Register, ...] = Register.__args__  # type: ignore[attr-defined]
# The registers a sentence's words say; the others are derived from the whole text.
DERIVED_REGISTERS: frozenset[Register] = frozenset(
    {"unattributed_figure", "learned_wording", "learned_claim"}
)
LEXICAL_REGISTERS: tuple[Register, ...] = tuple(r for r in REGISTERS if r not in DERIVED_REGISTERS)
# Registers that attribute or qualify what a text says: one anywhere, and its figures are
# not unattributed.
ATTRIBUTING: frozenset[Register] = frozenset(
    {"sourced", "studied", "hedges", "debunked", "satire", "advice", "reported_claim"}
)

# Each pattern starts only where a digit run starts and never backtracks into a run
# (possessive quantifiers), so a run of digits is read once: linear on any input.
_DIGIT = re.compile(r"\d")
_NUMBER = re.compile(r"(?<![\w.,])\d++(?:[.,]\d++)*+")
_PERCENT = re.compile(r"(?<!\d)\d++(?:[.,]\d++)?\s?%")
# A ratio of people or things: "1 in 3 girls", "2 out of 5", "1 din 4 români".
# Not a year ("Covid-19 in 2020", "Legea nr. 55 din 2020"), a date ("1 din 2 noiembrie") or a
# number run into another ("1 in 10,000" is one; "3.5" is not two).
_RATIO = re.compile(
    r"(?i)(?<![\d.,\-])(?<!nr\. )\d{1,3}+ (?:in|out of|din) "
    r"(?!(?:1[89]|20)\d\d\b)(?:\d{1,3}+(?:[.,]\d{3})++|\d{1,6}+)(?![\d]|[.,]\d)"
    r"(?! (?:ian|feb|mar|apr|mai|iun|iul|aug|sep|oct|noi|dec|jan|may|jun|jul|nov)[a-z]*\b)"
)
# A statistic: a share of a group ("73% of", "70% din", "80% dintre") or a comparison
# ("47% more productive", "cu 30% mai"), or a ratio; not a discount ("până la 30%") or an
# idiom ("one hundred percent").
_STATISTIC = re.compile(
    r"(?i)(?<![\d.,])\d++(?:[.,]\d++)?\s?%\s(?:of|din|dintre|more|less|fewer|higher|lower|mai)\b"
)


# The same in words: "one in three teenagers", "two out of five", "unul din trei copii",
# "două din cinci"; and a multiple: "twice as likely", "three times more", "de două ori mai".
_SMALL_EN = r"(?:one|two|three|four|five|six|seven|eight|nine|ten)"
_SMALL_RO = r"(?:unul|una|doi|dou[ăa]|trei|patru|cinci|[șş]ase|[șş]apte|opt|nou[ăa]|zece)"
_COUNT = r"(?!(?:1[89]|20)\d\d\b)\d{1,6}+"  # a count of people, not a year
_WORDED = re.compile(
    rf"(?i)(?<!\w)(?:{_SMALL_EN} (?:in|out of) (?:{_SMALL_EN}|{_COUNT})"
    rf"|{_SMALL_RO} din (?:{_SMALL_RO}|{_COUNT}))(?!\w)"
    # not "two in one", "una din două" (either-or) or a span ("one in two years")
    r"(?<! one)(?<!una din dou[ăa])(?! (?:ani|years)\b)"
    r"|(?<!\w)(?:twice as (?:likely|many|often|common)"
    r"|(?:two|three|four|five|ten|\d{1,3}+) times (?:more|higher|as (?:likely|many))"
    r"|de (?:dou[ăa]|trei|patru|cinci|zece|\d{1,3}+) ori mai"
    r" (?:mul[țţ]i|multe|probabil|des|frecvent))(?!\w)"
    # a share in words (round 31: "peste jumătate dintre mașini", "more than half of the
    # cars", "two thirds of"); not "half of the cake" nor "a quarter of an hour"
    r"|(?<!\w)(?:(?:more than|over|nearly|almost) half|two thirds|three quarters) of"
    r"(?! an? )(?!\w)"
    r"|(?<!\w)(?:(?:peste|mai mult de|aproape|aproximativ) jum[ăa]tate|dou[ăa] treimi"
    r"|trei sferturi) (?:din|dintre)(?!\w)"
)
# Words one of those needs: most sentences have none, and skip the pattern.
_WORDED_HINTS = (" in ", " din ", " dintre ", " out of ", "twice ", " times ", " ori ", " of ")


def _worded_statistic(sentence: str) -> bool:
    lowered = sentence.lower()
    return any(h in lowered for h in _WORDED_HINTS) and bool(_WORDED.search(sentence))


def states_statistic(sentence: str) -> bool:
    """Whether a sentence states a share, a comparison in percent or in multiples, or a
    ratio, in digits or in words. Pure."""
    return bool(
        _STATISTIC.search(sentence) or _RATIO.search(sentence) or _worded_statistic(sentence)
    )


_ALL_OF_IT = re.compile(r"(?<![\d.,])100\s?%")
# A body's notice of what it never asks in private ("it never asks anyone for money in
# private messages", "nu vă cere niciodată bani în privat"): its "never" and its "in private"
# are no plot. Read folded; only this shape ("the government does not ask anyone: the
# contracts were signed in secret" stays a plot: round 24's review).
_NEVER_ASKS_IN_PRIVATE = re.compile(
    r"\b(?:never|not|n['’]t)\s++(?:asks?|requests?|contacts?)\s++(?:you|anyone|anybody|customers"
    r"|clients|donors|supporters|people|users|voters|patients)\b[^.!?]*?\bin private\b"
    r"|\bnu\s++(?:(?:va|iti|te|le|ii|ne)\s++)?(?:cere|solicita|contacteaza)\b[^.!?]*?\bin privat\b"
)
# Paid by someone to say or do something, whoever pays ("experts paid by Pfizer to say it is
# safe", "activists paid by USAID to destabilise"): the accusation a bare "paid by" also
# reads in a deadline ("paid by 31 January") or a card payment, which this never is. Not
# "to cover", "to promote" or "to block": an insurer pays to cover a repair, a tourist board
# to promote a region.
_PAID_TO = re.compile(
    r"\b(?:paid|funded|bankrolled|financed) by [^.,;:!?]{2,40}? to (?:say|lie|push|spread|"
    r"destabili[sz]e|wreck|ruin|attack|smear|sabotage|protest|silence|hide)\b",
    re.IGNORECASE,
)
_YEAR = re.compile(r"\b(?:1[89]\d\d|20\d\d)\b")
_NUMERIC_DATE = re.compile(r"\b\d{1,2}[./-]\d{1,2}[./-]\d{2,4}\b")
# Romanian "mai" is both May and "more" ("cel mai"): only a day number makes it a date.
_DAY_OF_MAY = re.compile(r"(?i)\b\d{1,2}\s{1,3}mai\b")
# Shouting: one long word in capitals ("INCREDIBIL") or two capitalised words in a row;
# a single short acronym (NATO, COVID) is not shouting.
_CAPS = "A-ZĂÂÎȘȚŞŢ"
_SHOUTING = re.compile(
    rf"(?<!\w)[{_CAPS}]{{7,}}+(?!\w)|(?<!\w)[{_CAPS}]{{3,}}+\s{{1,3}}+[{_CAPS}]{{3,}}+(?!\w)"
)
# A quotation: „…”, “…”, "…", «…», ‘…’, or '…' opened after a non-letter (not an apostrophe), at
# most 300 characters, no nesting (an opening mark inside ends the attempt, so a flood of
# them is read once); its inside is reported speech, not the writer's.
_QUOTED = re.compile(
    r"„[^„”“\"]{0,300}+[”“\"]|“[^“”]{0,300}+”|\"[^\"]{0,300}+\"|(?<!\w)'[^']{0,300}+'"
    r"|«[^«»]{0,300}+»|‘[^‘’]{0,300}+’"
)
# Romanian "circulă" is traffic as often as a rumour: "se circulă doar cu echipamente de
# iarnă", "circulă trenuri directe spre Constanța" (round 28). Those spans, folded, are no
# viral source: a rumour circulates "pe rețele", "un mesaj circulă".
_VEHICLES = r"(?:tren|autobuz|tramvai|masin|vehicul|curse|garnitur|microbuz|autocar|metrou)\w{0,6}+"
_TRAFFIC = re.compile(
    rf"\bse circula\b|\bcircula(?:u|t)?\s++(?:(?:doar|numai|din nou|iar|zilnic)\s++)?{_VEHICLES}"
    rf"|\b{_VEHICLES}\s++(?:(?:nu|mai|vor|nu mai|nu vor|vor mai)\s++)?circula(?:u|t)?\b"
)
# A speaker's own page is where it says things, not where a rumour came from: "the service
# will be livestreamed on our Facebook page", "transmisă live pe pagina noastră de Facebook"
# (round 30); folded, blanked like traffic. Not a group, a feed or a chat, where rumours
# arrive ("our WhatsApp group says …"), nor someone else's post.
_PLATFORMS = r"(?:facebook|instagram|youtube|tiktok|telegram|twitter|linkedin)"
_OWNERS = r"(?:parish|school|church|council|club|library|museum|college|university)"
_OWN_CHANNEL = re.compile(
    rf"\b(?:our|my|the {_OWNERS}(?:'s)?)\s++(?:official\s++)?{_PLATFORMS}\s++"
    rf"(?:page|channel|account|profile)\b"
    rf"|\bpagina\s++(?:noastra\s++|mea\s++)(?:oficiala\s++)?de\s++{_PLATFORMS}\b"
    rf"|\bpagina\s++de\s++{_PLATFORMS}\s++a\s++(?:noastra|parohiei|scolii|bisericii|primariei"
    rf"|asociatiei|liceului|muzeului|bibliotecii)\b"
)
# Hearsay about the speaker is news of the speaker: "apparently I'm 11% Norwegian" (round
# 30), not a rumour passed on; "apparently we were lied to" is one.
_ABOUT_ONESELF = re.compile(r"\b(?:apparently|reportedly)\s++(?:i|i'm|im|i am|i was|i've|i have)\b")
# Spans blanked before the registers are read: none of them is where a claim came from.
_NO_SOURCES = (_TRAFFIC, _OWN_CHANNEL, _ABOUT_ONESELF)
# Register heard in the sentences around a claim (this many before and after) as well as
# in its own: "Wake up!" two sentences on still frames the claim.
CONTEXT_SENTENCES = 2
CONTEXT_REGISTERS: frozenset[Register] = frozenset(
    {"conspiracy", "viral_sources", "urgency", "debunked", "unsourced", "referral"}
)
# A source the sentence itself discredits sources nothing: one passed around, one that
# cites nothing, one said to hide the truth or to have "finally" confessed it.
_DISCREDITING = ("viral_sources", "unsourced", "conspiracy", "revelation")
# A debunk rebuts a claim the text reports as someone else's: without one of these near it,
# "… is false" is the writer's own claim.
_REPORTED = ("viral_sources", "reported_claim")


class Terms(BaseModel):
    """One lexicon: its terms in each language."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    en: list[str] = Field(min_length=1)
    ro: list[str] = Field(min_length=1)

    @field_validator("en", "ro")
    @classmethod
    def _wildcards_end_words(cls, terms: list[str]) -> list[str]:
        return checked_terms(terms)


class Checkworthiness(BaseModel):
    """When a sentence is a claim: the weight of each form, the minimum, the factual forms."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    minimum: float = Field(gt=0, le=1)
    weights: dict[Form, float]
    factual: list[Form] = Field(min_length=1)

    @model_validator(mode="after")
    def _every_form_weighed(self) -> Checkworthiness:
        missing = set(FORMS) - set(self.weights)
        if missing:
            raise ValueError(f"weights missing for {sorted(missing)}")
        return self


class FormLexicons(BaseModel):
    """Terms behind the forms that are not read by a pattern."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    months: Terms
    percentage_words: Terms
    quantity_words: Terms
    superlatives: Terms
    causal: Terms
    circumstances: Terms
    absolutes: Terms
    authorities: Terms
    admissions: Terms
    at_last: Terms
    confirmations: Terms
    secrecy: Terms
    covertly: Terms
    harm: Terms
    health_topics: Terms
    cures: Terms
    drastic_measures: Terms
    plot: Terms
    groups: Terms
    blamed: Terms
    unblamed: Terms
    accusations: Terms
    inference: Terms


class RegisterLexicons(BaseModel):
    """Terms of each register feature."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    conspiracy: Terms
    viral_sources: Terms
    unsourced: Terms
    reported_claim: Terms
    urgency: Terms
    debunked: Terms
    # Not a register of its own: a rebuttal of words in its own sentence (`debunked` there).
    debunked_outright: Terms
    satire: Terms
    sourced: Terms
    studied: Terms
    hedges: Terms
    advice: Terms
    referral: Terms
    emotive: Terms


class RiskRule(BaseModel):
    """How an unverified claim's forms and register add up to its risk."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    weights: dict[Form | Register, float]
    risky_from: float = Field(gt=0, le=1)
    unverified_max: float = Field(ge=0, le=100)
    unverified_floor: float = Field(ge=0, le=100)
    caution_cap: float = Field(ge=0, le=100)
    # The learned claims model's probability from which its register joins each claim.
    learned_from: float = Field(gt=0, le=1)
    # ... to the claims its forms alone make at least this risky (0-100).
    learned_beside: float = Field(ge=0, le=100)
    # The probability from which the model makes a claim of its own where the forms found
    # no risky one: its most claim-like sentence.
    learned_alone: float = Field(gt=0, le=1)


class ClaimsSpec(BaseModel):
    """The whole of `data/claims.yaml`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: Literal[2]
    checkworthiness: Checkworthiness
    forms: FormLexicons
    registers: RegisterLexicons
    risk: RiskRule
    rating_risk: dict[Rating, float]
    match_threshold: float = Field(gt=0, le=1)
    not_names: list[str]
    lure_calls: Terms


@lru_cache(maxsize=1)
def claims_spec() -> ClaimsSpec:
    """`data/claims.yaml`, validated (DataFileError naming the field when it is broken)."""
    return load_validated("claims.yaml", ClaimsSpec)


@lru_cache(maxsize=1)
def _lure_calls() -> re.Pattern[str]:
    return _alternation(claims_spec().lure_calls)


# A question answered no in the next sentence by who says so: "Can you treat an ear
# infection with vinegar? No, says the NHS: …", "Nu, spun medicii" (round 28): the question
# is the claim the text answers. A bare "No." answers rhetorical questions as often ("Is
# the vaccine safe? No. They never tested it"), and is no rebuttal here.
_SOURCED_NO = re.compile(
    r"(?:no|nope|nu|not at all|deloc|absolutely not|of course not|nicidecum)"
    r"\s*+[,;:\u2013\u2014]\s*+"
    r"(?:says?|said|according to|experts|doctors|scientists|researchers|the nhs|"
    r"spun|spune|potrivit|conform|explica|medicii|specialistii|expertii|cercetatorii)\b"
)


def answered_no(sentences: list[str]) -> bool:
    """Whether a question among `sentences` is answered no by the next, with who says so
    ("Produce vaccinul autism? Nu, spun medicii: …"). Not a shouted "NO, say the experts!"
    (a sneer), nor an answer that takes itself back ("No, says the government: but they
    would say that"). Pure."""
    for question, answer in itertools.pairwise(sentences):
        answer = answer.strip()
        if not question.rstrip().endswith("?") or answer[:2].isupper() or "!" in answer:
            continue
        folded = fold(answer)
        if _SOURCED_NO.match(folded) and not _TAKEN_BACK.search(folded):
            return True
    return False


_TAKEN_BACK = re.compile(r"\b(?:but|dar|insa|they would|would say|of course they)\b")


def asks_to_act_through_a_link(folded: str) -> bool:
    """Whether a text (folded) asks its reader to do what a lure asks through a link:
    confirm, update, register, pay, check their eligibility (`lure_calls`). Pure."""
    return bool(_lure_calls().search(folded))


def _terms(terms: Terms | list[Terms]) -> list[str]:
    groups = terms if isinstance(terms, list) else [terms]
    return [t for g in groups for t in (*g.en, *g.ro)]


def _alternation(terms: Terms | list[Terms]) -> re.Pattern[str]:
    found = {term_pattern(t) for t in _terms(terms)}
    # Longest first, so "cel mai mare nivel" wins over "cel mai".
    return re.compile(rf"(?<!\w)(?:{'|'.join(sorted(found, key=len, reverse=True))})(?!\w)")


@dataclass(frozen=True)
class _Patterns:
    lexicons: Mapping[str, re.Pattern[str]]
    register: Mapping[str, re.Pattern[str]]
    not_names: frozenset[str]
    # Where each lexicon (form or register, by name) can start in a sentence.
    index: TermIndex


@lru_cache(maxsize=1)
def _patterns() -> _Patterns:
    spec = claims_spec()
    forms = spec.forms
    terms = {
        **{name: getattr(forms, name) for name in FormLexicons.model_fields},
        **{name: getattr(spec.registers, name) for name in RegisterLexicons.model_fields},
        # "Finally", "at last", "leaked": the words that make an admission a revelation.
        "revelation": [forms.at_last, forms.secrecy],
    }
    return _Patterns(
        lexicons={name: _alternation(terms[name]) for name in FormLexicons.model_fields},
        register={
            name: _alternation(terms[name])
            for name in (*RegisterLexicons.model_fields, "revelation")
        },
        not_names=frozenset(fold(w) for w in spec.not_names),
        index=TermIndex.of({name: _terms(t) for name, t in terms.items()}),
    )


# A sentence up to this long has its forms and register remembered, up to SENTENCE_MEMO of
# them per process: a text that repeats a line ("Distribuiți! Distribuiți!"), or a campaign
# sent again and again, reads it once. Both are pure functions of the sentence.
MEMO_SENTENCE_MAX = 200
SENTENCE_MEMO = 4096

_Read = TypeVar("_Read", bound=str)


class _SentenceMemo(Generic[_Read]):
    """A pure reading of one sentence, its answers for short sentences remembered."""

    def __init__(self, read: Callable[[str], list[_Read]]) -> None:
        update_wrapper(self, read)
        self._read = read
        self.memo = lru_cache(maxsize=SENTENCE_MEMO)(lambda sentence: tuple(read(sentence)))

    def __call__(self, sentence: str) -> list[_Read]:
        if len(sentence) <= MEMO_SENTENCE_MAX:
            return list(self.memo(sentence))
        return self._read(sentence)

    def __reduce__(self) -> str:
        return self._read.__qualname__  # pickled by name, as the function it wraps would be


@_SentenceMemo
def sentence_forms(sentence: str) -> list[Form]:
    """The forms of check-worthy claim present in one sentence."""
    folded = fold(sentence)
    lexicons = _patterns().lexicons
    starts = _patterns().index.starts(folded)
    has = dict.fromkeys(lexicons, False)
    for name in starts.possible(lexicons):  # most sentences start no lexicon's term
        has[name] = starts.search(name, lexicons[name])
    # The sums, deadlines and names of a quoted message are the message's ("a text reading
    # 'pay £1.45 within 12 hours'"), not figures the report asserts.
    own = _QUOTED.sub(lambda m: " " * len(m[0]), sentence)
    # Percentages, numbers and dates in figures all need a digit: most sentences have none.
    digits = _DIGIT.search(sentence) is not None
    found: list[Form] = []
    if (
        has["percentage_words"]
        or (digits and (_PERCENT.search(sentence) or _RATIO.search(sentence)))
        or _worded_statistic(sentence)
    ):
        found.append("percentage")
    if (digits and _NUMBER.search(_YEAR.sub("", own))) or _has_outside(
        starts, "quantity_words", own
    ):
        found.append("number")
    dated = (_YEAR, _NUMERIC_DATE, _DAY_OF_MAY)
    if (digits and any(d.search(own) for d in dated)) or _has_outside(starts, "months", own):
        found.append("date")
    if any(fold(w) not in _patterns().not_names for w in names(own)):
        found.append("named_entity")
    found += _lexical_forms(has, sentence, starts, own)
    if "percentage" in found and has["groups"] and has["blamed"] and not has["unblamed"]:
        found.append("group_blame")
    return found


def _has_outside(starts: Starts, lexicon: str, own: str) -> bool:
    """Whether form lexicon `lexicon` matches the folded sentence outside its quotations
    (`own` is the sentence with them blanked, same length)."""
    pattern = _patterns().lexicons[lexicon]
    return any(not own[m.start()].isspace() for m in starts.finditer(lexicon, pattern))


def _lexical_forms(has: Mapping[str, bool], sentence: str, starts: Starts, own: str) -> list[Form]:
    # An appeal to authority is an admission when an insider "admits" (or anyone "finally
    # admits", or experts "finally confirm") or a secret study "shows"; a plain "studies
    # show" is a weaker authority claim.
    absolute = has["absolutes"] or bool(_ALL_OF_IT.search(sentence))
    admission = (
        (has["admissions"] and (has["authorities"] or has["at_last"]))
        or (has["secrecy"] and (has["authorities"] or has["confirmations"]))
        # "Scientists have finally confirmed": a confirmation long withheld.
        or (has["at_last"] and has["authorities"] and has["confirmations"])
    )
    present: dict[Form, bool] = {
        "superlative": has["superlatives"],
        "causal": has["causal"] or has["circumstances"],
        "absolute": absolute,
        "admission": admission,
        "authority_claim": not admission and has["authorities"] and has["confirmations"],
        "health": has["health_topics"],
        # A "miracle" mop is an advert; a miracle for the body is a cure.
        "cure": has["cures"] and has["health_topics"],
        "drastic_measure": has["drastic_measures"],
        # "Caused by a secret experiment", "installed secretly near every school": a hidden
        # cause, or a sweeping or harmful act done out of sight, is a plot too.
        "plot": has["plot"]
        or (has["secrecy"] and has["causal"])
        or (
            has["covertly"]
            and (absolute or has["causal"] or has["drastic_measures"])
            and not _NEVER_ASKS_IN_PRIVATE.search(fold(sentence))
        ),
        "group": has["groups"],
        # "Causes 100% of", "kills all": a mechanism stated without exception.
        "absolute_causal": absolute and has["causal"],
        "harm": has["harm"],
        # A quoted accusation or inference is the speaker's slogan, not the report's.
        "accusation": (has["accusations"] and _has_outside(starts, "accusations", own))
        or bool(_PAID_TO.search(own)),
        "inference": has["inference"] and _has_outside(starts, "inference", own),
    }
    return [form for form, there in present.items() if there]


# "Is it true they're scrapping …?", "E adevărat că de la anul taie …?": a question that
# passes a rumour on (near the sentence's start, ending in a question mark).
_RUMOUR_QUESTION = re.compile(
    r"^\W*+(?:\w++\W++){0,3}?(?:is it true|(?:e|este|i|mai e) adevarat)\b[^?.!]{10,300}\?"
)


# What a rumour asked about puts at stake: something cut, banned, fined, lost or closed for
# good ("Is it true they're scrapping …?"), not a school closing early on Friday.
_STAKE = re.compile(
    r"\b(?:scrap\w*|cut\w*|ban(?:s|ned|ning)?|fine[sd]?|fining|tax(?:ed|es)?|los(?:e|es|ing)"
    r"|cancel\w*|abolish\w*|confiscat\w*|seiz\w*|ration\w*|everyone|all|any"
    r"|taie|tai|taiat\w*|interzi\w*|amend\w*|pierd\w*|anul\w*|desfiint\w*|confisc\w*"
    r"|scumpe?\w*|dubl\w*|tuturor|toti|toate|nimeni)\b"
)
# A source named in the sentence: "by Eurostat", "according to", "potrivit Institutului".
_NAMED_SOURCE = re.compile(
    r"\b(?:according to|potrivit|conform|by (?:the )?[A-Z]\w+|reported|published by"
    r"|realizat de|realizat pentru [A-Z]|de (?:către )?[A-Z]\w+ a|a anunțat|au anunțat)"
)
# The claimant's own want of support, which a named source does not undo.
_WANT = re.compile(
    r"\b(?:no evidence|did not|didn't|without|offered no|gave no|provided no|look it up"
    r"|nothing official|nu a|n-a|fara|nicio dovada)\b"
)


# An authority's rebuttal in forms the lexicon's terms cannot hold (round 12), each narrow,
# because conspiracy posts use the same words against the authority ("they called it 'fake
# news', but …", "doctors have warned us for years about …"): a verdict in quoted words that
# end the clause ("the council called the leaflet 'completely false'", "ASF a calificat
# mesajul drept «fals»"); a warning to a third party about a message or a scam ("Action
# Fraud has warned people selling online about buyers who …"); a denial of plans in an
# authority's reported words ("the council said it had no plans to …", "ministerul a
# transmis că nu există niciun proiect"). None counts beside a contrast in its sentence
# ("but", "yet", "for years", "dar") or before a rejection opening the next (`rejected`).
_REBUTTAL_IN_QUOTES = re.compile(
    r"(?<!so-)\b(?:called|calls|described|dismissed|labell?ed|branded|termed"
    r"|a (?:calificat|numit|catalogat|descris)|au (?:calificat|numit|catalogat|descris))\b"
    r"[^.!?:\n]{0,60}?(?<!\w)[„“\"'‘«]\s*+"
    r"(?:(?:completely|totally|entirely|utterly|simply|complet|total)\s++)?"
    r"(?:false|fake|untrue|fabricated|baseless|misleading|nonsense|inaccurate|a hoax|a lie"
    r"|fals[ae]?|neadevarat\w*+|o minciuna|o farsa|fabricat\w*+|inventat\w*+)"
    r"\s*+[”\"'’»]\s*+(?:$|[.,;!?—–-]|and\b|si\b)"
)
_WARNED_ABOUT = re.compile(
    r"(?<!\bi )(?<!\bwe )(?<!\byou )(?<!\bus )(?<!\ball )\b(?:has|have|had) warned\s++"
    r"(?:(?!(?:us|you|me|for|repeatedly)\b)[\w-]++\s++){1,6}?about\s++(?:\w++\s++){0,2}?"
    r"(?:messages?|texts?|calls?|e-?mails?|ads?|adverts?|adverti[sz]ements?|posts?|scams?"
    r"|fraud\w*+|fake|bogus|buyers?|sellers?|callers?)\b"
)
_DENIED_PLAN = re.compile(
    r"\b(?:said|says|stated|confirmed|told|a (?:transmis|precizat|anuntat|declarat)"
    r"|au (?:transmis|precizat|anuntat|declarat))\b[^.!?]{0,40}?"
    r"(?:no plans to|no plan to|nu exista (?:niciun proiect|nicio intentie|nicio propunere))"
)
# A quote in any of the marks a writer uses, each closed by its own mark (its words taken
# whole: one candidate end per opening mark, so a text of stray quote marks costs no
# backtracking).
_QUOTE = (
    r"(?:\"[^\"\n]{3,200}+\"|“[^”\n]{3,200}+”|„[^”“\n]{3,200}+[”“]|«[^»\n]{3,200}+»"
    r"|‘[^’\n]{3,200}+’|'[^'\n]{3,200}+')"
)
# Between the verb and the quote: no sentence end, no quote mark (the first mark opens it).
_BEFORE_QUOTE = r"[^.!?\n\"“„«‘']{0,120}+"
# A claim quoted and denied in one sentence, credited to the posts (or people) that spread
# it (round 21): "No, the blackout was not 'a planned test of grid shutdowns', as posts
# shared on X claim", "Dârele albe nu sunt «substanțe chimice …», cum susțin mai multe
# postări virale". The denial stands before the quote and the credit right after it, and the
# credit names spreaders, not the officials a conspiracy post contradicts the same way ("it
# was NOT 'a heart attack', as the media claim"); the writer's contrast (`_CONTRAST`) still
# undoes it.
_DENIED_AS_CLAIMED = re.compile(
    r"\b(?:is|are|was|were|does|do|did|has|have|had|isn't|aren't|wasn't|weren't|doesn't"
    r"|didn't|hasn't|haven't)\s++(?P<en>"
    + _BEFORE_QUOTE
    + r")"
    + _QUOTE
    + r"[^.!?\n]{0,24}?,?\s*+as\s++(?P<en_credit>(?:[\w'-]++\s++){0,8}?)"
    r"(?:claim|claims|claimed|allege|alleges|alleged|suggest|suggests|suggested|insist|insists"
    r"|say|says|said|would have it|have it)\b"
    r"|\bnu\s++(?:sunt|este|e|era|erau|a\s++fost|au\s++fost|a|au|s-a|s-au)\s++"
    + _BEFORE_QUOTE
    + _QUOTE
    + r"[^.!?\n]{0,24}?,?\s*+"
    r"(?:asa\s++)?cum\s++(?P<ro_credit>(?:[\w-]++\s++){0,4}?"
    r"(?:sustin\w*|pretind\w*|pretinde\w*|afirma\w*|scri\w*|spun\w*|zic\w*|sugereaza\w*)"
    r"(?:\s++[\w-]++){0,5})"
)
_NEGATED = re.compile(r"(?:\bnot\b|n't\b)")
# Who spreads a claim, named in the credit of a denied quote (folded): the medium or its
# users, not a bare "some" or "many" ("as some doctors claim" credits no spreader).
_SPREADERS = re.compile(
    r"\b(?:posts?|messages?|users?|videos?|clips?|accounts?|rumou?rs?|viral|social|online"
    r"|facebook|tiktok|telegram|whatsapp|x|twitter|youtube|influencers?|theorists?|chain"
    r"|forwards?|memes?|websites?|sites?|pages?|channels?|groups?"
    r"|postar\w*|postari\w*|mesaj\w*|utilizator\w*|clipur\w*|videoclip\w*|contur\w*"
    r"|zvonur\w*|virale?|retele\w*|sociale|site-uri\w*|pagin\w*"
    r"|canal\w*|grupur\w*|influenceri\w*|teoreticien\w*|lantur\w*)\b"
)
_CONTRAST = re.compile(
    r"\b(?:for (?:\w+ )?(?:years|decades|months)|de ani|ani de zile|but|yet|however|though"
    r"|until now|don't believe|do not believe|lies|dar|insa|totusi|nu-i credeti|minciun\w*)\b"
)
_REJECTION = re.compile(
    r"^\W*(?:now|but|yet|lies|liars|nonsense|don'?t believe|do not believe|don'?t be fooled"
    r"|wake up|acum|dar|minciun\w*|nu-i credeti|nu va lasati)\b"
)


# A picture passed around that the sentence itself calls fake ("That photo going round of a
# shark on the motorway is fake", "Clipul care circulă cu premierul e trucat"): the writer's
# debunk of what circulates, not a plot of their own ("the official photos are fake" names
# nothing passed around). Folded, quotations blanked.
_FAKE_PICTURE = re.compile(
    r"\b(?:photos?|pictures?|images?|clips?|videos?|screenshots?|poz\w{0,4}|fotografi\w{0,4}"
    r"|imagin\w{0,4}|clip\w{0,6}|videoclip\w{0,4}|captur\w{0,4})\b[^.!?]{0,120}?"
    r"\b(?:going round|going around|doing the rounds|circulating|circula|distribuit\w{0,3}"
    r"|viral\w{0,3})\b[^.!?]{0,160}?\b(?:is|are|was|were|e|este|sunt|a fost)\s(?:a |an )?"
    r"(?:fake|doctored|edited|photoshopped|ai-generated|made with ai|false?|fals\w{0,2}"
    r"|trucat\w{0,2}|editat\w{0,2}|generat\w{0,2} (?:cu|de) ai)\b"
)


# A post or a message the sentence itself calls a hoax or a fake ("That post telling you to
# switch your phone off tonight is a hoax", "Mesajul cu amenda de 5.000 de lei e o farsă"):
# the writer's debunk of what circulates, named in the same sentence (`calls_a_message_a_hoax`).
# Folded, quotations blanked. Not "It's a hoax!" alone, which a post throws at what a source
# says.
_HOAX_MESSAGE = re.compile(
    r"\b(?:posts?|messages?|chain (?:letter|message)s?|warnings?|rumou?rs?|mesaj\w{0,4}"
    r"|postar\w{0,4}|zvon\w{0,4}|avertisment\w{0,4})\b(?:[^.!?]|\.(?=\d)){0,160}?"
    r"\b(?:is|was|are|were|e|este|a fost)\s(?:a |an |o )?(?:hoax|fake|farsa|fals\w{0,2})\b"
    # the clause ends there: not "The official message is fake: the real toll is …"
    r"(?=\s*+(?:[.!?;,)]|$|(?:and|si|it|that|which|care)\b))"
)


def authority_rebuttal(sentence: str) -> bool:
    """Whether the sentence rebuts what it reports in one of the forms above (its own words,
    with no contrast in them). Pure."""
    whole = fold(sentence)
    own = _QUOTED.sub(lambda m: " " * len(m[0]), whole)
    rebuts = (
        _REBUTTAL_IN_QUOTES.search(whole)
        or _WARNED_ABOUT.search(own)
        or _DENIED_PLAN.search(own)
        or _denied_as_claimed(whole)
        or _FAKE_PICTURE.search(own)
    )
    return bool(rebuts) and not _CONTRAST.search(own)


def _denied_as_claimed(folded: str) -> bool:
    """A quoted claim denied and credited to whoever spreads it (`_DENIED_AS_CLAIMED`). Pure."""
    for found in _DENIED_AS_CLAIMED.finditer(folded):
        if found["ro_credit"] is not None:
            credit = found["ro_credit"]
        elif _NEGATED.search(found[0][: found.start("en") - found.start()] + found["en"]):
            credit = found["en_credit"]
        else:
            continue  # "the vaccine is 'safe', as experts say": nothing denied
        if _SPREADERS.search(credit):
            return True
    return False


def rejected(rebuttal: str, following: str) -> bool:
    """Whether the next sentence throws a rebuttal of the forms above back ("The government
    says it has no plans to ban cash. Don't believe them: …", "… Minciuni!"). Pure."""
    own = _QUOTED.sub(lambda m: " " * len(m[0]), fold(rebuttal))
    lexical = _patterns().register["debunked"].search(own)
    return not lexical and bool(_REJECTION.search(fold(following)))


# A be-verb just before a research word makes it the passive of a claim ("are monitored").
_BE_BEFORE = re.compile(
    r"\b(?:is|are|was|were|be|being|been|get|gets|got|e|este|sunt|fi|fost)\s++$"
)
# A negation a few words before a register's words ("not immediately clear", "won't change
# immediately", "nu … imediat"). Not a negated wait: "do not hesitate, call immediately",
# "nu ezitați, sunați imediat".
_NEGATED_BEFORE = re.compile(
    r"(?:\bnot|n't|\bnever|\bnu|\bn-a|\bn-au|\bn-o|\bnici)\b"
    r"(?!\s++(?:hesitate|wait|delay|ezit|stati\b|sta\b|astept|aman))(?:\s++\S++){0,3}\s++$"
)


# How much of the text before a match `_every_match` shows its test: a few words, so a long
# sentence of many matches costs no more per match.
_BEFORE_REACH = 40


def _every_match(folded: str, name: str, holds: Callable[[re.Match[str], str], bool]) -> bool:
    """Whether `holds(match, the _BEFORE_REACH characters before it)` for every match of
    register `name`. Pure."""
    return all(
        holds(m, folded[max(0, m.start() - _BEFORE_REACH) : m.start()])
        for m in _patterns().register[name].finditer(folded)
    )


def _passive(match: re.Match[str], before: str) -> bool:
    """A participle after a be-verb ("are monitored"; not "are investigating")."""
    return not match[0].endswith("ing") and bool(_BE_BEFORE.search(before[-12:]))


def _negated(match: re.Match[str], before: str) -> bool:
    """After a negation within three words."""
    return bool(_NEGATED_BEFORE.search(before))


def _within(folded: str, inner: str, outer: str) -> bool:
    """Whether every match of register `inner` lies inside a match of register `outer`."""
    register = _patterns().register
    spans = [m.span() for m in register[outer].finditer(folded)]
    return all(
        any(a <= m.start() and m.end() <= b for a, b in spans)
        for m in register[inner].finditer(folded)
    )


@_SentenceMemo
def sentence_register(sentence: str) -> list[Register]:
    """How the sentence itself puts what it says (viral, conspiratorial, sourced, hedged,
    emotive...), quotations left out."""
    # Quotations blanked once: a quoted slogan's words, "!" and capitals are not the report's.
    unquoted = _QUOTED.sub(lambda m: " " * len(m[0]), sentence)
    folded = fold(unquoted)  # one character out per character in: the same blanks
    for no_source in _NO_SOURCES:
        folded = no_source.sub(lambda m: " " * len(m[0]), folded)
    starts = _patterns().index.starts(folded)
    register = _patterns().register
    possible = starts.possible(LEXICAL_REGISTERS)
    found = [
        name
        for name in LEXICAL_REGISTERS
        if name in possible and starts.search(name, register[name])
    ]
    if "urgency" in found and _every_match(folded, "urgency", _negated):
        # "rates will not change immediately", "nu se vor modifica imediat": news, no hurry
        found.remove("urgency")
    if "studied" in found and _every_match(folded, "studied", _passive):
        # "WhatsApp and Facebook are monitored": what the claim says is done, not research
        found.remove("studied")
    if "studied" in found and "viral_sources" in found:
        # "Reporters analysed thousands of posts": the posts are what was studied, not
        # where the sentence got its claim.
        found.remove("viral_sources")
    if "debunked" in found and "unsourced" in found and _within(folded, "debunked", "unsourced"):
        # "He offered no evidence for the claim": the claimant's want of support, whose
        # "no evidence" is no rebuttal.
        found.remove("debunked")
    if {"viral_sources", "advice"} <= set(found) and _within(folded, "viral_sources", "advice"):
        # "Never share this code with anyone": a bank's warning, not a message passed on.
        found.remove("viral_sources")
    if "viral_sources" not in found and _RUMOUR_QUESTION.search(folded) and _STAKE.search(folded):
        found.append("viral_sources")  # a rumour of a loss asked about is one passed on
    if "unsourced" in found and _NAMED_SOURCE.search(sentence) and not _WANT.search(folded):
        # "A recent survey by Eurostat found …", "… potrivit Institutului": named after all
        found.remove("unsourced")
    if "debunked" not in found and authority_rebuttal(sentence):
        found.append("debunked")
    # Not a quoted slogan's "!" or capitals: "au scandat «Moldova nu e de vânzare!»".
    if "emotive" not in found and ("!" in unquoted or _SHOUTING.search(unquoted)):
        found.append("emotive")
    if "referral" in found and not _COURSE.search(folded):
        # "ask a pharmacist if you want to buy it": a referral names how the illness goes
        found.remove("referral")
    return found


# What a referral to a doctor is conditioned on: symptoms and how they go ("if it lasts
# more than a week", "dacă febra durează"), folded.
_COURSE = re.compile(
    r"\b(?:persist\w*|worse\w*|last\w*|longer|fever\w*|pain\w*|breath\w*|symptom\w*"
    r"|bleed\w*|rash\w*|vomit\w*|unwell|dizz\w*|durea\w*|persista|se agraveaza|agraveaz\w*"
    r"|febr\w*|durer\w*|respir\w*|simptom\w*|sanger\w*|eruptii|varsa\w*|ameteal\w*"
    r"|nu trece|nu-i trece|nu mai poate)\b"
)


def text_registers(
    sentences: list[str], own: list[list[Register]] | None = None
) -> list[tuple[Register, ...]]:
    """Each sentence's register with what it inherits: the context registers of its
    neighbours, satire from anywhere; a source it discredits itself no longer counts, and a
    rebuttal counts only beside a claim reported as someone else's. `own` is each
    sentence's `sentence_register`, where the caller has it already."""
    if own is None:
        own = [sentence_register(s) for s in sentences]
    own = [
        [r for r in register if r != "debunked"]
        if "debunked" in register and i + 1 < len(sentences) and rejected(s, sentences[i + 1])
        else register
        for i, (s, register) in enumerate(zip(sentences, own, strict=True))
    ]
    outright = [rebuts_outright(s) or calls_a_message_a_hoax(s) for s in sentences]
    answering = answered_at_once(sentences, own)
    answered = _answered_by_a_source(sentences, own)
    whole = fold(" ".join(sentences))
    if satire_disowned(whole):  # "satire obv but: …" marks nothing as a joke
        own = [[r for r in register if r != "satire"] for register in own]
    satire = any("satire" in r for r in own) or credited_to_satire(whole)
    found = []
    for i, register in enumerate(own):
        heard = set(register)
        around = slice(max(i - CONTEXT_SENTENCES, 0), i + CONTEXT_SENTENCES + 1)
        for near in own[around]:
            heard |= CONTEXT_REGISTERS & set(near)
        if satire:
            heard.add("satire")
        if set(register) & set(_DISCREDITING):
            heard.discard("sourced")
        if not heard & set(_REPORTED):
            heard.discard("debunked")
        if outright[i] or i in answering:  # outright in its own sentence only: "taken out
            heard.add("debunked")  # of context" is said both ways
        if i in answered:
            heard.add("debunked")
        if heard & _PUSHED:  # a referral closes a tip, not a rumour or a plot pressed on
            heard.discard("referral")
        found.append(tuple(r for r in REGISTERS if r in heard))
    return found


def _answered_by_a_source(sentences: list[str], own: list[list[Register]]) -> set[int]:
    """The sentences of a claim reported as someone else's (passed around, "posts claim")
    that a source answers with a denial in one of the next two ("The NHS says the vaccine
    contains no live virus", "Meteorologii ANM explică … nu"): the report and its answer,
    which a reader takes as the rebuttal it is. Pure."""
    found: set[int] = set()
    for k, register in enumerate(own):
        if "sourced" not in register or set(register) & set(_DISCREDITING):
            continue
        own_words = _QUOTED.sub(lambda m: " " * len(m[0]), fold(sentences[k]))
        if not (_SPEAKS.search(own_words) and _DENIAL.search(own_words)):
            continue
        if _NOT_YET.search(own_words):  # "had not responded", "nu au confirmat": no answer
            continue
        following = fold(sentences[k + 1]) if k + 1 < len(sentences) else ""
        if _LIES.search(own_words) or _REJECTION.search(following):  # "… but they lie"
            continue
        reported = [j for j in range(max(k - 2, 0), k) if set(own[j]) & set(_REPORTED)]
        if reported:
            found.update(range(reported[0], k + 1))
    return found


# A source speaking (not "the official announcement" a rumour tells the reader not to await).
_SPEAKS = re.compile(
    r"(?i)\b(?:says|said|explains|explained|stated|states|denied|denies|clarified|responded"
    r"|pointed out|points out|noted|a subliniat|au subliniat"
    r"|spune|spun|a spus|au spus|a declarat|au declarat|explica|a explicat|au explicat"
    r"|precizeaza|a precizat|au precizat|a transmis|au transmis|neaga|a negat|au negat)\b"
)
# No answer yet: a source that has not confirmed, responded or commented.
_NOT_YET = re.compile(
    r"(?i)\b(?:not|nu|n-a|n-au)\s+(?:yet\s+|inca\s+|au\s+|a\s+|been\s+able\s+to\s+)?"
    r"(?:confirm|respond|comment|announc|react|replied|answer|raspuns|comentat|anuntat|reactionat)"
)
# An answer the writer throws back: "the government says there was none, but they lie".
_LIES = re.compile(r"(?i)\b(?:lie|lies|lying|lied|liars|mint|minte|mintit|mincin\w*)\b")
# A denial in a source's answer.
_DENIAL = re.compile(
    r"(?i)\b(?:no|not|never|cannot|can't|isn't|aren't|doesn't|don't|didn't|wasn't|weren't"
    r"|won't|useless|unfounded|baseless|nu|niciun|nicio|nici|n-a|n-au|nefondat\w*)\b"
)


def rebuts_outright(sentence: str) -> bool:
    """A rebuttal that names what it answers, the claim in the same sentence: "the clip
    was cut mid-sentence", "scos din context"."""
    return bool(_patterns().register["debunked_outright"].search(fold(sentence)))


def calls_a_message_a_hoax(sentence: str) -> bool:
    """Whether the sentence calls a post or a message a hoax or a fake (`_HOAX_MESSAGE`),
    with no plot of its own in it. Pure."""
    own = _QUOTED.sub(lambda m: " " * len(m[0]), fold(sentence))
    found = _HOAX_MESSAGE.search(own)
    return bool(
        found
        and not _SAYS.search(own[: found.end()])  # "A post says the warning is fake"
        and not _patterns().register["conspiracy"].search(own)
    )


# Someone's words reported before the "is a hoax": the hoax is theirs to call.
_SAYS = re.compile(r"\b(?:says?|said|claim\w*|told|tells|spune\w*|zice|sustine|afirma)\b")


def answered_at_once(sentences: Sequence[str], own: Sequence[Sequence[str]]) -> set[int]:
    """The sentences of a debunk that opens by answering the claim ("No, your earbuds aren't
    giving you cancer. … Large studies haven't found a rise in tumours."): a sentence
    opening "No," with a denial (`_NO_OPENING`) and the two after it, when one of the three
    denies on evidence or a source's word (`_EVIDENCE` and `_DENIAL` in one sentence) and
    nothing in the text presses or plots (a post opens "No, the vaccine isn't safe" too,
    then says to share; "Experts know it was filmed in a studio" denies nothing). Pure."""
    if any(set(r) & _PRESSING for r in own):
        return set()
    found: set[int] = set()
    for i, sentence in enumerate(sentences):
        folded = fold(sentence)
        if not _NO_OPENING.search(folded) or _LIES.search(folded):
            continue
        window = range(i, min(i + CONTEXT_SENTENCES + 1, len(sentences)))
        folded_window = [fold(sentences[j]) for j in window]
        if any(_EVIDENCE.search(f) and _DENIAL.search(f) for f in folded_window):
            found.update(window)
    return found


# Registers of a text that presses or plots: a "No," in it is no debunk.
_PRESSING = frozenset({"conspiracy", "urgency", "emotive", "revelation"})
# Where a debunk's answer comes from: studies, data, evidence, experts, a named body's word.
_EVIDENCE = re.compile(
    r"\b(?:stud(?:y|ies)|research\w*|scientists?|doctors?|experts?|data|evidence|measure\w*"
    r"|according to|says|said|explains?|confirmed|stud(?:iu|ii|iile|iul)|cercet\w*|medic\w*"
    r"|speciali\w*|expert\w*|datele|dovez\w*|dovad\w*|potrivit|spune|explica|a precizat"
    r"|au precizat|a confirmat|masur\w*)\b"
)


# A sentence that opens with "No," and denies what follows: the fact-check's headline form
# (round 31; 22 of the 23 sentences of dev that open so are debunks, the other an opinion's
# "Nu, nu suntem leneși"), folded. Not "No, no, …", which protests, nor "No, this is not a
# joke: …" or "No, we won't stay quiet", which speak of the text or its writer.
_NO_OPENING = re.compile(
    r"^\W*(?:no|nope|nu),\s++(?!no\b|nu\b|(?:this|it|that|there)(?:'s\b|\s++(?:is|was)\b)"
    r"|(?:i|we|you|they|he|she|asta|aceasta|eu|noi|voi|ei)\b)[^.!?]{0,100}?"
    r"\b(?:isn't|aren't|doesn't|don't|won't|can't|wasn't|weren't|didn't|is not|are not"
    r"|does not|do not|did not|will not"
    r"|was not|were not|has not|have not|nu|n-a|n-au)\b"
)


def names(sentence: str) -> list[str]:
    """Capitalised words that are not the first word of the sentence or of a quote."""
    tokens = sentence.split()
    found = []
    for previous, token in itertools.pairwise(tokens):
        word = token.strip("\"'„“”«»()[],;")
        if (
            word[:1].isupper()
            and not previous.endswith((".", "!", "?", ":"))
            and token[:1].isalpha()
        ):
            found.append(word)
    return found


def checkworthiness(forms: list[Form]) -> float:
    """0..1: the sum of the forms' weights (`checkworthiness.weights`), at most 1."""
    weights = claims_spec().checkworthiness.weights
    return round(min(1.0, sum(weights[f] for f in forms)), 2)


def is_claim(forms: list[Form]) -> bool:
    """A sentence is a claim when it is check-worthy enough and asserts a factual form."""
    rule = claims_spec().checkworthiness
    return checkworthiness(forms) >= rule.minimum and bool(set(rule.factual) & set(forms))


# Registers that pass a rumour on or press it on the reader.
SPREAD_REGISTERS: frozenset[Register] = frozenset({"viral_sources", "urgency"})
_CONCRETE: frozenset[Form] = frozenset({"named_entity", "date", "number"})


# Registers beside which a referral to a doctor answers nothing.
_PUSHED: frozenset[Register] = frozenset({"conspiracy", "viral_sources", "urgency"})


# What answers a claim reported as someone's word: a rebuttal or satire anywhere near it (they
# are context registers), a study or advice in its own sentence.
_ANSWERED: frozenset[Register] = frozenset({"studied", "debunked", "satire", "advice", "referral"})


def left_unsupported(own: Iterable[str], heard: Iterable[str]) -> bool:
    """Whether a sentence reports a claim as someone's word and says, itself, that it came
    with nothing to support it ("the councillor claimed that most fly-tipping comes from
    the new site, but offered no figures"), with nothing around it that answers it. Not a
    third party's silence in another sentence ("The company did not respond"). Pure."""
    return {"reported_claim", "unsourced"} <= set(own) and not _ANSWERED & set(heard)


# A sentence that gives someone's word: a speaking verb, in either language.
_REPORTS_WORD = re.compile(
    r"\b(?:claim(?:s|ed)?|said|says|told|insist(?:s|ed)?|argu(?:es|ed)|declared|alleg(?:es|ed)"
    r"|a (?:declarat|spus|afirmat|sustinut|pretins|anuntat)|au (?:declarat|spus|afirmat|sustinut)"
    r"|sustine|afirma|pretinde)\b"
)
# How the next sentence names the same speaker again: a pronoun, else a word of the first.
_SPEAKER_AGAIN = frozenset({"he", "she", "they", "el", "ea", "ei", "dansul", "dansa", "acesta"})
# ... or, when it says the information has no known source ("The diplomat gave no details
# about the source of this information"), the role a speaker of the news is called by the
# second time: a role alone is as often a third party ("The spokesman did not say where
# they would fly to").
_SPEAKER_ROLE = frozenset(
    {
        "diplomat", "diplomatul", "ambassador", "ambasadorul", "envoy", "emisarul", "official",
        "oficialul", "politician", "politicianul", "minister", "ministrul", "senator",
        "senatorul", "deputatul", "mp", "spokesman", "spokeswoman", "spokesperson",
        "purtatorul", "blogger", "bloggerul", "influencer", "influencerul", "candidate",
        "candidatul", "lawmaker", "parlamentarul", "leader", "liderul", "premierul",
        "presedintele",
    }
)  # fmt: skip
_ABOUT_ITS_SOURCE = re.compile(
    r"\bsources? of (?:this|the|these|that) (?:information|claims?|allegations?|reports?)\b"
    r"|\bsursa (?:acestor |acestei |acelei )?(?:informatii\w*|afirmati\w*|acuzati\w*)"
)
_STEM = 6


# The next sentence names missing evidence: figures, data, a source, where it came from.
_NO_EVIDENCE = re.compile(
    r"\b(?:no|not|n't|never|nu|n-a|fara|without|refuz\w*+)\W++(?:\w++\W++){0,5}?"
    r"(?:figures?|data|evidence|sources?|proof|where|numbers|studies|study"
    r"|cifr\w*|date(?:le)?|dovez\w*|dovada|surs\w*|de unde|studii|studiu)\b"
)


def unsupported_next(sentence: str, following: str, following_own: Iterable[str]) -> bool:
    """Whether `sentence` gives someone's word and the next sentence says that the same
    speaker gave nothing to support it ("The councillor claimed the scheme doubled response
    times. He did not say where the figure came from."; "Un consilier a declarat că … .
    Consilierul nu a prezentat date."). The speaker is named again by a pronoun or by a word
    of the first sentence opening the second; a third party's silence in the second ("The
    trust had not responded") is not the speaker's. Pure."""
    if "unsourced" not in following_own or not _REPORTS_WORD.search(fold(sentence)):
        return False
    if not _NO_EVIDENCE.search(fold(following)):  # "He did not present the line-up"
        return False
    if "debunked" in following_own:  # "… and inspectors found no evidence": answered
        return False
    opening = re.findall(r"[^\W\d_]+", fold(following))[:2]
    if opening[:1] and opening[0] in _SPEAKER_AGAIN:
        return True
    if any(w in _SPEAKER_ROLE for w in opening) and names_no_source(following):
        return True
    stems = {w[:_STEM] for w in re.findall(r"[^\W\d_]{5,}", fold(sentence))}
    return any(len(w) >= 5 and w[:_STEM] in stems for w in opening)


def names_no_source(sentence: str) -> bool:
    """Whether the sentence is about the source of the information itself ("no details about
    the source of this information", "despre sursa acestor informații"). Pure."""
    return bool(_ABOUT_ITS_SOURCE.search(fold(sentence)))


def rumoured(forms: list[Form], register: tuple[str, ...]) -> bool:
    """Whether a sentence that is no claim by its forms tells something concrete as a
    rumour: a name, date or number said to be hidden (the conspiracy register) and passed
    around or pressed on the reader too ("Ce ne-au ascuns: lacul X a fost golit în 2019 …
    Distribuiți!"), and framed by nothing that sources, hedges, rebuts or mocks it. Done
    "in secret" alone is gossip as often ("s-au căsătorit în secret … dați mai departe").
    Pure."""
    heard = set(register)
    return (
        bool(_CONCRETE & set(forms))
        and "conspiracy" in heard
        and bool(SPREAD_REGISTERS & heard)
        and not ATTRIBUTING & heard
    )


def unverified_risk(forms: tuple[str, ...], register: tuple[str, ...]) -> float:
    """Risk 0-100 of a claim nobody could verify: its forms' and register's weights summed,
    clamped to 0..1, with a floor (any unchecked claim is a little risky) and a ceiling."""
    rule = claims_spec().risk
    return weighed_risk((*forms, *register), rule.weights, rule)  # type: ignore[arg-type]


def weighed_risk(features: Iterable[str], weights: Mapping[str, float], rule: RiskRule) -> float:
    """`unverified_risk` with the given weights (scripts/study_claim_weights.py tries
    others): summed, clamped, floored at `rule.unverified_floor`, capped at
    `rule.unverified_max`, rounded to a tenth. Pure."""
    total = sum(weights.get(f, 0.0) for f in features)
    risk = 100.0 * min(max(total, 0.0), 1.0)
    return round(min(rule.unverified_max, max(rule.unverified_floor, risk)), 1)
