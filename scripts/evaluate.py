"""Evaluate the pure analysers and the verdict on the labelled texts in scripts/evaluation/.

The set has a development part (dev.jsonl, to look at and tune on) and a frozen test part
(test.jsonl, whose SHA-256 is in test.sha256: the script refuses to report a test part that
changed). Each text is labelled low/high per component and low/medium/high for the verdict.

A component flags a text when its score reaches the threshold (default 50). The verdict's
grade is right when low → low_risk, medium → any label above low_risk, high → high_risk or
critical_risk. Claims are matched against the shipped sample fact checks in memory, ranked
like pg_trgm, so no database is needed.

    python scripts/evaluate.py [--part dev|test|all] [--threshold 50] [--show-misses]
                               [--show-test-misses] [--json]
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import sys
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import click

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from aggregator.verdict import LABEL_BANDS, TOP_LABEL, Verdict, compute, outcome_of
from shared.constants import ANALYSIS_COMPONENTS
from shared.errors import EvaluationSetChanged
from shared.settings import Settings
from workers.analysis import claims, domains, machine_text, techniques
from workers.analysis.factcheck_store import read_fact_checks
from workers.executors.ai_tampered import MIN_TEXT_WORDS

EVALUATION = Path(__file__).parent / "evaluation"
DEV = EVALUATION / "dev.jsonl"
TEST = EVALUATION / "test.jsonl"
TEST_HASH = EVALUATION / "test.sha256"
GRADES = ("low", "medium", "high")
LABELS = (*(label for _, label in LABEL_BANDS), TOP_LABEL)
# Labels that count as right for each grade.
RIGHT_LABELS = {
    "low": {"low_risk"},
    "medium": {"moderate_risk", "high_risk", "critical_risk"},
    "high": {"high_risk", "critical_risk"},
}
# Verdict score bands of the reliability table: as many as the set can fill.
RELIABILITY_EDGES = (0, 10, 25, 40, 50, 60, 75, 90, 101)

Analysed = tuple[float, dict[str, Any]]


@dataclass
class Tally:
    """Confusion counts of one binary decision."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0

    def add(self, expected: bool, predicted: bool) -> None:
        if expected and predicted:
            self.tp += 1
        elif predicted:
            self.fp += 1
        elif expected:
            self.fn += 1
        else:
            self.tn += 1

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else float("nan")

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else float("nan")

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r > 0 else float("nan")


def read_items(path: Path) -> list[dict[str, Any]]:
    """The labelled texts of one JSON-lines file."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def digest(path: Path) -> str:
    """SHA-256 of a file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def frozen_test_items(path: Path | None = None, recorded: Path | None = None) -> list[dict]:
    """The test part, only if its bytes still match the recorded hash."""
    path, recorded = path or TEST, recorded or TEST_HASH
    if digest(path) != recorded.read_text(encoding="utf-8").split()[0]:
        raise EvaluationSetChanged(f"{path.name} no longer matches {recorded.name}")
    return read_items(path)


def load_part(part: str) -> list[dict[str, Any]]:
    """dev, test (hash-checked) or all (both)."""
    if part == "dev":
        return read_items(DEV)
    if part == "test":
        return frozen_test_items()
    return read_items(DEV) + frozen_test_items()


def analysers() -> Mapping[str, Callable[[Mapping[str, Any]], Analysed]]:
    """Each component's pure analysis as text item → (0-100 score, result data), the data
    built like the workers build it."""
    checks = [c.model_dump() for c in read_fact_checks()]

    def claims_of(item: Mapping[str, Any]) -> Analysed:
        found = claims.extract_claims(item["text"])
        verified = claims.match_locally(found, checks)
        return claims.score_claims(found, verified), claims.report_data(found, verified)

    def techniques_of(item: Mapping[str, Any]) -> Analysed:
        report = techniques.assess_techniques(item["text"])
        return report.score, techniques.report_data(report)

    def machine_of(item: Mapping[str, Any]) -> Analysed:
        # As the ai_tampered executor does: too short a text is not analysed, and the text's
        # data sits under "text" beside the summaries.
        if len(item["text"].split()) < MIN_TEXT_WORDS:
            return 0.0, {"summary": [], "summary_ro": []}
        report = machine_text.assess_machine_text(item["text"])
        data = machine_text.report_data(report)
        return report.score, {"text": data, "summary": data["summary"]}

    def domain_of(item: Mapping[str, Any]) -> Analysed:
        report = domains.assess_domains(item["text"], item.get("url"))
        return report.score, domains.report_data(report)

    return {
        "techniques": techniques_of,
        "ai_tampered": machine_of,
        "claims": claims_of,
        "domain": domain_of,
    }


def grade_right(grade: str, label: str) -> bool:
    """Whether a verdict label is right for a text of this grade."""
    return label in RIGHT_LABELS[grade]


def reliability(rows: list[tuple[float, str]]) -> list[dict[str, Any]]:
    """Per verdict-score band: items, mean score/100, and the share graded medium or high."""
    table = []
    for low, high in itertools.pairwise(RELIABILITY_EDGES):
        band = [(s, g) for s, g in rows if low <= s < high]
        risky = sum(1 for _, g in band if g != "low")
        table.append(
            {
                "band": f"{low}-{min(high, 100)}",
                "items": len(band),
                "mean_score": sum(s for s, _ in band) / len(band) / 100 if band else None,
                "risky_share": risky / len(band) if band else None,
            }
        )
    return table


def _verdict_miss(
    item: Mapping[str, Any], results: Mapping[str, Analysed], verdict: Verdict
) -> str:
    scores = " ".join(f"{c[:4]}={s:.0f}" for c, (s, _) in results.items())
    return (
        f"{item['id']:<14} {'verdict':<11} expected {item['verdict']:<6} got {verdict.label} "
        f"({verdict.score:.1f}, confidence {verdict.confidence:.2f}; {scores})"
    )


def evaluate(items: list[Mapping[str, Any]], threshold: float = 50.0) -> dict[str, Any]:
    """Per-component tallies, the verdict's confusion matrix and reliability, and misses."""
    analyse = analysers()
    weights = Settings.model_fields["verdict_weights"].get_default(call_default_factory=True)
    tallies = {c: Tally() for c in ANALYSIS_COMPONENTS}
    confusion = {g: dict.fromkeys(LABELS, 0) for g in GRADES}
    rows: list[tuple[float, str]] = []
    misses: list[str] = []
    right = 0
    by: dict[str, dict[str, list[int]]] = {"lang": {}, "category": {}}
    for item in items:
        results = {c: analyse[c](item) for c in ANALYSIS_COMPONENTS}
        for c, (score, _) in results.items():
            expected = item["expected"][c] == "high"
            tallies[c].add(expected, score >= threshold)
            if expected != (score >= threshold):
                misses.append(
                    f"{item['id']:<14} {c:<11} expected {item['expected'][c]:<6} got {score:5.1f}"
                )
        outcomes = {
            c: outcome_of({"status": "ok", "score": s, "data": d}) for c, (s, d) in results.items()
        }
        verdict = compute(outcomes, weights)
        assert verdict.score is not None  # every component succeeded
        grade = item["verdict"]
        confusion[grade][verdict.label] += 1
        rows.append((verdict.score, grade))
        hit = grade_right(grade, verdict.label)
        right += hit
        for key, counts in by.items():
            tally = counts.setdefault(item.get(key, "-"), [0, 0])
            tally[0] += hit
            tally[1] += 1
        if not hit:
            misses.append(_verdict_miss(item, results, verdict))
    return {
        "items": len(items),
        "tallies": tallies,
        "confusion": confusion,
        "grade_right": right,
        "grade_right_by": {
            key: {g: {"right": r, "items": n} for g, (r, n) in sorted(counts.items())}
            for key, counts in by.items()
        },
        "reliability": reliability(rows),
        "misses": misses,
    }


def _number(value: float | None) -> str:
    return "   -" if value is None or math.isnan(value) else f"{value:4.2f}"


def render(result: Mapping[str, Any], threshold: float) -> list[str]:
    """The report as text lines."""
    n = result["items"]
    lines = [f"{'component':<12}{'TP':>5}{'FP':>5}{'FN':>5}{'TN':>5}   P     R     F1"]
    for name, t in result["tallies"].items():
        lines.append(
            f"{name:<12}{t.tp:>5}{t.fp:>5}{t.fn:>5}{t.tn:>5}  {_number(t.precision)}  "
            f"{_number(t.recall)}  {_number(t.f1)}"
        )
    lines += [
        "",
        f"verdict (rows: expected grade, columns: label; components flag at {threshold:g})",
    ]
    lines.append(f"{'':<8}" + "".join(f"{label:>15}" for label in LABELS))
    for grade, row in result["confusion"].items():
        lines.append(f"{grade:<8}" + "".join(f"{row[label]:>15}" for label in LABELS))
    lines.append(f"grade right: {result['grade_right']}/{n} = {result['grade_right'] / n:.2f}")
    for key, groups in result["grade_right_by"].items():
        shares = ", ".join(f"{g} {v['right']}/{v['items']}" for g, v in groups.items())
        lines.append(f"  by {key}: {shares}")
    lines += ["", "reliability: verdict score band, items, mean score/100, share medium/high"]
    for band in result["reliability"]:
        lines.append(
            f"{band['band']:>7} {band['items']:>5}  {_number(band['mean_score'])}  "
            f"{_number(band['risky_share'])}"
        )
    return lines


def as_json(result: Mapping[str, Any]) -> dict[str, Any]:
    """The report as JSON-ready data (NaN as null)."""

    def clean(value: float) -> float | None:
        return None if math.isnan(value) else round(value, 4)

    return {
        **{k: v for k, v in result.items() if k != "tallies"},
        "components": {
            c: {
                **asdict(t),
                "precision": clean(t.precision),
                "recall": clean(t.recall),
                "f1": clean(t.f1),
            }
            for c, t in result["tallies"].items()
        },
    }


@click.command()
@click.option("--part", type=click.Choice(["dev", "test", "all"]), default="dev", show_default=True)
@click.option(
    "--threshold", default=50.0, show_default=True, help="Score at which a component flags a text."
)
@click.option(
    "--file",
    "outside_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Evaluate this JSON-lines file (same schema) instead of a part, e.g. texts written "
    "blind before they join the dev part.",
)
@click.option("--show-misses", is_flag=True, help="List every disagreement (dev part only).")
@click.option(
    "--show-test-misses",
    is_flag=True,
    help="Also list the test part's disagreements; reading them spoils the test part for tuning.",
)
@click.option("--json", "as_json_output", is_flag=True, help="Print the report as JSON.")
def main(
    part: str,
    threshold: float,
    outside_file: Path | None,
    show_misses: bool,
    show_test_misses: bool,
    as_json_output: bool,
) -> None:
    """Per-component precision, recall and F1, and the verdict's confusion and reliability."""
    try:
        items = read_items(outside_file) if outside_file else load_part(part)
    except EvaluationSetChanged as exc:
        raise click.ClickException(f"{exc}: it was edited, so it is not reported") from exc
    if outside_file:
        part = outside_file.name
    result = evaluate(items, threshold)
    misses_allowed = part not in ("test", "all") or show_test_misses
    if not (misses_allowed and (show_misses or show_test_misses)):
        result["misses"] = []
    if as_json_output:
        click.echo(json.dumps({"part": part, "threshold": threshold, **as_json(result)}, indent=1))
        return
    languages = {lang: sum(1 for i in items if i["lang"] == lang) for lang in ("ro", "en")}
    click.echo(f"part {part}: {len(items)} texts ({languages['ro']} ro, {languages['en']} en)")
    click.echo("\n".join(render(result, threshold)))
    if result["misses"]:
        click.echo("\n".join(["", "disagreements:", *result["misses"]]))
    elif show_misses and not misses_allowed:
        click.echo("\n(misses of the test part are shown only with --show-test-misses)")


if __name__ == "__main__":
    main()
