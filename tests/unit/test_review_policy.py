"""Which verdicts go to human review: the pure policy and the settings that build it."""

import pytest
from pydantic import ValidationError

from aggregator.verdict import LABEL_BANDS, NO_EVIDENCE_LABEL, TOP_LABEL, label_for
from shared.review_policy import (
    INCONCLUSIVE,
    LABEL_AT_LEAST,
    LOW_CONFIDENCE,
    NO_REVIEW,
    RISK_LABELS,
    ReviewPolicy,
    review_reasons,
)
from shared.settings import Settings

URLS = {"amqp_url": "amqp://x", "redis_url": "redis://x", "database_url": "postgresql://x"}


def test_the_risk_scale_is_the_verdicts_own_in_order():
    """The policy orders exactly the labels the verdict bands scores into, low to high."""
    assert (*(label for _, label in LABEL_BANDS), TOP_LABEL) == RISK_LABELS
    assert [label_for(s) for s in (0, 30, 60, 90)] == list(RISK_LABELS)
    assert INCONCLUSIVE == NO_EVIDENCE_LABEL


def test_nothing_is_reviewed_by_default():
    """No rule set: even a zero-confidence critical verdict is not queued."""
    assert not NO_REVIEW.enabled
    assert review_reasons(NO_REVIEW, 6, "critical_risk", 0.0) == []
    assert not Settings(**URLS).review_policy.enabled


def test_a_confidence_under_the_threshold_is_reviewed_on_every_plan():
    """Strictly under: a confidence equal to the threshold is not queued."""
    policy = ReviewPolicy(confidence_below=0.5)
    assert review_reasons(policy, 1, "low_risk", 0.49) == [LOW_CONFIDENCE]
    assert review_reasons(policy, 6, INCONCLUSIVE, 0.0) == [LOW_CONFIDENCE]
    assert review_reasons(policy, 6, "critical_risk", 0.5) == []


def test_a_label_at_or_above_the_floor_is_reviewed_on_the_listed_plans_only():
    """high_risk floor on plans 5 and 6: high and critical there; nothing on plan 4, nothing
    below the floor, and `inconclusive` is never on the scale."""
    policy = ReviewPolicy(label_at_least="high_risk", plans=frozenset({5, 6}))
    assert review_reasons(policy, 5, "high_risk", 0.9) == [LABEL_AT_LEAST]
    assert review_reasons(policy, 6, "critical_risk", 0.9) == [LABEL_AT_LEAST]
    assert review_reasons(policy, 6, "moderate_risk", 0.9) == []
    assert review_reasons(policy, 4, "critical_risk", 0.9) == []
    assert review_reasons(policy, 6, INCONCLUSIVE, 0.0) == []


def test_both_rules_give_both_reasons():
    """A verdict caught by both rules carries both reasons, confidence first."""
    policy = ReviewPolicy(0.6, "critical_risk", frozenset({6}))
    assert review_reasons(policy, 6, "critical_risk", 0.3) == [LOW_CONFIDENCE, LABEL_AT_LEAST]


def test_settings_build_the_policy_and_refuse_what_cannot_work():
    """REVIEW_* settings become the policy (plans default to all); an unknown label, a plan
    outside 1..6 or a threshold outside (0, 1] is refused at start-up."""
    built = Settings(**URLS, review_label_at_least="critical_risk", review_confidence_below=0.4)
    assert built.review_policy == ReviewPolicy(0.4, "critical_risk", frozenset(range(1, 7)))
    for bad in (
        {"review_label_at_least": "very_bad"},
        {"review_label_at_least": "inconclusive"},
        {"review_plans": [7]},
        {"review_confidence_below": 0},
        {"review_confidence_below": 1.5},
    ):
        with pytest.raises(ValidationError):
            Settings(**URLS, **bad)


def test_review_plans_read_from_the_environment_as_json(monkeypatch):
    """REVIEW_PLANS=[5, 6] in the environment: the label rule applies on those plans."""
    monkeypatch.setenv("REVIEW_PLANS", "[5, 6]")
    monkeypatch.setenv("REVIEW_LABEL_AT_LEAST", "high_risk")
    policy = Settings(**URLS).review_policy
    assert policy.plans == frozenset({5, 6}) and policy.label_at_least == "high_risk"


def test_a_copy_of_the_settings_has_its_own_policy():
    """A copy with another REVIEW_* value reviews by that value, not the original's."""
    original = Settings(**URLS, review_confidence_below=0.3)
    assert original.review_policy.confidence_below == 0.3
    copied = original.model_copy(update={"review_confidence_below": 0.7})
    assert copied.review_policy.confidence_below == 0.7
