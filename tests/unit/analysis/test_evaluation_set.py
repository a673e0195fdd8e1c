"""The labelled evaluation set keeps its size and the analyzers keep their measured quality."""

import json
import re
from pathlib import Path

from scripts.evaluate import TEXTS, evaluate

README = Path(__file__).resolve().parents[3] / "README.md"
_ROW = re.compile(
    r"^\| (techniques|ai_tampered|claims|domain) \| ([01]\.\d\d) \| ([01]\.\d\d) \|$", re.M
)
_AGREEMENT = re.compile(r"Verdict agreement (\d+)/(\d+)")


def published() -> tuple[dict[str, tuple[str, str]], tuple[int, int]]:
    """The README's precision/recall table and verdict agreement of the evaluation set."""
    text = README.read_text(encoding="utf-8")
    rows = {name: (precision, recall) for name, precision, recall in _ROW.findall(text)}
    agreed = _AGREEMENT.search(text)
    assert agreed, "the README states no verdict agreement"
    return rows, (int(agreed[1]), int(agreed[2]))


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


def test_the_readme_states_what_the_analyzers_measure_now() -> None:
    """The README's precision, recall and verdict agreement are today's figures, to the
    hundredth: a change to the analysers that moves them must move the README with them."""
    items = _items()
    result = evaluate(items, threshold=50.0)
    rows, agreement = published()
    measured = {
        name: (f"{tally.precision:.2f}", f"{tally.recall:.2f}")
        for name, tally in result["tallies"].items()
    }
    assert measured == rows
    verdict = result["verdict"]
    assert (verdict.tp + verdict.tn, len(items)) == agreement
