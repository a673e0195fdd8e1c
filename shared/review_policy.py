"""Which verdicts a person reviews: a pure function of the verdict, its plan and the policy.

The fan-in asks it for every verdict it writes and queues those it gives reasons for
(shared/reviews.py), in the same statement.
"""

from __future__ import annotations

from dataclasses import dataclass

# The risk labels from least to most severe (aggregator/verdict.py bands them by score).
# `inconclusive`, the label of a session with no successful component, is outside the scale:
# it is never "at or above" anything, though its zero confidence queues it when the
# confidence rule is on.
RISK_LABELS: tuple[str, ...] = ("low_risk", "moderate_risk", "high_risk", "critical_risk")
INCONCLUSIVE = "inconclusive"
# What a reviewer may set a verdict's label to.
LABELS: tuple[str, ...] = (*RISK_LABELS, INCONCLUSIVE)

LOW_CONFIDENCE = "low_confidence"
LABEL_AT_LEAST = "label_at_least"


@dataclass(frozen=True)
class ReviewPolicy:
    """Queue a verdict whose confidence is under `confidence_below`, or whose label is at or
    above `label_at_least` on one of `plans` (None: that rule is off)."""

    confidence_below: float | None = None
    label_at_least: str | None = None
    plans: frozenset[int] = frozenset()

    @property
    def enabled(self) -> bool:
        return self.confidence_below is not None or self.label_at_least is not None


# Nothing is reviewed.
NO_REVIEW = ReviewPolicy()


def review_reasons(policy: ReviewPolicy, plan: int, label: str, confidence: float) -> list[str]:
    """Why this verdict goes to review, in a stable order; empty when it does not."""
    reasons = []
    if policy.confidence_below is not None and confidence < policy.confidence_below:
        reasons.append(LOW_CONFIDENCE)
    if (
        policy.label_at_least is not None
        and plan in policy.plans
        and _at_least(label, policy.label_at_least)
    ):
        reasons.append(LABEL_AT_LEAST)
    return reasons


def _at_least(label: str, floor: str) -> bool:
    if label not in RISK_LABELS:
        return False
    return RISK_LABELS.index(label) >= RISK_LABELS.index(floor)
