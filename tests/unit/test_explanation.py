"""The verdict explanation: deterministic, bilingual, citing each component's strongest findings."""

from aggregator.explanation import template_explanation

COMPONENTS = {
    "techniques": {
        "status": "ok",
        "score": 82.0,
        "data": {
            "summary": ['fear appeal: "copiii noștri"', 'urgency: "distribuiți"', "a", "b"],
            "summary_ro": ["apel la frică: „copiii noștri”", "urgență: „distribuiți”"],
        },
    },
    "ai_tampered": {"status": "ok", "score": 10.0, "data": {"summary": []}},
    "claims": {"status": "timeout", "score": None, "data": {}},
    "domain": {"status": "failed", "score": None, "data": {}},
}


def test_explanation_is_bilingual_and_cites_the_strongest_findings() -> None:
    """Both texts name the label, score and confidence and quote the top findings."""
    text = template_explanation("high_risk", 61.4, 0.5, COMPONENTS)
    assert text["en"].startswith("Verdict: high risk (risk 61/100, confidence 50%).")
    assert text["ro"].startswith("Verdict: risc ridicat (risc 61/100, încredere 50%).")
    assert 'fear appeal: "copiii noștri"' in text["en"]
    assert "apel la frică: „copiii noștri”" in text["ro"]
    assert "a; b" not in text["en"]  # at most three findings per component


def test_failed_and_timed_out_components_are_named() -> None:
    """Missing components are reported with the reason, not silently skipped."""
    text = template_explanation("high_risk", 61.4, 0.5, COMPONENTS)
    assert "Factual claims: not assessed (the analysis timed out)." in text["en"]
    assert "Surse și domenii: neevaluat (analiza a eșuat)." in text["ro"]
    assert "AI-generated or edited content — risk 10/100: nothing of concern found." in text["en"]


def test_explanation_does_not_depend_on_the_order_results_arrived_in() -> None:
    """The components' results arrive in any order (the fan-in records them as they come):
    the same verdict still gets the same words, components in their fixed order."""
    reversed_order = dict(reversed(list(COMPONENTS.items())))
    assert template_explanation("high_risk", 61.4, 0.5, reversed_order) == template_explanation(
        "high_risk", 61.4, 0.5, COMPONENTS
    )
    text = template_explanation("high_risk", 61.4, 0.5, reversed_order)["en"]
    assert text.index("Manipulation") < text.index("Factual claims") < text.index("Sources")


def test_unknown_labels_and_missing_score_are_handled() -> None:
    """An unknown label reads as itself; a verdict with no score says there is none."""
    assert "Verdict: very odd (risk" in template_explanation("very_odd", 40, 1.0, {})["en"]
    assert template_explanation("questionable", 40, 1.0, {})["ro"].startswith("Verdict: discutabil")
    none = template_explanation("inconclusive", None, 0.0, COMPONENTS)
    assert none["en"].startswith("No component produced a result")
