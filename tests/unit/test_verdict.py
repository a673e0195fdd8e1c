"""The verdict: weighted mean, renormalised weights, labels and falling confidence."""

import pytest

from aggregator.verdict import ComponentOutcome, compute, label_for

WEIGHTS = {"techniques": 0.3, "ai_tampered": 0.2, "claims": 0.3, "domain": 0.2}


def ok(score: float) -> ComponentOutcome:
    return ComponentOutcome("ok", score)


def test_all_components_give_the_weighted_mean_with_full_confidence():
    """Every component in: completed, weighted mean, confidence 1."""
    v = compute(
        {"techniques": ok(80), "ai_tampered": ok(20), "claims": ok(60), "domain": ok(0)}, WEIGHTS
    )
    assert v.score == pytest.approx(0.3 * 80 + 0.2 * 20 + 0.3 * 60)
    assert (v.label, v.confidence, v.session_status) == ("moderate_risk", 1.0, "completed")


def test_missing_components_renormalise_weights_and_lower_confidence():
    """A failed component drops out of the mean; confidence is the weight that remains."""
    v = compute(
        {
            "techniques": ok(80),
            "ai_tampered": ComponentOutcome("failed"),
            "claims": ok(80),
            "domain": ComponentOutcome("timeout"),
        },
        WEIGHTS,
    )
    assert v.score == 80
    assert v.confidence == pytest.approx(0.6)
    assert v.session_status == "partial"


def test_no_successful_component_fails_the_session_without_a_score():
    """Nothing to judge: failed, inconclusive, confidence 0."""
    v = compute({c: ComponentOutcome("failed") for c in WEIGHTS}, WEIGHTS)
    assert (v.score, v.label, v.confidence, v.session_status) == (
        None,
        "inconclusive",
        0.0,
        "failed",
    )


def test_zero_weights_fall_back_to_a_plain_mean():
    """Weights configured to zero still give a score from what succeeded."""
    v = compute({"techniques": ok(40), "domain": ok(60)}, {"techniques": 0, "domain": 0})
    assert v.score == 50


@pytest.mark.parametrize(
    ("score", "label"),
    [
        (0, "low_risk"),
        (24.99, "low_risk"),
        (25, "moderate_risk"),
        (50, "high_risk"),
        (75, "critical_risk"),
        (100, "critical_risk"),
    ],
)
def test_labels_follow_the_thresholds(score, label):
    """Band edges belong to the higher band."""
    assert label_for(score) == label
