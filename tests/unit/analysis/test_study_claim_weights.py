"""The claims-weights study reads a text's claims once and decides, for any weights, what
the claims analyser would decide with them."""

from __future__ import annotations

import itertools

from scripts.study_claim_weights import ReadClaim, ReadText, fit, flagged, read_texts, tally
from scripts.train_text_model import read_dev
from workers.analysis import claims
from workers.analysis.claim_forms import claims_spec
from workers.analysis.factcheck_store import read_fact_checks
from workers.analysis.wording_model import shipped_claims_model

RULE = claims_spec().risk
WEIGHTS = {"plot": 0.5, "causal": 0.2, "viral_sources": 0.4, "hedges": -0.2}
LEARNED = {"learned_wording": 0.5, "learned_claim": 0.5}


def _claim(*features: str, supportable: bool = False, rated: float | None = None) -> ReadClaim:
    return ReadClaim(tuple(features), supportable, rated)


def test_a_claim_is_risky_from_risky_from_and_a_rating_decides_alone() -> None:
    weights = {**WEIGHTS, **LEARNED}
    assert flagged(ReadText((_claim("plot"),), None, True), weights, RULE)
    assert not flagged(ReadText((_claim("causal"),), None, True), weights, RULE)
    assert flagged(ReadText((_claim("causal", rated=90.0),), None, True), weights, RULE)
    assert not flagged(ReadText((_claim("plot", rated=0.0),), None, True), weights, RULE)


def test_the_model_supports_only_a_claim_its_forms_make_somewhat_risky() -> None:
    weights = {**WEIGHTS, **LEARNED, "faint": 0.1}
    # causal (0.2) reaches learned_beside (15): supported, 0.7.
    assert flagged(ReadText((_claim("causal", supportable=True),), None, True), weights, RULE)
    # faint (0.1) does not: the model's support is not given.
    assert not flagged(ReadText((_claim("faint", supportable=True),), None, True), weights, RULE)


def test_the_models_own_claim_counts_only_where_no_claim_of_the_forms_is_risky() -> None:
    weights = {**WEIGHTS, **LEARNED}
    learned = _claim("learned_claim")
    assert flagged(ReadText((_claim("causal"),), learned, True), weights, RULE)
    # A hedge on the model's claim takes it under risky_from.
    hedged = _claim("hedges", "learned_claim")
    assert not flagged(ReadText((_claim("causal"),), hedged, True), weights, RULE)


def test_the_fit_keeps_each_weights_sign_and_does_not_lose_f1() -> None:
    texts = [
        ReadText((_claim("viral_sources", "causal"),), None, False),
        ReadText((_claim("viral_sources", "causal"),), None, False),
        ReadText((_claim("viral_sources", "plot"),), None, True),
        ReadText((_claim("plot", "hedges"),), None, True),
    ]
    start = {**WEIGHTS, **LEARNED}
    fitted = fit(texts, start, 0.0)
    assert all(fitted[k] * start[k] >= 0 for k in start)
    assert tally(texts, fitted) == (2, 0, 0)
    assert tally(texts, start)[1] == 2  # the shipped weights flag the two honest texts


def test_the_study_decides_as_the_analyser_on_dev_texts() -> None:
    items = list(itertools.islice(read_dev(), 0, None, 37))
    checks = [c.model_dump() for c in read_fact_checks()]
    model = shipped_claims_model()
    weights = dict(RULE.weights)
    for item, read in zip(items, read_texts(items, model, checks), strict=True):
        found = claims.extract_claims(item["text"], learned=model)
        expected = claims.score_claims(found, claims.match_locally(found, checks)) >= 50
        assert flagged(read, weights, RULE) == expected, item["id"]
