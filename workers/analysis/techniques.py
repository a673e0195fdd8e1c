"""Manipulation and propaganda techniques: lexicon and pattern matching, text in, findings out.

The lexicon lives in `data/techniques.yaml`; this module only compiles and applies it.
"""

from __future__ import annotations

import itertools
import re
from bisect import bisect_left, bisect_right, insort
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from workers.analysis import lemmas
from workers.analysis.chat_speak import read_form
from workers.analysis.datafiles import load_validated
from workers.analysis.findings import (
    MAX_FINDINGS,
    MAX_SUMMARY,
    Finding,
    diminishing_sum,
    evidence_quote,
    saturating_score,
)
from workers.analysis.lemmas import Language, Token
from workers.analysis.normalise import NormalisedText
from workers.analysis.technique_context import (
    TextContext,
    advises_against,
    labelled_satire,
    passed_on,
    quotes,
    sentence_ends,
)
from workers.analysis.technique_lexicon import (
    CompiledCue,
    Lexicon,
    Rule,
    Slot,
    TechniquesFile,
    compile_file,
    compile_lexicon,
    term_pattern,
)
from workers.analysis.text import clip, fold
from workers.analysis.text_features import SharedWord, words_of
from workers.analysis.wording_model import (
    LONE_MIN_WORDS,
    WordingModel,
    cue_weight,
    shipped_model,
    stands_alone,
)

__all__ = [
    "Lexicon",
    "Rule",
    "TechniqueReport",
    "assess_techniques",
    "compile_lexicon",
    "context_words",
    "default_lexicon",
    "find_techniques",
    "report_data",
    "term_pattern",
    "with_model_findings",
]

# Larger than any offset: (start, _AFTER_ANY) sorts after every span that starts at start.
_AFTER_ANY = 1 << 62
# How many words before a cue a "not" / "nu" cancels it ("they are not parasites").
NEGATION_REACH = 3
# How many characters before a `not_in_advice` cue's verb are read for what forbids it.
ADVICE_REACH = 120
# How many words before a cue its `not_after` words look ("from 6pm today until …").
NOT_AFTER_REACH = 5
# How close to a speaking verb a word makes the speaker anonymous ("surse din ... spun").
ANONYMOUS_REACH = 3
# Findings of one tenant term that count: repeats add almost nothing to a technique's total
# (diminishing_sum), and the cap keeps 200 terms that all occur throughout a 100 kB text a
# few thousand findings, not millions.
MAX_TERM_FINDINGS = 20
# The learned model's finding: a kind of its own, named for people.
LEARNED = "learned_wording"
# A web address written in a text: a scheme, or www.
_WEB_ADDRESS = re.compile(r"(?i)\bhttps?://|\bwww\.")
LEARNED_LABELS = {
    "en": "wording typical of manipulative texts (learned model), e.g.",
    "ro": "formulări tipice textelor manipulatoare (model învățat), de ex.",
}


@dataclass(frozen=True)
class TechniqueReport:
    """Findings sorted by position, per-technique totals and the resulting 0-100 risk."""

    score: float
    findings: tuple[Finding, ...]
    totals: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class _Match:
    """Evidence on the normalised text, before its context is weighed."""

    technique: str
    start: int
    end: int
    weight: float
    # Words of several slots: a speaker's verb between them can introduce the cue's end.
    spread: bool = False


@lru_cache(maxsize=1)
def default_lexicon() -> Lexicon:
    """The shipped lexicon, validated and compiled once per process."""
    return compile_file(load_validated("techniques.yaml", TechniquesFile))


@dataclass(frozen=True)
class _Reading:
    """One text as the analyser reads it: normalised, folded, its words with their lemma
    keys per language, and its context (quotes, speakers, denials, satire)."""

    clean: NormalisedText
    folded: str
    words: Mapping[Language, Sequence[Token]]
    context: TextContext


def _read(text: str, lexicon: Lexicon) -> _Reading:
    clean = read_form(text)
    folded = fold(clean.text)
    ends = sentence_ends(folded)
    words = lemmas.tokens(clean.text, folded, lexicon.words, ends)
    return _Reading(clean, folded, words, _text_context(folded, ends, words, lexicon))


def find_techniques(text: str, lexicon: Lexicon | None = None) -> list[Finding]:
    """Every lexicon, cue and pattern match in `text`, one finding per technique and span,
    weighted by its context (quoted, reported, denied, satire); those that count for
    nothing are left out.

    Matching runs on the normalised text (no invisible characters, look-alikes folded);
    each finding's span and quote are the original text's.
    """
    lexicon = lexicon or default_lexicon()
    return _findings(text, _read(text, lexicon), lexicon)


def _findings(text: str, reading: _Reading, lexicon: Lexicon) -> list[Finding]:
    clean, context = reading.clean, reading.context
    matches = _rule_matches(clean.text, reading.folded, lexicon)
    for lang, tokens in reading.words.items():
        matches += _cue_matches(tokens, lexicon, lang, context, reading.folded)
    found = []
    for m in matches:
        share = context.factor(m.start, m.end, m.spread) * context.kind_factor(m.technique)
        weight = round(m.weight * share, 3)
        if weight > 0:
            start, end = clean.span(m.start, m.end)
            found.append(Finding(m.technique, start, end, evidence_quote(text, start, end), weight))
    return _without_overlaps(found)


def context_words(text: str, lexicon: Lexicon | None = None) -> list[SharedWord]:
    """The text's folded words, each with the share of it its context leaves (a quoted
    slogan, a report, a denial, satire count less): what the learned model reads."""
    return _context_words(_read(text, lexicon or default_lexicon()))


def _context_words(reading: _Reading) -> list[SharedWord]:
    context, words = reading.context, words_of(reading.folded)
    if context.satire:
        return [(w, context.factor(start, end)) for w, start, end in words]
    # One pass beside the sorted spans where a share can drop: a word outside them counts
    # fully, and only the others pay for `factor`'s searches.
    spans, at, reach, found = context.discounted(len(reading.folded)), 0, -1, []
    for word, start, end in words:
        while at < len(spans) and spans[at][0] < end:
            reach = max(reach, spans[at][1])
            at += 1
        found.append((word, context.factor(start, end) if reach > start else 1.0))
    return found


def _rule_matches(normalised: str, folded: str, lexicon: Lexicon) -> list[_Match]:
    found = []
    starts = lexicon.term_index.starts(folded)
    for rule in lexicon.rules:
        if rule.terms:
            matches = starts.finditer(rule.technique, rule.pattern)
        else:
            matches = rule.pattern.finditer(normalised if rule.case_sensitive else folded)
        for match in matches:
            if match.end() > match.start():
                found.append(_Match(rule.technique, match.start(), match.end(), rule.weight))
    return found


def _cue_matches(
    tokens: Sequence[Token], lexicon: Lexicon, lang: Language, context: TextContext, folded: str
) -> list[_Match]:
    """Cues whose words all occur close together in one sentence, not negated (nor, for a
    cue `not_in_advice`, forbidden or told of as done)."""
    index = lexicon.cues[lang]
    accepts = _acceptor()
    is_negation = lexicon.context.negation[lang]
    restrictive = lexicon.context.restrictive[lang]
    sentence = [context.sentence_of(t.start) for t in tokens]
    bounds = _sentence_bounds(sentence)
    found = []
    for i, token in enumerate(tokens):
        for cue in index.starting_with(token.keys):
            others = _cue_words(cue, tokens, bounds, i, accepts)
            if others is None or not _gap_allowed(cue, tokens, [i, *others], accepts):
                continue
            first, last = min([i, *others]), max([i, *others])
            if _after_excluded(cue, tokens, sentence, first, accepts):
                continue
            if _followed_by_excluded(cue, tokens, sentence, i, accepts):
                continue
            if cue.not_in_advice and _in_advice(context, folded, tokens[first].start):
                continue
            words = {i, *others}
            negated = cue.negatable and _negated(tokens, sentence, words, is_negation, accepts)
            if negated and not _restricted(tokens, words, restrictive, accepts):
                continue
            start, end = tokens[first].start, tokens[last].end
            found.append(_Match(cue.technique, start, end, cue.weight, spread=bool(others)))
    return found


def _sentence_bounds(sentence: Sequence[int]) -> list[range]:
    """For each word (`sentence`: each word's sentence, in order), its sentence's words."""
    bounds: list[range] = []
    start = 0
    for i in range(1, len(sentence) + 1):
        if i == len(sentence) or sentence[i] != sentence[start]:
            bounds += [range(start, i)] * (i - start)
            start = i
    return bounds


def _gap_allowed(
    cue: CompiledCue, tokens: Sequence[Token], words: list[int], accepts: Accepts
) -> bool:
    """Whether every word between the cue's last two words is one its `last_gap` allows."""
    if cue.last_gap is None or len(words) < 2:
        return True
    gap = cue.last_gap
    return all(accepts(gap, tokens[j].keys) for j in range(words[-2] + 1, words[-1]))


def _after_excluded(
    cue: CompiledCue,
    tokens: Sequence[Token],
    sentence: Sequence[int],
    first: int,
    accepts: Accepts,
) -> bool:
    """Whether a word of the cue's `not_after` stands shortly before its first word, in its
    sentence ("from 6pm today until 6am tomorrow": a window, not a deadline)."""
    if cue.not_after is None:
        return False
    before = range(max(0, first - NOT_AFTER_REACH), first)
    return any(
        sentence[j] == sentence[first] and accepts(cue.not_after, tokens[j].keys) for j in before
    )


def _followed_by_excluded(
    cue: CompiledCue, tokens: Sequence[Token], sentence: Sequence[int], at: int, accepts: Accepts
) -> bool:
    """Whether the word right after the cue's first word, in its sentence, is one of its
    `not_before` ("fie că": whether, not either)."""
    after = at + 1
    return (
        cue.not_before is not None
        and after < len(tokens)
        and sentence[after] == sentence[at]
        and accepts(cue.not_before, tokens[after].keys)
    )


def _in_advice(context: TextContext, folded: str, at: int) -> bool:
    """Whether the word at `at` is forbidden or told of as done, its sentence read up to it
    (its last ADVICE_REACH characters: the clause that says so is short, and a sentence of
    thousands of repeated requests is read in time linear in its length)."""
    sentence = context.sentence_of(at)
    start = context.sentence_ends[sentence - 1] if sentence > 0 else 0
    return advises_against(folded[max(start, at - ADVICE_REACH) : at])


def _restricted(
    tokens: Sequence[Token], words: set[int], restrictive: Slot, accepts: Accepts
) -> bool:
    """Whether a word like "decât" among the cue's words makes its "nu" a restriction."""
    return any(accepts(restrictive, tokens[j].keys) for j in range(min(words), max(words)))


Accepts = Callable[[Slot, frozenset[str]], bool]


def _acceptor() -> Accepts:
    """`slot.accepts(keys)`, the word-beginning test remembered per slot and word for the
    length of one text (a slot of whole lemmas alone is one set test, cheaper than a memo)."""
    seen: dict[tuple[int, frozenset[str]], bool] = {}

    def accepts(slot: Slot, keys: frozenset[str]) -> bool:
        if not slot.keys.isdisjoint(keys):
            return True
        if not slot.stems:
            return False
        key = (id(slot), keys)
        found = seen.get(key)
        if found is None:
            found = seen[key] = slot.accepts(keys)
        return found

    return accepts


def _cue_words(
    cue: CompiledCue, tokens: Sequence[Token], bounds: Sequence[range], i: int, accepts: Accepts
) -> list[int] | None:
    """Positions of the cue's other words found around word i, or None if one is missing.
    `bounds[i]`: the positions of word i's sentence."""
    found = []
    at = i
    sentence = bounds[i]
    first, stop = max(sentence.start, i - cue.within), min(sentence.stop, i + cue.within + 1)
    for slot in cue.near:
        for j in range(at + 1 if cue.ordered else first, stop):
            if j != i and accepts(slot, tokens[j].keys):
                break
        else:
            return None
        found.append(j)
        at = j
    return found


def _negated(
    tokens: Sequence[Token],
    sentence: Sequence[int],
    words: set[int],
    negation: Slot,
    accepts: Accepts,
) -> bool:
    """Whether a "not" stands just before or among the cue's words ("they are not vermin")."""
    first, last = min(words), max(words)
    around = range(max(0, first - NEGATION_REACH), last)
    return any(
        j not in words and sentence[j] == sentence[first] and accepts(negation, tokens[j].keys)
        for j in around
    )


def _speakers(
    tokens: Sequence[Token], lexicon: Lexicon, lang: Language, quoted: Sequence[tuple[int, int]]
) -> list[tuple[int, int]]:
    """Where a named speaker's verb is: "the minister said", not "sources say". Words inside
    a quotation are the quote's, not the speaker's: "chanted «They took…»" is attributed.
    A message right after "this" is the text itself ("reply to this message with the code"),
    not one it reports (a headline or a poster after "this" is still reported)."""
    speaking, anonymous = lexicon.context.attribution[lang], lexicon.context.anonymous[lang]
    this, messages = lexicon.context.self_reference[lang], lexicon.context.messages[lang]
    accepts = _acceptor()
    found = []
    for i, token in enumerate(tokens):
        before = tokens[i - 1] if i else None
        itself = (
            before is not None
            and before.run == token.run
            and accepts(messages, token.keys)
            and accepts(this, before.keys)
        )
        if accepts(speaking, token.keys) and not itself:
            around = tokens[max(0, i - ANONYMOUS_REACH) : i + ANONYMOUS_REACH + 1]
            if not any(
                t.run == token.run and accepts(anonymous, t.keys) and not _inside(quoted, t.start)
                for t in around
            ):
                found.append((token.start, token.end))
    return found


def _inside(spans: Sequence[tuple[int, int]], at: int) -> bool:
    i = bisect_right(spans, (at, _AFTER_ANY)) - 1
    return i >= 0 and spans[i][0] <= at < spans[i][1]


def _text_context(
    folded: str, ends: list[int], words: Mapping[Language, Sequence[Token]], lexicon: Lexicon
) -> TextContext:
    """Quotes, sentence ends, speakers' verbs, denials and a satire label of one text."""
    quoted = quotes(folded)
    speaking = sorted(
        {at for lang, ts in words.items() for at in _speakers(ts, lexicon, lang, quoted)}
    )
    denial = lexicon.context.denial
    own_notice = lexicon.context.own_notice
    return TextContext(
        quotes=quoted,
        sentence_ends=ends,
        attributions=speaking,
        denials=[m.span() for m in denial.finditer(folded)] if denial else [],
        satire=labelled_satire(folded, lexicon.context.satire),
        notice=bool(own_notice and own_notice.search(folded)),
        passed_on=passed_on(folded, quoted, lexicon.context.passed_on, lexicon.context.recognised),
    )


def _without_overlaps(found: Iterable[Finding]) -> list[Finding]:
    """Drop a finding nested in (or around) a weightier one of the same technique: the same
    words are one piece of evidence. Findings that merely overlap both count."""
    kept: dict[str, list[tuple[int, int]]] = defaultdict(list)
    result = []
    for f in sorted(found, key=lambda f: (-f.weight, -(f.end - f.start), f.start)):
        spans = kept[f.kind]  # never nested, so sorted by start and by end alike
        at = bisect_right(spans, (f.start, _AFTER_ANY))
        inside = at > 0 and spans[at - 1][1] >= f.end
        later = bisect_left(spans, (f.start, -1))
        around = later < len(spans) and spans[later][1] <= f.end
        if not (inside or around):
            insort(spans, (f.start, f.end))
            result.append(f)
    return sorted(result, key=lambda f: (f.start, f.kind))


def score_findings(findings: Iterable[Finding]) -> tuple[float, dict[str, float]]:
    """Risk 0-100 from findings: repeats of a technique diminish, distinct techniques add up."""
    weights: dict[str, list[float]] = defaultdict(list)
    for f in findings:
        weights[f.kind].append(f.weight)
    totals = {kind: round(diminishing_sum(ws), 3) for kind, ws in weights.items()}
    return saturating_score(sum(totals.values())), totals


def assess_techniques(
    text: str,
    lexicon: Lexicon | None = None,
    model: WordingModel | None = None,
    learned: bool = True,
) -> TechniqueReport:
    """Find the techniques in `text` and score them: the lexicon's findings and, beside
    them, unless `learned` is off, the learned wording model's cue (`model`, else the
    shipped one)."""
    lexicon = lexicon or default_lexicon()
    reading = _read(text, lexicon)
    findings = _findings(text, reading, lexicon)
    # The model's cue supports lexicon evidence, and stands alone only when it is sure of a
    # text long enough to judge (wording_model.stands_alone).
    cue = (
        _learned_finding(
            text, reading, model or shipped_model(), alone=not findings, linked=_linked(text)
        )
        if learned
        else None
    )
    if cue is not None:
        findings = sorted([*findings, cue], key=lambda f: (f.start, f.kind))
    score, totals = score_findings(findings)
    return TechniqueReport(score, tuple(findings), totals)


def _linked(text: str) -> bool:
    """Whether the text carries a web address (a lure's way out)."""
    return _WEB_ADDRESS.search(text) is not None


def _learned_finding(
    text: str, reading: _Reading, model: WordingModel, alone: bool, linked: bool = False
) -> Finding | None:
    """The model's cue as a finding: its weight from the model's probability on the words
    as their context leaves them, its span and quote the first occurrence of the word that
    weighs most. None in labelled satire: satire borrows the very wording the model knows,
    and says so; None `alone` (no lexicon evidence) unless it stands alone."""
    if reading.context.satire:
        return None
    words = _context_words(reading)
    if alone and len(words) < LONE_MIN_WORDS:
        return None  # too short to stand alone, whatever the model says: not asked
    probability = model.probability(words)
    if alone and not stands_alone(probability, len(words)):
        return None
    # A service's own notice counts the cue at half weight, as the lure families it names;
    # not with a link to follow: a lure that copies the notice line still sends the reader
    # somewhere (round 24's review: "… Update your payment method here: https://… We will
    # never ask you for your PIN" fell from 72.6 to 47.7).
    notice = 1.0 if linked else reading.context.kind_factor(LEARNED)
    weight = cue_weight(probability) * notice
    strongest = model.strongest_words(words, limit=1) if weight > 0 else []
    if not strongest:
        return None
    start, end = _first_span(reading, strongest[0])
    return Finding(LEARNED, start, end, evidence_quote(text, start, end), weight, "model")


def _first_span(reading: _Reading, word: str) -> tuple[int, int]:
    """The original text's span of the first whole-word occurrence of a folded word."""
    found = re.search(rf"(?<![^\W_]){re.escape(word)}(?![^\W_])", reading.folded)
    return reading.clean.span(*found.span()) if found else (0, 0)


def with_model_findings(
    text: str,
    report: TechniqueReport,
    proposals: Iterable[tuple[str, str]],
    lexicon: Lexicon | None = None,
) -> TechniqueReport:
    """Add (technique, quote) pairs proposed by a language model, keeping only verifiable ones.

    A proposal counts only if its technique is known and its quote occurs in the text,
    so a model cannot invent evidence; it gets the technique's lexicon weight.
    """
    lexicon = lexicon or default_lexicon()
    weights = lexicon.weights
    clean = read_form(text)
    folded = fold(clean.text)
    extra = []
    for technique, quote in proposals:
        needle = fold(read_form(quote.strip()).text)
        at = folded.find(needle) if needle else -1
        if technique in weights and at >= 0:
            start, end = clean.span(at, at + len(needle))
            quoted = evidence_quote(text, start, end)
            extra.append(Finding(technique, start, end, quoted, weights[technique], "llm"))
    findings = _without_overlaps([*report.findings, *extra])
    score, totals = score_findings(findings)
    return TechniqueReport(score, tuple(findings), totals)


def with_tenant_terms(
    text: str,
    report: TechniqueReport,
    terms: Mapping[str, Sequence[str]],
    lexicon: Lexicon | None = None,
) -> TechniqueReport:
    """Add a finding for each whole-word occurrence of a tenant's extra terms (matched on the
    normalised, folded text, as the lexicon is, and literally: a term is never a pattern), at
    its technique's lexicon weight, the first MAX_TERM_FINDINGS of each term; terms of a
    technique the lexicon does not know count for nothing."""
    if not terms:
        return report
    lexicon = lexicon or default_lexicon()
    clean = read_form(text)
    folded = fold(clean.text)
    extra = []
    for technique, words in terms.items():
        weight = lexicon.weights.get(technique)
        for term in words if weight is not None else ():
            needle = fold(read_form(term.strip()).text)
            found = re.finditer(rf"(?<!\w){re.escape(needle)}(?!\w)", folded) if needle else ()
            for m in itertools.islice(found, MAX_TERM_FINDINGS):
                start, end = clean.span(m.start(), m.end())
                quoted = evidence_quote(text, start, end)
                extra.append(Finding(technique, start, end, quoted, weight or 0.0, "tenant"))
    findings = _without_overlaps([*report.findings, *extra])
    score, totals = score_findings(findings)
    return TechniqueReport(score, tuple(findings), totals)


def report_data(report: TechniqueReport, lexicon: Lexicon | None = None) -> dict[str, Any]:
    """The JSON-ready evidence of a report: capped findings, a summary in EN and RO, and
    `evidence_count`, how many findings are behind the score."""
    lexicon = lexicon or default_lexicon()
    strongest = sorted(report.findings, key=lambda f: -f.weight)
    top = _one_per_technique(strongest)[:MAX_SUMMARY]
    return {
        # Every text can be read for techniques; the verdict weighs a component that says so.
        "applicable": True,
        "evidence_count": len(report.findings),
        "techniques": dict(sorted(report.totals.items(), key=lambda kv: -kv[1])),
        "findings": [f.as_dict() for f in report.findings[:MAX_FINDINGS]],
        "finding_count": len(report.findings),
        "summary": [f'{_label(lexicon, f.kind, "en")}: "{clip(f.text, 60)}"' for f in top],
        "summary_ro": [f"{_label(lexicon, f.kind, 'ro')}: „{clip(f.text, 60)}”" for f in top],
    }


def _label(lexicon: Lexicon, kind: str, language: str) -> str:
    return LEARNED_LABELS[language] if kind == LEARNED else lexicon.label(kind, language)


def _one_per_technique(findings: Iterable[Finding]) -> list[Finding]:
    seen: set[str] = set()
    unique = []
    for f in findings:
        if f.kind not in seen:
            seen.add(f.kind)
            unique.append(f)
    return unique
