"""Where should the learned techniques cue stand alone? Leave-pairs-out on dev's blind sets.

For each of the last pairs of blind sets (written by two writers in one round, measured as
written, then joined to dev), the techniques model is trained on dev without the pair and
today's analyser reads the pair with it, the cue standing alone (no lexicon finding) from
each LONE_FROM given (above 1: never). Prints found / false / missed per pair and in all,
with precision, recall and F1. The rules are today's, tuned with every pair in view, so only
the model is held out: the figures compare thresholds, they do not measure the rules.

    python scripts/study_lone_cue.py [--pairs rr+ss,pp+qq,...] [--settings 0.8,0.9,1.01]

scikit-learn is needed (development only); never reads the test part.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scripts.train_text_model import fit, model_file, read_dev, words_for
from workers.analysis import techniques, wording_model

PAIRS = "rr+ss,pp+qq,nn+oo,ll+mm,jj+kk,hh+ii,ff+gg,dd+ee"
SETTINGS = "0.8,0.85,0.9,0.95,1.01"


def in_sets(item: dict[str, Any], sets: list[str]) -> bool:
    return any(f"-{name}-" in item["id"] for name in sets)


def held_out_model(train: list[dict[str, Any]], component: str) -> wording_model.WordingModel:
    """The component's learned model fitted on `train` only, read as the workers read it."""
    labels = [i["expected"][component] == "high" for i in train]
    fitted = fit([i["text"] for i in train], labels, read=words_for(component))
    return wording_model.from_file(model_file(fitted, train, component))


def tally(held: list[dict[str, Any]], model: wording_model.WordingModel) -> tuple[int, int, int]:
    """Found, false and missed techniques on `held` with `model` as the learned cue."""
    found = false = missed = 0
    for item in held:
        flagged = techniques.assess_techniques(item["text"], model=model).score >= 50
        risky = item["expected"]["techniques"] == "high"
        found += flagged and risky
        false += flagged and not risky
        missed += risky and not flagged
    return found, false, missed


@click.command()
@click.option("--pairs", default=PAIRS, show_default=True, help="blind sets, a+b, comma-separated")
@click.option("--settings", default=SETTINGS, show_default=True, help="LONE_FROM values")
def main(pairs: str, settings: str) -> None:
    items = read_dev()
    values = [float(v) for v in settings.split(",")]
    totals = {v: [0, 0, 0] for v in values}
    shipped = wording_model.LONE_FROM
    try:
        for pair in pairs.split(","):
            sets = pair.split("+")
            train = [i for i in items if not in_sets(i, sets)]
            held = [i for i in items if in_sets(i, sets)]
            model = held_out_model(train, "techniques")
            row = []
            for value in values:
                wording_model.LONE_FROM = value
                counts = tally(held, model)
                totals[value] = [t + c for t, c in zip(totals[value], counts, strict=True)]
                row.append(f"{value}: {counts[0]}/{counts[1]}/{counts[2]}")
            click.echo(f"{pair} ({len(held)}): " + " | ".join(row))
    finally:
        wording_model.LONE_FROM = shipped
    for value, (found, false, missed) in totals.items():
        precision, recall = found / (found + false), found / (found + missed)
        f1 = 2 * precision * recall / (precision + recall)
        click.echo(
            f"from {value}: found {found}, false {false}, missed {missed}; "
            f"P {precision:.3f} R {recall:.3f} F1 {f1:.3f}"
        )


if __name__ == "__main__":
    main()
