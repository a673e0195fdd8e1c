"""Evaluate the pure analyzers and the verdict on the labelled texts in scripts/evaluation/.

For each component, a text counts as flagged when its score reaches the threshold
(default 50); precision and recall are against the labels in texts.jsonl. The
verdict agrees when "elevated" texts get a label above low_risk and "low" texts get
low_risk. Claims are matched against the shipped sample fact checks in memory,
ranked like pg_trgm, so no database is needed.

    python scripts/evaluate.py [--threshold 50] [--show-misses]
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from aggregator.verdict import ComponentOutcome, compute
from shared.constants import ANALYSIS_COMPONENTS
from shared.settings import Settings
from workers.analysis.claims import extract_claims, match_locally, score_claims
from workers.analysis.domains import assess_domains
from workers.analysis.factcheck_store import read_fact_checks
from workers.analysis.machine_text import assess_machine_text
from workers.analysis.techniques import assess_techniques

TEXTS = Path(__file__).parent / "evaluation" / "texts.jsonl"


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


def scorers() -> Mapping[str, Callable[[Mapping[str, Any]], float]]:
    """The pure analyzer of each component, as text item → 0-100 score."""
    checks = [c.model_dump() for c in read_fact_checks()]

    def claims(item: Mapping[str, Any]) -> float:
        found = extract_claims(item["text"])
        return score_claims(found, match_locally(found, checks))

    return {
        "techniques": lambda item: assess_techniques(item["text"]).score,
        "ai_tampered": lambda item: assess_machine_text(item["text"]).score,
        "claims": claims,
        "domain": lambda item: assess_domains(item["text"], item.get("url")).score,
    }


def evaluate(items: list[Mapping[str, Any]], threshold: float) -> dict[str, Any]:
    """Per-component tallies, verdict agreement and the misses, for printing."""
    score_of = scorers()
    weights = Settings.model_fields["verdict_weights"].get_default(call_default_factory=True)
    tallies = {c: Tally() for c in ANALYSIS_COMPONENTS}
    verdict = Tally()
    misses: list[str] = []
    labels: dict[str, int] = {}
    for item in items:
        scores = {c: score_of[c](item) for c in ANALYSIS_COMPONENTS}
        for c, score in scores.items():
            expected = item["expected"][c] == "high"
            tallies[c].add(expected, score >= threshold)
            if expected != (score >= threshold):
                misses.append(
                    f"{item['id']:<11} {c:<11} expected {item['expected'][c]:<4} got {score:5.1f}"
                )
        outcome = compute({c: ComponentOutcome("ok", s) for c, s in scores.items()}, weights)
        labels[outcome.label] = labels.get(outcome.label, 0) + 1
        expected = item["verdict"] == "elevated"
        verdict.add(expected, outcome.label != "low_risk")
        if expected != (outcome.label != "low_risk"):
            got = f"{outcome.label} ({outcome.score})"
            misses.append(
                f"{item['id']:<11} {'verdict':<11} expected {item['verdict']:<8} got {got}"
            )
    return {"tallies": tallies, "verdict": verdict, "misses": misses, "labels": labels}


@click.command()
@click.option(
    "--threshold", default=50.0, show_default=True, help="Score at which a component flags a text."
)
@click.option("--show-misses", is_flag=True, help="List every disagreement with the labels.")
def main(threshold: float, show_misses: bool) -> None:
    """Print per-component precision and recall and the verdict agreement."""
    items = [
        json.loads(line) for line in TEXTS.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    result = evaluate(items, threshold)
    languages = {lang: sum(1 for i in items if i["lang"] == lang) for lang in ("ro", "en")}
    click.echo(
        f"{len(items)} texts ({languages['ro']} ro, {languages['en']} en), threshold {threshold:g}"
    )
    click.echo(
        f"{'component':<12}{'TP':>4}{'FP':>4}{'FN':>4}{'TN':>4}{'precision':>11}{'recall':>8}"
    )
    for name, t in result["tallies"].items():
        click.echo(
            f"{name:<12}{t.tp:>4}{t.fp:>4}{t.fn:>4}{t.tn:>4}{t.precision:>11.2f}{t.recall:>8.2f}"
        )
    v = result["verdict"]
    agreement = (v.tp + v.tn) / len(items)
    click.echo(
        f"verdict agreement: {v.tp + v.tn}/{len(items)} = {agreement:.2f} "
        f"(elevated: precision {v.precision:.2f}, recall {v.recall:.2f})"
    )
    click.echo(
        "verdict labels: " + ", ".join(f"{k} {n}" for k, n in sorted(result["labels"].items()))
    )
    if show_misses:
        click.echo("\n".join(["", "disagreements:", *result["misses"]]))


if __name__ == "__main__":
    main()
