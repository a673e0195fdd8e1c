"""Statistical signs that a text was machine-generated, combined into a probability.

Each signal is mapped to 0..1 and fed to a logistic combination with fixed weights;
assistant self-references are strong evidence on their own. These are weak,
explainable heuristics, not a detector: they report signals for a human to weigh.
"""

from __future__ import annotations

import math
import re
import statistics
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from workers.analysis.datafiles import load
from workers.analysis.findings import (
    MAX_FINDINGS,
    Finding,
    combine_probabilities,
    evidence_quote,
)
from workers.analysis.normalise import NormalisedText, normalise
from workers.analysis.techniques import term_pattern
from workers.analysis.text import clip, fold, sentences, word_count, words

# Below this many words, sentence and vocabulary statistics are noise.
MIN_WORDS_FOR_STATISTICS = 40
# Moving-average type-token ratio window: long enough to be stable, short enough
# to compare texts of different lengths.
MATTR_WINDOW = 40
# Logistic combination: bias and weight per signal. A text with no signal at all
# gets ~10 %; every weight is the log-odds one full-strength signal adds.
BIAS = -2.2
WEIGHTS: Mapping[str, float] = {
    "uniform_sentences": 1.6,
    "low_lexical_diversity": 1.0,
    "repetition": 1.2,
    "connective_openers": 1.5,
    "stock_phrases": 2.2,
}
SELF_REFERENCE_PROBABILITY = 0.9


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

    @property
    def score(self) -> float:
        return round(100.0 * self.probability, 1)


@dataclass(frozen=True)
class _Markers:
    self_reference: re.Pattern[str]
    stock_phrases: re.Pattern[str]
    connectives: re.Pattern[str]


def _alternation(groups: Mapping[str, list[str]]) -> re.Pattern[str]:
    terms = sorted({term_pattern(t) for group in groups.values() for t in group}, key=len)
    return re.compile(rf"(?<!\w)(?:{'|'.join(reversed(terms))})(?!\w)")


@lru_cache(maxsize=1)
def _markers() -> _Markers:
    text = load("ai_markers.yaml")["text"]
    return _Markers(
        _alternation(text["self_reference"]),
        _alternation(text["stock_phrases"]),
        # A sentence opens with a connective after at most a few quotes or dashes.
        # Used with `match` at each sentence's start in the folded text (no `^`: that
        # would only match at the start of the whole text).
        re.compile(rf"\W{{0,8}}+(?:{_alternation(text['connectives']).pattern})"),
    )


def _clamp(x: float) -> float:
    return min(max(x, 0.0), 1.0)


def mattr(tokens: list[str], window: int = MATTR_WINDOW) -> float:
    """Moving-average type-token ratio; the plain ratio when the text is shorter than a window."""
    if len(tokens) <= window:
        return len(set(tokens)) / len(tokens) if tokens else 1.0
    counts = Counter(tokens[:window])
    ratios = [len(counts) / window]
    for i in range(window, len(tokens)):
        counts[tokens[i]] += 1
        leaving = tokens[i - window]
        counts[leaving] -= 1
        if not counts[leaving]:
            del counts[leaving]
        ratios.append(len(counts) / window)
    return sum(ratios) / len(ratios)


def repeated_trigram_share(tokens: list[str]) -> float:
    """Share of word trigrams that occur more than once."""
    trigrams = list(zip(tokens, tokens[1:], tokens[2:], strict=False))
    if not trigrams:
        return 0.0
    counts = Counter(trigrams)
    return sum(c for c in counts.values() if c > 1) / len(trigrams)


def sentence_length_variation(lengths: list[int]) -> float:
    """Coefficient of variation of sentence lengths ("burstiness"); humans vary more."""
    if len(lengths) < 2 or not statistics.mean(lengths):
        return 0.0
    return statistics.pstdev(lengths) / statistics.mean(lengths)


def _statistical_signals(text: str, folded: str, tokens: list[str]) -> list[Signal]:
    # Sentences are read in the text folded once, by offsets: no copy per sentence.
    pieces = sentences(text)
    lengths = [word_count(folded, s.start, s.end) for s in pieces]
    cv = sentence_length_variation(lengths)
    diversity = mattr(tokens)
    repetition = repeated_trigram_share(tokens)
    connectives = _markers().connectives
    openers = sum(bool(connectives.match(folded, s.start, s.end)) for s in pieces)
    opener_share = openers / len(pieces) if pieces else 0.0
    return [
        # Human prose mixes short and long sentences (CV ~0.5+); generated prose is even.
        Signal("uniform_sentences", round(cv, 3), _clamp((0.55 - cv) / 0.35), 0.0),
        Signal(
            "low_lexical_diversity", round(diversity, 3), _clamp((0.85 - diversity) / 0.15), 0.0
        ),
        Signal("repetition", round(repetition, 3), _clamp(repetition / 0.15), 0.0),
        Signal(
            "connective_openers", round(opener_share, 3), _clamp((opener_share - 0.1) / 0.3), 0.0
        ),
    ]


def assess_machine_text(text: str) -> MachineTextReport:
    """Measure the signals of `text` and combine them into a probability.

    Signals are measured on the normalised text; phrase findings point at the original.
    """
    clean = normalise(text)
    text = clean.text
    tokens = words(text)
    folded = fold(text)
    own_words = _find(clean, folded, _markers().self_reference, "self_reference", 0.9)
    stock = _find(clean, folded, _markers().stock_phrases, "stock_phrase", 0.25)
    stock_strength = _clamp(len({f.text.lower() for f in stock}) / 3)
    signals = [Signal("stock_phrases", float(len(stock)), stock_strength, 0.0)]
    if len(tokens) >= MIN_WORDS_FOR_STATISTICS:
        signals += _statistical_signals(text, folded, tokens)
    signals = [Signal(s.name, s.value, round(s.strength, 3), WEIGHTS[s.name]) for s in signals]
    z = BIAS + sum(s.strength * s.weight for s in signals)
    probability = 1.0 / (1.0 + math.exp(-z))
    if own_words:
        probability = combine_probabilities([probability, SELF_REFERENCE_PROBABILITY])
    return MachineTextReport(
        round(probability, 3), tuple(signals), (*own_words, *stock), len(tokens)
    )


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
    strong = [s for s in report.signals if s.strength >= 0.5]
    summary = [f"{s.name.replace('_', ' ')} ({s.value:g})" for s in strong]
    summary += [f'{f.kind.replace("_", " ")}: "{clip(f.text, 50)}"' for f in report.phrases[:3]]
    return {
        "probability": report.probability,
        "word_count": report.word_count,
        "statistics_used": report.word_count >= MIN_WORDS_FOR_STATISTICS,
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
    "self reference": "formulă de asistent AI",
    "stock phrase": "formulă șablon",
}


def _ro(item: str) -> str:
    for en, ro in _RO_NAMES.items():
        if item.startswith(en):
            return ro + item[len(en) :]
    return item
