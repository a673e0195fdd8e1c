"""The shape of `data/techniques.yaml` and its compiled form.

The file is validated by these models when it is loaded, so a typo in a field name or a
cue naming an unknown word set stops a process at start-up with the field in the message.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from workers.analysis.datafiles import validate
from workers.analysis.lemmas import (
    LANGUAGES,
    MAX_WORD,
    MEMO_LIMIT,
    NUMBER,
    Language,
    WordKeys,
    folded_inflections,
)
from workers.analysis.term_index import TermIndex
from workers.analysis.text import fold

Weight = float
# Words of a cue further apart than this are not one phrase: bounds the work per word.
MAX_WINDOW = 12


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Label(_Strict):
    """A technique's human name in each language."""

    en: str
    ro: str


class Cue(_Strict):
    """Words that together are evidence: one of `lemmas`, and one word of each `near` group
    within `within` words of it in the same sentence (in that order when `ordered`).

    Entries are lemmas; `@name` stands for the word set `name`, `#number` for any number, and
    a trailing `*` matches any ending ("parazit*")."""

    lemmas: list[str] = Field(min_length=1)
    near: list[list[str]] = Field(default_factory=list)
    within: int = Field(default=6, ge=1, le=MAX_WINDOW)
    ordered: bool = False
    weight: Weight | None = Field(default=None, ge=0, le=1)
    # Overrides the family's `negatable` for a cue that holds its own negation
    # ("nothing can protect you", "nimic nu vă mai poate proteja").
    negatable: bool | None = None
    # The only words allowed between an ordered cue's last two words ("are [a] plague", not
    # "are reporting on the plague"); None allows any.
    last_gap: list[str] | None = None
    # Words that, up to NOT_AFTER_REACH words before the cue's first word in its sentence,
    # make it something else: "from 6pm today until 6am tomorrow" is a window, not a deadline.
    not_after: list[str] | None = None
    # Words that, right after the cue's first word, make it something else: "fie că …, fie
    # că …" is "whether … or …", no dilemma (round 32).
    not_before: list[str] | None = None
    # Not where its verb is forbidden or told of as done ("never enter your PIN", "if you've
    # entered your card details, call your bank": technique_context.advises_against).
    not_in_advice: bool = False


class Pattern(_Strict):
    """A regular expression on the folded text (or the normalised text when case-sensitive)."""

    regex: str
    weight: Weight | None = Field(default=None, ge=0, le=1)
    case_sensitive: bool = False

    @field_validator("regex")
    @classmethod
    def _compiles(cls, regex: str) -> str:
        try:
            re.compile(regex)
        except re.error as exc:
            raise ValueError(f"not a regular expression: {exc}") from exc
        return regex


class Technique(_Strict):
    """One family of techniques: what it is, its weight, and its evidence in each language."""

    about: str = Field(min_length=1)
    weight: Weight = Field(ge=0, le=1)
    label: Label | None = None
    # Whether "not"/"nu" just before a cue cancels it ("they are not parasites").
    negatable: bool = False
    terms: dict[Language, list[str]] = Field(default_factory=dict)
    cues: dict[Language, list[Cue]] = Field(default_factory=dict)
    patterns: list[Pattern] = Field(default_factory=list)

    @field_validator("terms")
    @classmethod
    def _wildcards_end_words(cls, terms: dict[Language, list[str]]) -> dict[Language, list[str]]:
        for language_terms in terms.values():
            checked_terms(language_terms)
        return terms


class Context(_Strict):
    """Words that change what a cue means: who says it, whether it is denied, satire."""

    attribution: dict[Language, list[str]] = Field(default_factory=dict)
    anonymous: dict[Language, list[str]] = Field(default_factory=dict)
    self_reference: dict[Language, list[str]] = Field(default_factory=dict)
    messages: dict[Language, list[str]] = Field(default_factory=dict)
    restrictive: dict[Language, list[str]] = Field(default_factory=dict)
    negation: dict[Language, list[str]] = Field(default_factory=dict)
    denial: dict[Language, list[str]] = Field(default_factory=dict)
    satire: dict[Language, list[str]] = Field(default_factory=dict)
    own_notice: dict[Language, list[str]] = Field(default_factory=dict)
    passed_on: dict[Language, list[str]] = Field(default_factory=dict)
    recognised: dict[Language, list[str]] = Field(default_factory=dict)


class TechniquesFile(_Strict):
    """The whole of `data/techniques.yaml`."""

    version: int = 2
    sets: dict[str, dict[Language, list[str]]] = Field(default_factory=dict)
    context: Context = Context()
    techniques: dict[str, Technique] = Field(min_length=1)

    @model_validator(mode="after")
    def _sets_exist(self) -> TechniquesFile:
        for name, technique in self.techniques.items():
            for language, cues in technique.cues.items():
                for cue in cues:
                    gap = cue.last_gap or []
                    for word in [*cue.lemmas, *(w for group in cue.near for w in group), *gap]:
                        if word.startswith("@") and language not in self.sets.get(word[1:], {}):
                            raise ValueError(f"{name}.cues.{language}: unknown word set {word}")
        return self


@dataclass(frozen=True)
class Slot:
    """Words one position of a cue accepts: exact lemma keys and word beginnings."""

    keys: frozenset[str]
    stems: tuple[str, ...]

    def accepts(self, keys: frozenset[str]) -> bool:
        if not self.keys.isdisjoint(keys):
            return True
        return bool(self.stems) and any(k.startswith(self.stems) for k in keys)


@dataclass(frozen=True)
class CompiledCue:
    technique: str
    weight: float
    first: Slot
    near: tuple[Slot, ...]
    within: int
    ordered: bool
    negatable: bool
    last_gap: Slot | None = None
    not_after: Slot | None = None
    not_before: Slot | None = None
    not_in_advice: bool = False


@dataclass(frozen=True)
class CueIndex:
    """A language's cues by the lemma keys (or word beginnings) of their first slot, so a
    word is checked against the few cues it can start rather than all of them."""

    by_key: Mapping[str, tuple[CompiledCue, ...]]
    by_stem: Mapping[str, tuple[CompiledCue, ...]]
    stems: tuple[str, ...]

    _memo: dict[frozenset[str], tuple[CompiledCue, ...]] = field(
        default_factory=dict, compare=False, repr=False
    )

    def starting_with(self, keys: frozenset[str]) -> tuple[CompiledCue, ...]:
        """The cues a word with these lemma keys can start, each once (remembered per set of
        keys of words up to MAX_WORD letters, up to MEMO_LIMIT of them: a word's keys are one
        object across texts)."""
        found = self._memo.get(keys)
        if found is None:
            found = self._starting_with(keys)
            if len(self._memo) < MEMO_LIMIT and all(len(k) <= MAX_WORD for k in keys):
                self._memo[keys] = found
        return found

    def _starting_with(self, keys: frozenset[str]) -> tuple[CompiledCue, ...]:
        found = [cue for k in keys for cue in self.by_key.get(k, ())]
        if self.stems and any(k.startswith(self.stems) for k in keys):
            found += [
                c
                for s, cs in self.by_stem.items()
                if any(k.startswith(s) for k in keys)
                for c in cs
            ]
        # A word with two keys of one slot ("are" → are, be) starts its cue once.
        return tuple({id(cue): cue for cue in found}.values())


def index_cues(cues: tuple[CompiledCue, ...]) -> CueIndex:
    by_key: dict[str, list[CompiledCue]] = defaultdict(list)
    by_stem: dict[str, list[CompiledCue]] = defaultdict(list)
    for cue in cues:
        for key in cue.first.keys:
            by_key[key].append(cue)
        for stem in cue.first.stems:
            by_stem[stem].append(cue)
    return CueIndex(
        {k: tuple(v) for k, v in by_key.items()},
        {k: tuple(v) for k, v in by_stem.items()},
        tuple(sorted(by_stem)),
    )


@dataclass(frozen=True)
class Rule:
    """One compiled regular expression of a technique."""

    technique: str
    weight: float
    pattern: re.Pattern[str]
    case_sensitive: bool = False
    # The technique's terms, when the pattern is their alternation (`terms_regex`): it is
    # tried only where the lexicon's `term_index` says a term can start.
    terms: tuple[str, ...] = ()


@dataclass(frozen=True)
class ContextWords:
    """Compiled context words: lemma slots per language, phrase regexes for both."""

    attribution: Mapping[Language, Slot]
    anonymous: Mapping[Language, Slot]
    self_reference: Mapping[Language, Slot]
    messages: Mapping[Language, Slot]
    restrictive: Mapping[Language, Slot]
    negation: Mapping[Language, Slot]
    denial: re.Pattern[str] | None
    satire: re.Pattern[str] | None
    own_notice: re.Pattern[str] | None = None
    passed_on: re.Pattern[str] | None = None
    recognised: re.Pattern[str] | None = None


@dataclass(frozen=True)
class Lexicon:
    """Compiled rules and cues, the human names ({en, ro}) and base weight of each technique."""

    rules: tuple[Rule, ...]
    cues: Mapping[Language, CueIndex]
    words: Mapping[Language, WordKeys]
    context: ContextWords
    labels: Mapping[str, Mapping[str, str]]
    weights: Mapping[str, float]
    # Where each technique's terms can start in a folded text (by technique).
    term_index: TermIndex

    def label(self, technique: str, language: str) -> str:
        return self.labels.get(technique, {}).get(language, technique.replace("_", " "))


# A `*` ends a word: the possessive wildcard takes the rest of the word, so a letter after
# it could never match ("cip*uri").
_WILDCARD_INSIDE = re.compile(r"\*\w")


def checked_terms(terms: list[str]) -> list[str]:
    """`terms` (a data file's), refused when one has a `*` before the end of its word."""
    wrong = [t for t in terms if _WILDCARD_INSIDE.search(t)]
    if wrong:
        raise ValueError(f"a * must end a word (it takes the rest of it): {', '.join(wrong)}")
    return terms


def term_pattern(term: str) -> str:
    """Regex source of one lexicon term, matched on folded text at word boundaries."""
    source = re.escape(fold(term.strip()))
    # Possessive and bounded: a wildcard takes the rest of its word and never gives it
    # back, and the words of a term are a few spaces apart at most.
    source = source.replace(r"\*", r"\w*+").replace(r"\ ", r"\s{1,8}+").replace("'", "['’]")
    return source


def terms_regex(terms: list[str]) -> re.Pattern[str] | None:
    """One alternation of `terms` on word boundaries, longest first (so the longer of two
    overlapping terms wins)."""
    if not terms:
        return None
    alternation = "|".join(sorted({term_pattern(t) for t in terms}, key=len, reverse=True))
    return re.compile(rf"(?<!\w)(?:{alternation})(?!\w)")


def compile_lexicon(spec: Mapping[str, Any], name: str = "techniques.yaml") -> Lexicon:
    """Validate the YAML structure of `data/techniques.yaml` and compile it."""
    return compile_file(validate(name, spec, TechniquesFile))


def compile_file(spec: TechniquesFile) -> Lexicon:
    """Compile a validated techniques file: regexes, indexed cues, folded inflections."""
    rules: list[Rule] = []
    cues: dict[Language, list[CompiledCue]] = defaultdict(list)
    for name, entry in spec.techniques.items():
        rules.extend(_rules(name, entry))
        for language, language_cues in entry.cues.items():
            for cue in language_cues:
                cues[language].append(_cue(name, entry, cue, spec.sets, language))
    context = _context(spec.context)
    lemmas = {
        lang: {k for c in cues[lang] for s in (c.first, *c.near) for k in s.keys}
        | context.attribution[lang].keys
        | context.anonymous[lang].keys
        | context.self_reference[lang].keys
        | context.messages[lang].keys
        | context.negation[lang].keys
        for lang in LANGUAGES
    }
    return Lexicon(
        rules=tuple(rules),
        cues={language: index_cues(tuple(cues[language])) for language in LANGUAGES},
        words={lang: WordKeys(lang, folded_inflections(lang, lemmas[lang])) for lang in LANGUAGES},
        context=context,
        labels={n: t.label.model_dump() for n, t in spec.techniques.items() if t.label},
        weights={n: t.weight for n, t in spec.techniques.items()},
        term_index=TermIndex.of({r.technique: r.terms for r in rules if r.terms}),
    )


def _rules(name: str, entry: Technique) -> list[Rule]:
    rules = []
    terms = [t for group in entry.terms.values() for t in group]
    alternation = terms_regex(terms)
    if alternation:
        rules.append(Rule(name, entry.weight, alternation, terms=tuple(terms)))
    for p in entry.patterns:
        flags = 0 if p.case_sensitive else re.IGNORECASE
        weight = entry.weight if p.weight is None else p.weight
        rules.append(Rule(name, weight, re.compile(p.regex, flags), p.case_sensitive))
    return rules


def _cue(
    name: str,
    entry: Technique,
    cue: Cue,
    sets: Mapping[str, Mapping[Language, list[str]]],
    language: Language,
) -> CompiledCue:
    return CompiledCue(
        technique=name,
        weight=entry.weight if cue.weight is None else cue.weight,
        first=_slot(cue.lemmas, sets, language),
        near=tuple(_slot(group, sets, language) for group in cue.near),
        within=cue.within,
        ordered=cue.ordered,
        negatable=entry.negatable if cue.negatable is None else cue.negatable,
        last_gap=None if cue.last_gap is None else _slot(cue.last_gap, sets, language),
        not_after=None if cue.not_after is None else _slot(cue.not_after, sets, language),
        not_before=None if cue.not_before is None else _slot(cue.not_before, sets, language),
        not_in_advice=cue.not_in_advice,
    )


def _slot(
    words: list[str], sets: Mapping[str, Mapping[Language, list[str]]], lang: Language
) -> Slot:
    expanded = [w for word in words for w in (sets[word[1:]][lang] if word[0] == "@" else [word])]
    keys = {fold(w) if w != NUMBER else w for w in expanded if not w.endswith("*")}
    stems = {fold(w[:-1]) for w in expanded if w.endswith("*")}
    return Slot(frozenset(keys), tuple(sorted(stems)))


def _context(context: Context) -> ContextWords:
    def every(words: Mapping[Language, list[str]]) -> list[str]:
        return [w for lang in LANGUAGES for w in words.get(lang, [])]

    return ContextWords(
        attribution={
            lang: _slot(context.attribution.get(lang, []), {}, lang) for lang in LANGUAGES
        },
        anonymous={lang: _slot(context.anonymous.get(lang, []), {}, lang) for lang in LANGUAGES},
        self_reference={
            lang: _slot(context.self_reference.get(lang, []), {}, lang) for lang in LANGUAGES
        },
        messages={lang: _slot(context.messages.get(lang, []), {}, lang) for lang in LANGUAGES},
        restrictive={
            lang: _slot(context.restrictive.get(lang, []), {}, lang) for lang in LANGUAGES
        },
        negation={lang: _slot(context.negation.get(lang, []), {}, lang) for lang in LANGUAGES},
        denial=terms_regex(every(context.denial)),
        satire=terms_regex(every(context.satire)),
        own_notice=terms_regex(every(context.own_notice)),
        passed_on=terms_regex(every(context.passed_on)),
        recognised=terms_regex(every(context.recognised)),
    )
