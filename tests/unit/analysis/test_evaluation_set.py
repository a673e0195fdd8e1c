"""The labelled evaluation set keeps its size and the analyzers keep their measured quality."""

import json

from scripts.evaluate import TEXTS, evaluate

# Floors a little under the figures recorded in docs/analysis.md: a lexicon or
# threshold change that loses more than this is a regression to look at.
MIN_PRECISION = 0.9
MIN_RECALL = {"techniques": 0.8, "ai_tampered": 0.9, "claims": 0.75, "domain": 0.7}
MIN_VERDICT_AGREEMENT = 0.75


def _items() -> list[dict]:
    return [json.loads(line) for line in TEXTS.read_text(encoding="utf-8").splitlines() if line]


def test_evaluation_set_has_forty_labelled_texts_in_both_languages() -> None:
    """At least 40 texts, both languages, every component labelled high or low."""
    items = _items()
    assert len(items) >= 40
    assert {i["lang"] for i in items} == {"ro", "en"}
    for item in items:
        assert set(item["expected"].values()) <= {"high", "low"}
        assert item["verdict"] in {"elevated", "low"}


def test_analyzers_keep_their_precision_recall_and_verdict_agreement() -> None:
    """Per-component precision and recall and the verdict agreement stay above their floors."""
    items = _items()
    result = evaluate(items, threshold=50.0)
    for name, tally in result["tallies"].items():
        assert tally.precision >= MIN_PRECISION, name
        assert tally.recall >= MIN_RECALL[name], name
    verdict = result["verdict"]
    assert (verdict.tp + verdict.tn) / len(items) >= MIN_VERDICT_AGREEMENT
