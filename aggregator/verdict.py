"""The verdict: a pure function of the component outcomes (docs/architecture.md §5).

Each component's score is turned into a calibrated probability that it found a real risk,
scaled by the component's weight and by the evidence behind it; the probabilities combine
as a noisy-OR, so one strong component carries the verdict and weak signals add up, while
a component that found nothing never pulls the others down. docs/analysis.md, "The
verdict", gives the reasoning and the measured effect.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

# Upper bounds (exclusive) of each label's score band; the last label takes the rest.
LABEL_BANDS: tuple[tuple[float, str], ...] = (
    (25.0, "low_risk"),
    (50.0, "moderate_risk"),
    (75.0, "high_risk"),
)
TOP_LABEL = "critical_risk"
NO_EVIDENCE_LABEL = "inconclusive"

# Score → probability: a logistic curve, rescaled so that a score at or under the noise
# floor (the bottom of the analysers' own low band) is exactly 0: analysers idle at 5-15
# on harmless text, and four of those must never add up to a warning. The midpoint sits at
# the analysers' flag threshold (50): a component at 40 alone stays `low_risk`, two or three
# of them together warn. It sat at 38 until round 25 of issue 19, when texts nobody tuned
# for still mostly scored 30-50 where a reviewer flagged them. Measured then on 1,680 texts
# held out from the learned models (scripts/study_verdict_calibration.py), 50 put 18 more
# verdicts right than 38 (1514 against 1496; 46: 1512), most of them honest texts one weak
# cue had made `moderate_risk`.
NOISE_FLOOR = 25.0
CALIBRATION_MIDPOINT = 50.0
CALIBRATION_SCALE = 10.0
# The confidence's hints keep the curve of before: a score under the midpoint above still
# makes a `low_risk` verdict less sure (decidedness, below).
HINT_MIDPOINT = 38.0

# How much of its probability a component keeps with this many findings behind the score.
# A high score with no finding at all is an analyser's guess; unknown (None, results from
# before analysers counted their findings) is taken at face value.
NO_EVIDENCE_FACTOR = 0.5
ONE_FINDING_FACTOR = 0.9

# A component with nothing to judge (no URL for domain, no claim for claims) answered, but
# its "nothing found" says less about the text than a real look: it counts for this share
# of its weight in the coverage behind the confidence.
NOT_APPLICABLE_COVERAGE = 0.85

# Confidence = coverage × (FLOOR + (1 - FLOOR) × how decided the answers are); a verdict
# with every component in but sitting on the fence keeps this much.
CONFIDENCE_FLOOR = 0.4
# A risky verdict carried by a single component keeps this share of its decidedness: one
# strong component decides the label, two that agree make it surer.
LONE_COMPONENT_SHARE = 0.75


@dataclass(frozen=True)
class ComponentOutcome:
    """One component's contribution: status ok / failed / timeout, its score when ok,
    whether the input had anything for it to judge, and how many findings back the score
    (None: not reported)."""

    status: str
    score: float | None = None
    applicable: bool = True
    evidence: int | None = None

    @property
    def succeeded(self) -> bool:
        return self.status == "ok" and self.score is not None


@dataclass(frozen=True)
class Verdict:
    score: float | None
    label: str
    confidence: float
    session_status: str  # completed | partial | failed


def label_for(score: float) -> str:
    """The label of a 0-100 risk score."""
    for upper, label in LABEL_BANDS:
        if score < upper:
            return label
    return TOP_LABEL


def outcome_of(result: Mapping[str, Any]) -> ComponentOutcome:
    """A stored component result (status, score, data) as the verdict's input.

    The analysers put `applicable` and `evidence_count` in their data; results without them
    (older workers) count as applicable with unknown evidence.
    """
    data = result.get("data") or {}
    evidence = data.get("evidence_count")
    return ComponentOutcome(
        result["status"],
        result.get("score"),
        applicable=bool(data.get("applicable", True)),
        evidence=int(evidence) if isinstance(evidence, int | float) else None,
    )


def calibrated(score: float) -> float:
    """The probability that a component scoring `score` found a real risk; 0 at or under
    the noise floor."""
    floor = _logistic(NOISE_FLOOR, CALIBRATION_MIDPOINT)
    return max(0.0, (_logistic(score, CALIBRATION_MIDPOINT) - floor) / (1.0 - floor))


def hinted(score: float) -> float:
    """How much a score hints at a risk, for the confidence: the logistic curve at the
    hints' own midpoint (HINT_MIDPOINT), without the noise floor (hints under the floor
    never raise the score, but they do make a "low" less sure)."""
    return _logistic(score, HINT_MIDPOINT)


def _logistic(score: float, midpoint: float) -> float:
    return 1.0 / (1.0 + math.exp(-(score - midpoint) / CALIBRATION_SCALE))


def evidence_factor(evidence: int | None) -> float:
    """How much of its probability a score keeps given the findings behind it."""
    if evidence is None or evidence >= 2:
        return 1.0
    return ONE_FINDING_FACTOR if evidence == 1 else NO_EVIDENCE_FACTOR


def relative_weights(names: list[str], weights: Mapping[str, float]) -> dict[str, float]:
    """Each component's weight over the heaviest one; all zero (or none) means all equal."""
    heaviest = max((weights.get(c, 0.0) for c in names), default=0.0)
    if heaviest <= 0:
        return dict.fromkeys(names, 1.0)
    return {c: weights.get(c, 0.0) / heaviest for c in names}


def risk_of(
    outcome: ComponentOutcome, weight: float, calibration: Callable[[float], float] | None = None
) -> float:
    """A succeeded component's contribution to the noisy-OR: its calibrated probability,
    scaled by its relative weight and its evidence. Nothing to judge contributes nothing."""
    if not outcome.applicable or outcome.score is None:
        return 0.0
    believed = (calibration or calibrated)(outcome.score) * evidence_factor(outcome.evidence)
    # The weight counts as a number of independent looks: weight 1 keeps the probability,
    # weight 0.5 is half a look (1 - sqrt(1 - p)), weight 0 never finds anything.
    return 1.0 - (1.0 - believed) ** weight


def combine(risks: Mapping[str, float]) -> float:
    """Noisy-OR: the chance that at least one component's finding is real."""
    return 1.0 - math.prod(1.0 - r for r in risks.values())


def coverage(outcomes: Mapping[str, ComponentOutcome], relative: Mapping[str, float]) -> float:
    """The share of the total weight that looked at the text; failed components look at
    nothing, components with nothing to judge count a little less than a full look."""
    total = sum(relative.values())
    if total <= 0:
        return 0.0
    seen = sum(
        relative[c] * (1.0 if o.applicable else NOT_APPLICABLE_COVERAGE)
        for c, o in outcomes.items()
        if o.succeeded
    )
    return seen / total


def decidedness(hints: float, at_risk: int, missing: bool, risky: bool) -> float:
    """How clearly the evidence points the way the label does, 0-1: the distance of the
    combined hints from the fence (0.5) on the label's side; hints on the other side leave
    it undecided (a `low_risk` verdict whose hints lean risky is not sure of itself, and
    grows less sure as they grow).

    Any one component can carry the verdict, so a session missing one (with a weight) is
    not decided on the safe side at all: the missing component alone might have found the
    risk. On the risky side a missing one changes nothing. A risky side with fewer than two
    components at risk is decided less surely than one that two components agree on.
    """
    if not risky:
        return 0.0 if missing else max(0.0, 1.0 - 2.0 * hints)
    base = max(0.0, 2.0 * hints - 1.0)
    return base * LONE_COMPONENT_SHARE if at_risk < 2 else base


def compute(outcomes: Mapping[str, ComponentOutcome], weights: Mapping[str, float]) -> Verdict:
    """The verdict of a session from its component outcomes and the configured weights.

    Score: 100 × noisy-OR of the calibrated, weighted, evidence-scaled probabilities of the
    components that succeeded and had something to judge. Confidence: the coverage of the
    weight that looked, times how decided the evidence is, sub-floor hints included.
    No successful component: no score, `inconclusive`, session failed.
    """
    ok = {c: o for c, o in outcomes.items() if o.succeeded}
    if not ok:
        return Verdict(None, NO_EVIDENCE_LABEL, 0.0, "failed")
    relative = relative_weights(list(outcomes), weights)
    risks = {c: risk_of(o, relative[c]) for c, o in ok.items()}
    combined = combine(risks)
    score = 100.0 * combined
    hints = combine({c: risk_of(o, relative[c], hinted) for c, o in ok.items()})
    at_risk = sum(1 for r in risks.values() if r >= 0.5)
    missing = any(relative[c] > 0 for c, o in outcomes.items() if not o.succeeded)
    label = label_for(score)
    decided = decidedness(hints, at_risk, missing, risky=label != LABEL_BANDS[0][1])
    confidence = coverage(outcomes, relative) * (
        CONFIDENCE_FLOOR + (1.0 - CONFIDENCE_FLOOR) * decided
    )
    status = "completed" if len(ok) == len(outcomes) else "partial"
    return Verdict(round(score, 2), label, round(confidence, 3), status)
