"""The verdict: a pure function of the component outcomes (SPEC §7)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

# Upper bounds (exclusive) of each label's score band; the last label takes the rest.
LABEL_BANDS: tuple[tuple[float, str], ...] = (
    (25.0, "low_risk"),
    (50.0, "moderate_risk"),
    (75.0, "high_risk"),
)
TOP_LABEL = "critical_risk"
NO_EVIDENCE_LABEL = "inconclusive"


@dataclass(frozen=True)
class ComponentOutcome:
    """One component's contribution: status ok / failed / timeout and its score when ok."""

    status: str
    score: float | None = None

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


def compute(outcomes: Mapping[str, ComponentOutcome], weights: Mapping[str, float]) -> Verdict:
    """Weighted mean over the components that succeeded, weights renormalised.

    Confidence is the share of the total weight that succeeded, so it falls with every
    missing component. A session with no successful component has no score.
    """
    total = sum(weights.get(c, 0.0) for c in outcomes)
    ok = {c: o.score for c, o in outcomes.items() if o.succeeded}
    if not ok:
        return Verdict(None, NO_EVIDENCE_LABEL, 0.0, "failed")
    ok_weight = sum(weights.get(c, 0.0) for c in ok)
    if ok_weight > 0:
        score = sum(weights.get(c, 0.0) * s for c, s in ok.items() if s is not None) / ok_weight
    else:  # every weight that succeeded is zero: fall back to a plain mean
        score = sum(s for s in ok.values() if s is not None) / len(ok)
    confidence = ok_weight / total if total > 0 else len(ok) / len(outcomes)
    status = "completed" if len(ok) == len(outcomes) else "partial"
    return Verdict(round(score, 2), label_for(score), round(confidence, 3), status)
