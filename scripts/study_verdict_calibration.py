"""Where should the verdict's calibration sit, and from what probability does the learned
claims model make a claim of its own? Leave-pairs-out on dev's blind sets.

For each of the last pairs of blind sets (written by two writers in one round, measured as
written, then joined to dev), the claims and techniques models are trained on dev without
the pair, and the whole evaluation (`scripts/evaluate.py`: every analyser and the verdict)
reads the pair with them, for each setting given: a `learned_alone` threshold of the claims
policy and a calibration midpoint and noise floor of the verdict. Prints, per pair and in
all, claims found / false / missed and the verdicts graded right. The rules are today's,
tuned with every pair in view, so only the models are held out: the figures compare
settings, they do not measure the rules.

    python scripts/study_verdict_calibration.py [--pairs tt+uu,rr+ss,...]
        [--settings 0.6/38/25,0.7/50/25,...]

scikit-learn is needed (development only); never reads the test part.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from aggregator import verdict
from scripts import evaluate
from scripts.study_lone_cue import held_out_model, in_sets
from scripts.train_text_model import read_dev
from workers.analysis import claims, techniques

PAIRS = "tt+uu,rr+ss,pp+qq,nn+oo,ll+mm,jj+kk,hh+ii"
# learned_alone / calibration midpoint / noise floor
SETTINGS = "0.6/38/25,0.7/38/25,0.7/46/25,0.7/50/25,0.7/46/30,0.6/50/25,0.8/50/25"

Setting = tuple[float, float, float]


def measure(held: list[dict[str, Any]], setting: Setting) -> tuple[int, int, int, int]:
    """Claims found, false and missed, and verdicts graded right, on `held`."""
    alone, midpoint, floor = setting
    policy = claims.claims_spec()
    risk = policy.risk.model_copy(update={"learned_alone": alone})
    tuned = policy.model_copy(update={"risk": risk})
    claims.claim_policy = lambda: tuned
    verdict.CALIBRATION_MIDPOINT, verdict.NOISE_FLOOR = midpoint, floor
    result = evaluate.evaluate(held)
    tally = result["tallies"]["claims"]
    return tally.tp, tally.fp, tally.fn, result["grade_right"]


@click.command()
@click.option("--pairs", default=PAIRS, show_default=True, help="blind sets, a+b, comma-separated")
@click.option(
    "--settings",
    default=SETTINGS,
    show_default=True,
    help="learned_alone/midpoint/noise floor, comma-separated",
)
def main(pairs: str, settings: str) -> None:
    items = read_dev()
    chosen: list[Setting] = [
        (float(a), float(m), float(f)) for a, m, f in (s.split("/") for s in settings.split(","))
    ]
    shipped = (
        claims.claim_policy,
        claims.shipped_claims_model,
        techniques.shipped_model,
        verdict.CALIBRATION_MIDPOINT,
        verdict.NOISE_FLOOR,
    )
    totals = {s: [0, 0, 0, 0] for s in chosen}
    count = 0
    try:
        for pair in pairs.split(","):
            sets = pair.split("+")
            train = [i for i in items if not in_sets(i, sets)]
            held = [i for i in items if in_sets(i, sets)]
            count += len(held)
            claimed, worded = (held_out_model(train, c) for c in ("claims", "techniques"))
            claims.shipped_claims_model = lambda m=claimed: m
            techniques.shipped_model = lambda m=worded: m
            row = []
            for setting in chosen:
                found = measure(held, setting)
                totals[setting] = [t + f for t, f in zip(totals[setting], found, strict=True)]
                row.append("{}/{:g}/{:g}: claims {}/{}/{}, right {}".format(*setting, *found))
            click.echo(f"{pair} ({len(held)}): " + " | ".join(row))
    finally:
        (
            claims.claim_policy,
            claims.shipped_claims_model,
            techniques.shipped_model,
            verdict.CALIBRATION_MIDPOINT,
            verdict.NOISE_FLOOR,
        ) = shipped
    for setting, (tp, fp, fn, right) in totals.items():
        precision, recall = tp / (tp + fp), tp / (tp + fn)
        click.echo(
            "alone {} midpoint {:g} floor {:g}: ".format(*setting)
            + f"claims {tp}/{fp}/{fn} P {precision:.3f} R {recall:.3f}; "
            + f"grade right {right}/{count}"
        )


if __name__ == "__main__":
    main()
