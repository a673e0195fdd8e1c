"""The labelled evaluation set: its shape, its frozen test part, and the published figures."""

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from scripts import evaluate as ev
from shared.errors import EvaluationSetChanged

ROOT = Path(__file__).resolve().parents[3]
README = ROOT / "README.md"
_FIGURE = r"([01]\.\d\d)"
_ROW = re.compile(
    rf"^\| (techniques|ai_tampered|claims|domain) \| {_FIGURE} \| {_FIGURE} \| {_FIGURE} \|$", re.M
)
_RIGHT = re.compile(r"Grade right on dev: (\d+)/(\d+)")


@cache
def dev_result() -> dict[str, Any]:
    return ev.evaluate(ev.read_items(ev.DEV))


def test_the_set_has_240_texts_half_romanian_half_english_all_labelled():
    """At least 240 texts over both parts, as many Romanian as English, each with a category,
    a low/high label per component and a low/medium/high grade; ids unique across parts."""
    dev, test = ev.read_items(ev.DEV), ev.read_items(ev.TEST)
    items = dev + test
    assert len(items) >= 240
    assert sum(i["lang"] == "ro" for i in items) == sum(i["lang"] == "en" for i in items)
    assert len({i["id"] for i in items}) == len(items)
    for item in items:
        assert item["category"] and item["text"]
        assert set(item["expected"]) == {"techniques", "ai_tampered", "claims", "domain"}
        assert set(item["expected"].values()) <= {"high", "low"}
        assert item["verdict"] in ev.GRADES


def test_the_test_part_is_stratified_by_language_and_category():
    """Every language × category with five or more texts has some in each part, and the
    test part holds its 105 texts: it was cut at 40 % and is frozen, so texts written later
    (the 84 of issue 19, the fourteen blind sets of 120) grow dev only and lower its share (5.2 %
    of 2,022 after round 9); every category keeps texts in it."""
    dev, test = ev.read_items(ev.DEV), ev.read_items(ev.TEST)
    assert len(test) == 105
    assert len(dev) > len(test)
    cells = {(i["lang"], i["category"]) for i in dev + test}
    for cell in cells:
        in_dev = sum((i["lang"], i["category"]) == cell for i in dev)
        in_test = sum((i["lang"], i["category"]) == cell for i in test)
        if in_dev + in_test >= 5:
            assert in_dev and in_test, cell


def test_the_test_part_matches_its_recorded_hash():
    """test.jsonl is frozen: its SHA-256 is the one in test.sha256."""
    assert ev.digest(ev.TEST) == ev.TEST_HASH.read_text(encoding="utf-8").split()[0]


def test_an_edited_test_part_is_refused(tmp_path):
    """One changed byte in the test part and it is no longer read."""
    edited = tmp_path / "test.jsonl"
    edited.write_bytes(ev.TEST.read_bytes().replace(b'"low"', b'"high"', 1))
    with pytest.raises(EvaluationSetChanged):
        ev.frozen_test_items(edited, ev.TEST_HASH)
    assert ev.frozen_test_items(ev.TEST, ev.TEST_HASH)


def test_the_command_refuses_to_report_an_edited_test_part(tmp_path, monkeypatch):
    """`evaluate.py --part test` with a hash that does not match: an error, no figures."""
    wrong = tmp_path / "test.sha256"
    wrong.write_text("0" * 64 + "\n", encoding="utf-8")
    monkeypatch.setattr(ev, "TEST_HASH", wrong)
    result = CliRunner().invoke(ev.main, ["--part", "test"])
    assert result.exit_code != 0
    assert "edited" in result.output and "grade right" not in result.output


def test_misses_of_the_test_part_need_their_own_flag(monkeypatch):
    """`--show-misses` lists disagreements on dev; on test it lists none unless asked with
    `--show-test-misses`."""
    found = {**ev.evaluate(ev.read_items(ev.DEV)[:4]), "misses": ["a-miss verdict ..."]}
    monkeypatch.setattr(ev, "evaluate", lambda items, threshold: dict(found))
    runner = CliRunner()
    on_test = runner.invoke(ev.main, ["--part", "test", "--show-misses"])
    assert on_test.exit_code == 0 and "a-miss" not in on_test.output
    assert "--show-test-misses" in on_test.output
    asked = runner.invoke(ev.main, ["--part", "test", "--show-test-misses"])
    assert "a-miss" in asked.output
    on_dev = runner.invoke(ev.main, ["--part", "dev", "--show-misses"])
    assert "a-miss" in on_dev.output


def test_the_json_report_as_a_user_asks_for_it(tmp_path, monkeypatch):
    """`evaluate.py --json` (here on a dozen dev texts of all kinds): per-component
    precision, recall and F1; the grade × label confusion, the reliability table and grade
    right by language and by category, each covering every text."""
    few = tmp_path / "dev.jsonl"
    lines = ev.DEV.read_text(encoding="utf-8").splitlines(True)
    spread = lines[:: len(lines) // 12][:12]  # 12 of all kinds
    few.write_text("".join(spread), "utf-8")
    monkeypatch.setattr(ev, "DEV", few)
    result = CliRunner().invoke(ev.main, ["--json"])
    report = json.loads(result.output)
    assert report["part"] == "dev" and report["items"] == 12
    assert set(report["components"]) == {"techniques", "ai_tampered", "claims", "domain"}
    assert {"precision", "recall", "f1"} <= set(report["components"]["domain"])
    assert sum(sum(row.values()) for row in report["confusion"].values()) == 12
    assert sum(band["items"] for band in report["reliability"]) == 12
    for groups in report["grade_right_by"].values():  # by language, by category
        assert sum(g["items"] for g in groups.values()) == 12
        assert sum(g["right"] for g in groups.values()) == report["grade_right"]
    assert report["misses"] == []


@pytest.mark.parametrize(
    ("grade", "label", "right"),
    [
        ("low", "low_risk", True),
        ("low", "moderate_risk", False),
        ("medium", "moderate_risk", True),
        ("medium", "low_risk", False),
        ("high", "high_risk", True),
        ("high", "critical_risk", True),
        ("high", "moderate_risk", False),
    ],
)
def test_a_grade_is_right_for_its_labels_only(grade, label, right):
    """low → low_risk; medium → anything above low_risk; high → high or critical risk."""
    assert ev.grade_right(grade, label) is right


# Every analyser over the 1,917 dev texts: about 20 s of one core, more on a busy machine.
@pytest.mark.timeout(300)
def test_the_readme_states_what_the_analysers_and_the_verdict_measure_on_dev():
    """The README's dev precision / recall / F1 and grade-right count are today's figures,
    to the hundredth: a change that moves them must move the README with them."""
    text = README.read_text(encoding="utf-8")
    dev_table = text.split("| component | precision | recall | F1 |", 1)[-1].split("Grade right")[0]
    rows = {name: (p, r, f) for name, p, r, f in _ROW.findall(dev_table)}
    right = _RIGHT.search(text)
    assert right, "the README states no grade-right figure for dev"
    result = dev_result()
    measured = {
        name: (f"{t.precision:.2f}", f"{t.recall:.2f}", f"{t.f1:.2f}")
        for name, t in result["tallies"].items()
    }
    assert measured == rows
    assert (result["grade_right"], result["items"]) == (int(right[1]), int(right[2]))
