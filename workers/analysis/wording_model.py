"""A learned model of manipulative wording, applied without scikit-learn.

`scripts/train_text_model.py` fits a logistic regression on the hashed character n-grams
of the labelled development texts (`text_features`) and writes `data/wording_model.json`:
the intercept and one weight per slot, quantised to 16-bit integers. Here the same
features and a dot product give the probability that a text is worded like the texts
labelled as using manipulation techniques. Leave-one-batch-out, the model alone found
0.89-0.93 of the texts using techniques by writers it never saw (precision 0.91-0.98),
where the phrase rules, before they were tuned on those writers, found 0.51-0.67
(docs/analysis.md, "Learned wording"). Models of the same kind learn the claims label
(`claims_model.json`) and the ai_tampered label (`machine_text_model.json`, read as whole
words: docs/analysis.md, "Learned style").
"""

from __future__ import annotations

import base64
import math
import operator
import sys
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from shared.errors import DataFileError
from workers.analysis.datafiles import load_validated
from workers.analysis.lemmas import NUMBER
from workers.analysis.text_features import SharedWord, char_slots, slot_counts

MODEL_FILE = "wording_model.json"
# The same kind of model with the claims component's label: texts that assert a false,
# dubious or unverified claim (claims.py uses it beside the claim forms).
CLAIMS_MODEL_FILE = "claims_model.json"
# And with ai_tampered's: texts written by a machine (machine_text.py), read as whole words.
MACHINE_TEXT_MODEL_FILE = "machine_text_model.json"
# The cue's weight among the techniques findings grows from nothing at probability
# CUE_FROM to CUE_WEIGHT at 1 (one strong lexicon finding weighs about 0.3), and it counts
# beside lexicon evidence (techniques.py), alone only as `stands_alone` says: alone, the
# model also flags one-sentence neutral texts that share a family's words ("Your card
# expires in March", 0.84). Chosen leave-one-batch-out (docs/analysis.md, "Learned
# wording"): the most recall on the batch left out, at precision >= 0.9, with every
# neutral text of the unit tests staying low. Lowered from 1.2 in round 18: with the model
# trained without each of seven pairs of blind sets (840 texts), the pairs' techniques read
# 563 right, 31 false at 1.2 and 563 right, 27 false at 0.9 (25 false at 0.72, but 557 right).
CUE_FROM = 0.5
CUE_WEIGHT = 0.9
# Where the lexicon found nothing, the cue counts only from LONE_FROM (a score of 55: the
# model alone flags the text) in a text of LONE_MIN_WORDS words or more: the one- and
# two-sentence neutral texts that share a family's words ("Your card expires in March",
# 0.84; "Doctors won't tell you the results until the lab confirms them", 16 words, 1.00)
# stay low. Leave-one-batch-out on dev, every batch against the rules before it was tuned
# on (docs/analysis.md, "Learned wording"): techniques 0.97/0.87 (mean of seven batches)
# with the cue beside lexicon evidence only, 0.97/0.91 with it standing alone so,
# precision >= 0.93 on every batch. (From 15 words more, but six neutral texts of the unit
# tests were flagged.)
# (Words as the model reads them: "won't" is two, a quoted word counts.)
LONE_FROM = 0.8
LONE_MIN_WORDS = 25
# Shorter words ("it", "are") weigh too, but say nothing to a reader of the finding.
DISPLAY_MIN_LETTERS = 4
# Distinct words whose weight a process remembers (a few MB at most).
PUSH_MEMO_LIMIT = 50_000


class ReferenceText(BaseModel):
    """A text and the probability the training-time model gave it."""

    model_config = ConfigDict(extra="forbid")
    text: str
    probability: float = Field(ge=0, le=1)


class WordingModelFile(BaseModel):
    """The shape of `data/wording_model.json`."""

    model_config = ConfigDict(extra="forbid")
    about: str
    trained_on: str
    buckets: int = Field(gt=0)
    bias: float
    scale: float = Field(gt=0)
    weights: str  # base64 of `buckets` little-endian int16, times `scale`
    # The words the model reads: as their context leaves them (techniques.context_words) or
    # every word whole (text_features.whole_words).
    words: Literal["context", "whole"] = "context"
    reference: list[ReferenceText]


@dataclass(frozen=True)
class WordingModel:
    """Intercept and per-slot weights of the shipped model."""

    buckets: int
    bias: float
    weights: Sequence[float]
    # Each word's summed n-gram weight, remembered (bounded) for the finding's quote.
    _push: dict[str, float] = field(default_factory=dict, compare=False, repr=False)

    def probability(self, words: Sequence[SharedWord]) -> float:
        """The chance that a text of these words (as the model's file says it reads them:
        `techniques.context_words` or `text_features.whole_words`) has the model's label,
        0..1: the logistic of bias + weights · features."""
        counts = slot_counts(words, self.buckets)
        # map/sum run in C: a 5,000-character text has some 5,000 slots.
        values = list(map(math.log1p, counts.values()))
        dot = sum(map(operator.mul, map(self.weights.__getitem__, counts), values))
        square = sum(map(operator.mul, values, values))
        z = self.bias + (dot / math.sqrt(square) if square else 0.0)
        return 1.0 / (1.0 + math.exp(-max(min(z, 50.0), -50.0)))

    def strongest_words(self, words: Sequence[SharedWord], limit: int = 3) -> list[str]:
        """The `limit` words (DISPLAY_MIN_LETTERS or more) that count in their context and
        whose character n-grams weigh most towards manipulation."""
        shown = {w for w, share in words if share > 0}
        push = {w: self.push(w) for w in shown if len(w) >= DISPLAY_MIN_LETTERS and w != NUMBER}
        return sorted((w for w in push if push[w] > 0), key=lambda w: -push[w])[:limit]

    def push(self, word: str) -> float:
        """The sum of a word's n-gram weights: how far it alone moves the model."""
        found = self._push.get(word)
        if found is None:
            found = sum(self.weights[s] for s in char_slots(word, self.buckets))
            if len(self._push) < PUSH_MEMO_LIMIT:
                self._push[word] = found
        return found


def stands_alone(probability: float, word_count: int) -> bool:
    """Whether the cue counts in a text where the lexicon found nothing. Pure."""
    return probability >= LONE_FROM and word_count >= LONE_MIN_WORDS


def cue_weight(probability: float) -> float:
    """The learned cue's weight among the techniques findings: 0 up to CUE_FROM, then
    rising linearly to CUE_WEIGHT at 1."""
    rise = max(0.0, (probability - CUE_FROM) / (1.0 - CUE_FROM))
    return round(CUE_WEIGHT * min(rise, 1.0), 3)


def from_file(
    spec: WordingModelFile, name: str = MODEL_FILE, reads: str | None = None
) -> WordingModel:
    """The model a validated file describes (DataFileError if its weights do not fit, or if
    it reads words otherwise than `reads`, when given: a model trained on whole words and
    fed words in their context, or the other way round, gives wrong probabilities)."""
    if reads is not None and spec.words != reads:
        raise DataFileError(f"data file {name}: reads {spec.words!r} words, not {reads!r}")
    quantised = array("h")
    quantised.frombytes(base64.b64decode(spec.weights))
    if sys.byteorder != "little":
        quantised.byteswap()
    if len(quantised) != spec.buckets:
        raise DataFileError(f"data file {name}: {len(quantised)} weights, not {spec.buckets}")
    weights = array("d", (q * spec.scale for q in quantised))
    return WordingModel(spec.buckets, spec.bias, weights)


@cache
def shipped_model_file() -> WordingModelFile:
    return load_validated(MODEL_FILE, WordingModelFile)


@cache
def shipped_model() -> WordingModel:
    """The shipped model, read and validated once per process."""
    return from_file(shipped_model_file(), MODEL_FILE, reads="context")


@cache
def shipped_claims_model_file() -> WordingModelFile:
    return load_validated(CLAIMS_MODEL_FILE, WordingModelFile)


@cache
def shipped_claims_model() -> WordingModel:
    """The shipped claims model, read and validated once per process."""
    return from_file(shipped_claims_model_file(), CLAIMS_MODEL_FILE, reads="context")


@cache
def shipped_machine_text_model_file() -> WordingModelFile:
    return load_validated(MACHINE_TEXT_MODEL_FILE, WordingModelFile)


@cache
def shipped_machine_text_model() -> WordingModel:
    """The shipped model of machine-written texts, read and validated once per process."""
    return from_file(shipped_machine_text_model_file(), MACHINE_TEXT_MODEL_FILE, reads="whole")
