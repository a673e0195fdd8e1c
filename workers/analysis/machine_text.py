"""Statistical signs that a text was machine-generated, combined into a probability.

Each signal is a documented measure mapped to 0..1 strength and fed, with a fixed
weight, to a logistic combination; the marks of a human voice (first person, chat
slang, emotive punctuation, lower-case sentence starts) weigh against. Assistant
self-references are strong evidence on their own. One signal is learned: a model of the
character n-grams of machine-written texts (wording_model, `machine_text_model.json`),
which found 0.95 of the machine-written texts of writers it never saw at precision 1.00,
where the phrase and statistics rules, as each new set was written, found 0.87 (0.62 on
the worst set; docs/analysis.md, "Learned style"). These are explainable heuristics,
not a detector: they report signals for a human to weigh.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from workers.analysis.datafiles import load_validated
from workers.analysis.findings import (
    MAX_FINDINGS,
    Finding,
    combine_probabilities,
    evidence_quote,
)
from workers.analysis.normalise import NormalisedText, normalise
from workers.analysis.stylometry import (
    emotive_marks,
    enumerations,
    lowercase_starts,
    mattr,
    repeated_trigram_share,
    sentence_length_variation,
    specifics_per_100_words,
)
from workers.analysis.techniques import term_pattern
from workers.analysis.text import clip, fold, sentences, word_count, words
from workers.analysis.text_features import SharedWord, whole_words
from workers.analysis.wording_model import shipped_machine_text_model

# Below this many words a text is too short to judge by how it is written: the
# statistics are noise, the report is not applicable and its score stays low (unless an
# assistant names itself). Short generated answers of 30-40 words are common, so the
# bar sits under them.
MIN_WORDS_TO_JUDGE = 25
# Burstiness needs a few sentences to mean anything.
MIN_SENTENCES_FOR_UNIFORMITY = 3
# Logistic combination: bias and weight per signal (log-odds one full-strength signal
# adds). A text with no signal reads ~5 %; stock phrasing plus assistant vocabulary
# alone crosses 50 %; a human voice at full strength takes 2.5 off.
BIAS = -2.8
WEIGHTS: Mapping[str, float] = {
    "stock_phrases": 2.4,
    "assistant_vocabulary": 2.2,
    "modals": 1.0,
    "connective_openers": 1.4,
    "uniform_sentences": 1.0,
    "enumerations": 0.6,
    "generic": 0.8,
    "repetition": 1.0,
    "low_lexical_diversity": 1.0,
    "learned_style": 4.0,
    "assistant_preamble": 2.0,
    "human_voice": -2.5,
}
# The learned model's probability counts from LEARNED_FROM up (full strength at 1): at 0.5
# it adds about 1.1 to the log-odds, at 0.9 about 3.4. Chosen leave-one-batch-out on dev,
# of weights 2-5 and starts 0.3 and 0.5: the most recall at precision >= 0.9 on the
# batches left out.
LEARNED_FROM = 0.3
SELF_REFERENCE_PROBABILITY = 0.9
# A text too short to judge never reads as more likely generated than this.
SHORT_TEXT_CEILING = 0.1


class Terms(BaseModel):
    """One lexicon: its terms in each language."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    en: list[str] = Field(min_length=1)
    ro: list[str] = Field(min_length=1)


class Preamble(BaseModel):
    """How an assistant's reply opens (`text.preamble` of `data/ai_markers.yaml`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    assent: Terms
    presents: Terms
    praise: Terms


class TextMarkers(BaseModel):
    """The text part of `data/ai_markers.yaml`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    self_reference: Terms
    preamble: Preamble
    stock_phrases: Terms
    connectives: Terms
    vocabulary: Terms
    modals: Terms
    first_person: Terms
    informal: Terms


class ImageMarkers(BaseModel):
    """The image part of `data/ai_markers.yaml` (read by image_forensics)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    generators: list[str] = Field(min_length=1)
    generator_keys: list[str] = Field(min_length=1)
    ai_source_types: list[str] = Field(min_length=1)
    editors: list[str] = Field(min_length=1)


class AiMarkers(BaseModel):
    """The whole of `data/ai_markers.yaml`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int
    text: TextMarkers
    image: ImageMarkers


@dataclass(frozen=True)
class Signal:
    """One measured property, its 0..1 strength and its weight in the combination."""

    name: str
    value: float
    strength: float
    weight: float


@dataclass(frozen=True)
class MachineTextReport:
    """Probability that the text is machine-generated, with the signals behind it."""

    probability: float
    signals: tuple[Signal, ...]
    phrases: tuple[Finding, ...]
    word_count: int
    applicable: bool = True

    @property
    def score(self) -> float:
        return round(100.0 * self.probability, 1)

    @property
    def evidence_count(self) -> int:
        """Signals at half strength or more that raise the probability, plus phrases found."""
        raising = [s for s in self.signals if s.weight > 0 and s.strength >= 0.5]
        return len(raising) + len(self.phrases)


@dataclass(frozen=True)
class _Markers:
    self_reference: re.Pattern[str]
    preamble: re.Pattern[str]
    stock_phrases: re.Pattern[str]
    connectives: re.Pattern[str]
    vocabulary: re.Pattern[str]
    modals: re.Pattern[str]
    first_person: re.Pattern[str]
    informal: re.Pattern[str]


def ai_markers() -> AiMarkers:
    """`data/ai_markers.yaml`, validated (DataFileError naming the field when it is broken)."""
    return load_validated("ai_markers.yaml", AiMarkers)


def _alternation(terms: Terms) -> re.Pattern[str]:
    found = sorted({term_pattern(t) for t in (*terms.en, *terms.ro)}, key=len, reverse=True)
    return re.compile(rf"(?<!\w)(?:{'|'.join(found)})(?!\w)")


def _preamble(spec: Preamble) -> re.Pattern[str]:
    """The opening of an assistant's reply, matched at the start of the folded text: after
    at most a few quotes or dashes, praise of the question and a `!`, or assent, a `!` or a
    comma and at once what it presents ("Certainly! Here is", "Desigur! Iată")."""
    assent = _alternation(spec.assent).pattern
    presents = _alternation(spec.presents).pattern
    praise = _alternation(spec.praise).pattern
    return re.compile(
        rf"\W{{0,8}}+(?P<opening>{praise}\s{{0,3}}+!|{assent}\s{{0,3}}+[!,]\s{{0,4}}+{presents})"
    )


@lru_cache(maxsize=1)
def _markers() -> _Markers:
    text = ai_markers().text
    return _Markers(
        _alternation(text.self_reference),
        _preamble(text.preamble),
        _alternation(text.stock_phrases),
        # A sentence opens with a connective after at most a few quotes or dashes.
        # Used with `match` at each sentence's start in the folded text (no `^`: that
        # would only match at the start of the whole text).
        re.compile(rf"\W{{0,8}}+(?:{_alternation(text.connectives).pattern})"),
        _alternation(text.vocabulary),
        _alternation(text.modals),
        _alternation(text.first_person),
        _alternation(text.informal),
    )


def _clamp(x: float) -> float:
    return min(max(x, 0.0), 1.0)


@dataclass(frozen=True)
class _Measured:
    """The text once: normalised, folded, its words and sentences."""

    text: str
    folded: str
    tokens: list[str]
    sentences: list[str]
    lengths: list[int]
    openers: int


def _measure(text: str, folded: str, tokens: list[str]) -> _Measured:
    # Sentences are read in the text folded once, by offsets: no copy per sentence.
    pieces = sentences(text)
    connectives = _markers().connectives
    return _Measured(
        text,
        folded,
        tokens,
        [p.text for p in pieces],
        [word_count(folded, p.start, p.end) for p in pieces],
        sum(bool(connectives.match(folded, p.start, p.end)) for p in pieces),
    )


def _rate(pattern: re.Pattern[str], m: _Measured, distinct: bool = False) -> float:
    """Matches of `pattern` per 100 words (distinct matches when `distinct`)."""
    found = pattern.findall(m.folded)
    count = len(set(found)) if distinct else len(found)
    return 100.0 * count / max(len(m.tokens), 1)


def human_voice(m: _Measured) -> float:
    """0..1: first person (weak: assistants write letters too), chat slang, emotive
    punctuation, lower-case sentence starts."""
    markers = _markers()
    marks = (
        _rate(markers.first_person, m) / 6
        + _rate(markers.informal, m) / 3
        + emotive_marks(m.text)
        + lowercase_starts(m.sentences)
    )
    return _clamp(marks / 2)


# Each statistical signal: its measure, and how the measure maps to strength.
_SIGNALS: Mapping[str, tuple[Callable[[_Measured], float], Callable[[float], float]]] = {
    # Several distinct assistant words per hundred (humans: ~0-2).
    "assistant_vocabulary": (
        lambda m: _rate(_markers().vocabulary, m, distinct=True),
        lambda v: _clamp((v - 1.0) / 6.0),
    ),
    # What things "can", "may" or "help" do, per hundred words (reporting: ~0-3).
    "modals": (lambda m: _rate(_markers().modals, m), lambda v: _clamp((v - 2.0) / 4.0)),
    "connective_openers": (
        lambda m: m.openers / len(m.sentences) if m.sentences else 0.0,
        lambda v: _clamp((v - 0.1) / 0.3),
    ),
    # Human prose mixes short and long sentences (CV ~0.5+); generated prose is even.
    "uniform_sentences": (
        lambda m: sentence_length_variation(m.lengths),
        lambda v: _clamp((0.55 - v) / 0.35),
    ),
    "enumerations": (
        lambda m: enumerations(m.folded) / len(m.sentences) if m.sentences else 0.0,
        lambda v: _clamp(v / 0.3),
    ),
    # No figures or names: reporting has ~4+ per hundred words, generic prose ~0.
    "generic": (
        lambda m: specifics_per_100_words(m.sentences, len(m.tokens)),
        lambda v: _clamp((4.0 - v) / 4.0),
    ),
    "repetition": (lambda m: repeated_trigram_share(m.tokens), lambda v: _clamp(v / 0.15)),
    "low_lexical_diversity": (lambda m: mattr(m.tokens), lambda v: _clamp((0.85 - v) / 0.15)),
    "human_voice": (human_voice, lambda v: v),
}


def style_words(text: str) -> list[SharedWord]:
    """The words the learned style reads in `text`: every word of it normalised and folded,
    whole (the training script reads them so too)."""
    return whole_words(fold(normalise(text).text))


def learned_style(folded: str) -> Signal:
    """The learned model's probability that a text of these words (normalised and folded)
    was machine-written."""
    p = shipped_machine_text_model().probability(whole_words(folded))
    strength = _clamp((p - LEARNED_FROM) / (1.0 - LEARNED_FROM))
    return Signal("learned_style", round(p, 3), round(strength, 3), WEIGHTS["learned_style"])


def _statistical_signals(m: _Measured) -> list[Signal]:
    found = [learned_style(m.folded)]
    for name, (measure, strength) in _SIGNALS.items():
        if name == "uniform_sentences" and len(m.sentences) < MIN_SENTENCES_FOR_UNIFORMITY:
            continue
        value = measure(m)
        found.append(Signal(name, round(value, 3), round(strength(value), 3), WEIGHTS[name]))
    return found


def assess_machine_text(text: str) -> MachineTextReport:
    """Measure the signals of `text` and combine them into a probability.

    Signals are measured on the normalised text; phrase findings point at the original.
    """
    clean = normalise(text)
    tokens = words(clean.text)
    folded = fold(clean.text)
    own_words = _find(clean, folded, _markers().self_reference, "self_reference", 0.9)
    stock = _find(clean, folded, _markers().stock_phrases, "stock_phrase", 0.25)
    stock_strength = _clamp(len({f.text.lower() for f in stock}) / 2)
    signals = [Signal("stock_phrases", float(len(stock)), stock_strength, WEIGHTS["stock_phrases"])]
    applicable = len(tokens) >= MIN_WORDS_TO_JUDGE
    opening: list[Finding] = []
    if applicable:
        opening = _opening(clean, folded)
        strength = 1.0 if opening else 0.0
        signals.append(
            Signal("assistant_preamble", strength, strength, WEIGHTS["assistant_preamble"])
        )
        signals += _statistical_signals(_measure(clean.text, folded, tokens))
    z = BIAS + sum(s.strength * s.weight for s in signals)
    probability = 1.0 / (1.0 + math.exp(-z))
    if not applicable:
        probability = min(probability, SHORT_TEXT_CEILING)
    if own_words:
        probability = combine_probabilities([probability, SELF_REFERENCE_PROBABILITY])
    return MachineTextReport(
        round(probability, 3),
        tuple(signals),
        (*own_words, *opening, *stock),
        len(tokens),
        applicable or bool(own_words),
    )


def _opening(clean: NormalisedText, folded: str) -> list[Finding]:
    """An assistant's reply opening the text ("Certainly! Here is …"), as a finding."""
    found = _markers().preamble.match(folded)
    if not found:
        return []
    start, end = clean.span(*found.span("opening"))
    quote = evidence_quote(clean.original, start, end)
    return [Finding("assistant_preamble", start, end, quote, 0.5)]


def _find(
    clean: NormalisedText, folded: str, pattern: re.Pattern[str], kind: str, weight: float
) -> list[Finding]:
    found = []
    for m in pattern.finditer(folded):
        start, end = clean.span(*m.span())
        found.append(Finding(kind, start, end, evidence_quote(clean.original, start, end), weight))
    return found


def report_data(report: MachineTextReport) -> dict[str, Any]:
    """JSON-ready evidence: the probability, each signal, and the phrases found."""
    strong = [s for s in report.signals if s.strength >= 0.5 and s.weight > 0]
    summary = [f"{s.name.replace('_', ' ')} ({s.value:g})" for s in strong]
    summary += [f'{f.kind.replace("_", " ")}: "{clip(f.text, 50)}"' for f in report.phrases[:3]]
    return {
        "applicable": report.applicable,
        "evidence_count": report.evidence_count,
        "probability": report.probability,
        "word_count": report.word_count,
        "statistics_used": report.word_count >= MIN_WORDS_TO_JUDGE,
        "signals": {
            s.name: {"value": s.value, "strength": s.strength, "weight": s.weight}
            for s in report.signals
        },
        "phrases": [f.as_dict() for f in report.phrases[:MAX_FINDINGS]],
        "summary": summary[:5],
        "summary_ro": [_ro(item) for item in summary[:5]],
    }


_RO_NAMES = {
    "uniform sentences": "propoziții uniforme",
    "low lexical diversity": "vocabular puțin variat",
    "repetition": "repetiții",
    "connective openers": "conectori la început de frază",
    "assistant vocabulary": "vocabular de asistent AI",
    "modals": "ce „poate” face ceva, la tot pasul",
    "enumerations": "enumerări în trei",
    "generic": "text generic, fără nume sau cifre",
    "self reference": "formulă de asistent AI",
    "stock phrase": "formulă șablon",
    "assistant preamble": "început de răspuns al unui asistent AI",
    "learned style": "stil de text generat (model învățat)",
}


def _ro(item: str) -> str:
    for en, ro in _RO_NAMES.items():
        if item.startswith(en):
            return ro + item[len(en) :]
    return item
