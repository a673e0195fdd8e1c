"""The verdict combines evidence: properties of the score, the label and the confidence."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aggregator.verdict import ComponentOutcome, compute, label_for, outcome_of

WEIGHTS = {"techniques": 0.3, "ai_tampered": 0.2, "claims": 0.3, "domain": 0.2}
COMPONENTS = tuple(WEIGHTS)
RISKY = ("high_risk", "critical_risk")

scores = st.floats(min_value=0, max_value=100, allow_nan=False)
evidence = st.one_of(st.none(), st.integers(min_value=0, max_value=20))
outcome = st.builds(ComponentOutcome, st.just("ok"), scores, st.booleans(), evidence)
sessions = st.fixed_dictionaries({c: outcome for c in COMPONENTS})


def ok(score: float, **kw) -> ComponentOutcome:
    return ComponentOutcome("ok", score, **kw)


def only(component: str, score: float, **kw) -> dict[str, ComponentOutcome]:
    """One component at `score`, the others answered with nothing found."""
    return {c: ok(score, **kw) if c == component else ok(0) for c in COMPONENTS}


@given(sessions, st.sampled_from(COMPONENTS), scores, scores)
def test_the_score_never_falls_when_one_component_rises(session, component, a, b):
    """Monotone in every component: more risk in one place never lowers the verdict."""
    was = session[component]
    low, high = (ComponentOutcome("ok", s, was.applicable, was.evidence) for s in sorted((a, b)))
    lower = compute({**session, component: low}, WEIGHTS).score
    assert compute({**session, component: high}, WEIGHTS).score >= lower


@pytest.mark.parametrize("component", COMPONENTS)
@pytest.mark.parametrize("score", [80, 90, 100])
@pytest.mark.parametrize("findings", [1, 3, None])
def test_one_strong_component_with_evidence_carries_the_verdict(component, score, findings):
    """A single component at ≥ 80 with findings behind it gives at least high_risk, whatever
    the others (near zero) say — the case the weighted mean diluted to moderate_risk."""
    verdict = compute(only(component, score, evidence=findings), WEIGHTS)
    assert verdict.label in RISKY


def test_a_strong_component_weighted_two_fifths_of_the_heaviest_still_warns():
    """The documented floor (docs/analysis.md, "The verdict"): at 80 with one finding, a
    component weighted 0.4 of the heaviest reaches high_risk; at a quarter it does not."""
    weights = {"techniques": 1.0, "ai_tampered": 1.0, "claims": 1.0}
    heavy = compute(only("domain", 80, evidence=1), {**weights, "domain": 0.4})
    light = compute(only("domain", 80, evidence=1), {**weights, "domain": 0.25})
    assert heavy.label in RISKY
    assert light.label not in RISKY


def test_the_issue_case_of_techniques_83_alone_is_high_risk_and_not_certain():
    """Techniques 83 and nothing else: a risky label, and less than full confidence because
    no second component agrees."""
    alone = compute(only("techniques", 83, evidence=4), WEIGHTS)
    corroborated = compute(
        {**only("techniques", 83, evidence=4), "claims": ok(75, evidence=2)}, WEIGHTS
    )
    assert alone.label in RISKY
    assert alone.confidence < 0.85 < corroborated.confidence


@given(st.fixed_dictionaries({c: scores.filter(lambda s: s < 25) for c in COMPONENTS}))
def test_all_components_low_give_low_risk(low):
    """Every component in its own low band (under 25): low_risk."""
    verdict = compute({c: ok(s) for c, s in low.items()}, WEIGHTS)
    assert verdict.label == "low_risk"


def test_several_weak_signals_add_up():
    """Three components each too weak to warn alone warn together (at 35, under the flag
    threshold and the calibration's midpoint, 50)."""
    one = compute(only("techniques", 35), WEIGHTS)
    three = compute(
        {"techniques": ok(35), "claims": ok(35), "domain": ok(35), "ai_tampered": ok(0)}, WEIGHTS
    )
    assert one.label == "low_risk"
    assert three.label != "low_risk"


@given(sessions, st.sampled_from(COMPONENTS))
def test_nothing_to_judge_never_lowers_the_score(session, component):
    """A component with nothing applicable (no URL, no claim) counts like a component that
    was never asked, whatever score it sent: it does not pull the score down (nor up)."""
    without = {c: o for c, o in session.items() if c != component}
    idle = {**without, component: ComponentOutcome("ok", session[component].score, False)}
    assert compute(idle, WEIGHTS).score == pytest.approx(compute(without, WEIGHTS).score)


def test_nothing_to_judge_lowers_confidence_only_a_little():
    """No URL and no claim: the confidence drops, but by less than a failed component."""
    looked = {c: ok(0) for c in COMPONENTS}
    idle = {**looked, "domain": ok(0, applicable=False), "claims": ok(0, applicable=False)}
    failed = {**looked, "domain": ComponentOutcome("failed"), "claims": ComponentOutcome("failed")}
    full, partial, missing = (compute(s, WEIGHTS) for s in (looked, idle, failed))
    assert full.confidence > partial.confidence >= 0.85 * full.confidence
    assert partial.confidence > missing.confidence
    assert (partial.score, partial.label) == (full.score, full.label)


@given(sessions, st.sampled_from(COMPONENTS))
def test_a_failed_component_lowers_confidence_and_makes_the_session_partial(session, component):
    """Losing a component never raises the confidence; the session is partial."""
    failed = {**session, component: ComponentOutcome("timeout")}
    verdict = compute(failed, WEIGHTS)
    assert verdict.session_status == "partial"
    assert verdict.confidence <= compute(session, WEIGHTS).confidence + 1e-9


def test_confidence_falls_with_every_missing_component():
    """Clear answers from fewer components: less confidence each time."""
    session = {c: ok(0) for c in COMPONENTS}
    confidences = []
    for missing in range(len(COMPONENTS)):
        lost = {c: ComponentOutcome("failed") for c in COMPONENTS[:missing]}
        confidences.append(compute({**session, **lost}, WEIGHTS).confidence)
    assert confidences == sorted(confidences, reverse=True)
    assert len(set(confidences)) == len(confidences)


def test_a_verdict_on_the_fence_is_less_confident_than_a_clear_one():
    """Confidence reflects the evidence: a borderline score is less sure than a clear one."""
    fence = compute(only("techniques", 40), WEIGHTS)
    clear = compute(only("techniques", 95, evidence=5), WEIGHTS)
    assert fence.confidence < clear.confidence


def test_hints_under_the_noise_floor_leave_the_score_but_make_a_low_verdict_less_sure():
    """Four components just under their low band: still 0 and low_risk, like four clean
    answers, but far less confident."""
    clean = compute({c: ok(0) for c in COMPONENTS}, WEIGHTS)
    hinted = compute({c: ok(24) for c in COMPONENTS}, WEIGHTS)
    assert (hinted.score, hinted.label) == (clean.score, clean.label) == (0, "low_risk")
    assert hinted.confidence < clean.confidence - 0.3


@pytest.mark.parametrize("component", COMPONENTS)
def test_a_low_verdict_grows_less_sure_as_one_component_s_score_rises(component):
    """While the label stays low_risk, a higher score never makes it surer (round 25's
    review: with the hints' own curve, a low verdict whose hints leaned risky grew surer)."""
    lows = [compute(only(component, s), WEIGHTS) for s in range(0, 101)]
    confidences = [v.confidence for v in lows if v.label == "low_risk"]
    assert len(confidences) > 20
    assert confidences == sorted(confidences, reverse=True)


def test_a_high_score_without_findings_counts_less_than_one_with_findings():
    """A score with no finding behind it is an analyser's guess: it weighs less."""
    guessed = compute(only("techniques", 85, evidence=0), WEIGHTS)
    found = compute(only("techniques", 85, evidence=3), WEIGHTS)
    assert guessed.score < found.score


def test_weights_scale_a_component_and_zero_silences_it():
    """Weights matter: the same score counts for more in a heavier component, and a
    component weighted 0 adds nothing."""
    heavy = compute(only("techniques", 60), WEIGHTS)
    light = compute(only("techniques", 60), {**WEIGHTS, "techniques": 0.1})
    silenced = compute(only("techniques", 60), {**WEIGHTS, "techniques": 0.0})
    assert heavy.score > light.score > silenced.score == 0


def test_all_zero_weights_count_every_component_alike():
    """Weights configured to zero everywhere still give a verdict from what succeeded."""
    zero = dict.fromkeys(COMPONENTS, 0.0)
    verdict = compute(only("domain", 90), zero)
    assert verdict.label in RISKY
    assert verdict.score == compute(only("techniques", 90), zero).score


def test_no_successful_component_fails_the_session_without_a_score():
    """Nothing to judge: failed, inconclusive, confidence 0."""
    v = compute({c: ComponentOutcome("failed") for c in WEIGHTS}, WEIGHTS)
    assert (v.score, v.label, v.confidence, v.session_status) == (
        None,
        "inconclusive",
        0.0,
        "failed",
    )


def test_a_stored_result_reads_applicability_and_evidence_from_its_data():
    """The fan-in's input: `applicable` and `evidence_count` from the result data; an older
    result without them is applicable with unknown evidence."""
    new = outcome_of(
        {"status": "ok", "score": 0.0, "data": {"applicable": False, "evidence_count": 0}}
    )
    old = outcome_of({"status": "ok", "score": 40.0, "data": {"findings": []}})
    bare = outcome_of({"status": "failed", "score": None})
    assert (new.applicable, new.evidence) == (False, 0)
    assert (old.applicable, old.evidence, old.score) == (True, None, 40.0)
    assert (bare.succeeded, bare.applicable) == (False, True)


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
