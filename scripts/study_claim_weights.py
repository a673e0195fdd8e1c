"""Fit the claims policy's risk weights on data, and measure them on texts left out.

An unverified claim is risky when the weights of its forms and register (`risk.weights` in
`workers/analysis/data/claims.yaml`) sum to `risky_from` (0.5) or more; a text is flagged
when its claims score (risky and rated claims as evidence, the rest as capped caution)
reaches 50. The weights were set by hand, round after round, with every blind set in view.
Here, for each of the last pairs of blind sets (two writers of one round, measured as
written, then joined to dev), the learned claims model is trained on dev without the pair,
every text's claims are read once with it, and the weights are fitted on dev without the
pair (each of its texts read with a model trained without it: `--folds`) by coordinate
search (each weight in turn tried on a grid of its own sign, kept where the claims F1 of the
training texts rises by more than `--min-gain`), then the pair is read with the fitted
weights and with the shipped ones. The forms and registers
themselves (the rules) are today's, tuned with every pair in view, and so are the shipped
weights. The fitted ones are less so, not wholly out of sample: the search starts from the
shipped weights and a weight that gains nothing keeps its shipped value (and the six
reference texts the model file records train every fold).

A text's claims are read once per pair; a weight changes which claims are risky and so
whether the learned model's own claim is added (only where no claim of the forms is risky)
and whether it supports a claim (`learned_beside`), and both are followed here as
`extract_claims` does; the text's score is then `score_claims`' (rated claims, caution).
The cut at MAX_CLAIMS is not followed (few texts have that many).

    python scripts/study_claim_weights.py [--pairs tt+uu,rr+ss,...] [--fit-all]

`--fit-all` also fits the weights on the whole of dev and prints them (what to ship, if the
pairs say so). scikit-learn is needed (development only); never reads the test part.
"""

from __future__ import annotations

import sys
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scripts.study_lone_cue import held_out_model, in_sets
from scripts.train_text_model import REFERENCE_IDS, read_dev
from workers.analysis import claims
from workers.analysis.claim_forms import ATTRIBUTING, claims_spec, weighed_risk
from workers.analysis.factcheck_store import read_fact_checks
from workers.analysis.wording_model import WordingModel

PAIRS = "vv+ww,tt+uu,rr+ss,pp+qq,nn+oo,ll+mm,jj+kk,hh+ii"
FLAGGED = 50  # the score at which a component flags a text (scripts/evaluate.py)
GRID = tuple(round(x * 0.05, 2) for x in range(-20, 21))
# Registers that are vetoes rather than evidence: a debunk or satire asserts nothing.
FIXED = frozenset({"debunked", "satire"})
LEARNED = ("learned_wording", "learned_claim")


@dataclass(frozen=True)
class ReadClaim:
    """One claim as the weights see it: its forms and register (without the learned
    model's two), whether the model would support it, and its fact check's risk if rated."""

    features: tuple[str, ...]
    supportable: bool
    rated: float | None


@dataclass(frozen=True)
class ReadText:
    """A text's claims, the model's own claim (made only where none is risky: added, or in
    place of the claim of the forms at `replaces`), the label."""

    claims: tuple[ReadClaim, ...]
    learned: ReadClaim | None
    risky: bool
    replaces: int | None = None


def _read_claim(claim: claims.Claim, verification: claims.Verification) -> ReadClaim:
    rated = (
        claims.claim_risk(claim, verification)
        if claims._rated_against_text(claim, verification)
        else None
    )
    base = tuple(f for f in (*claim.cues, *claim.register) if f not in LEARNED)
    supportable = bool(set(claim.cues) - claims.BARE_FORMS) and not ATTRIBUTING & set(
        claim.register
    )
    return ReadClaim(base, supportable and "learned_wording" in claim.register, rated)


def read_texts(
    items: Iterable[Mapping[str, Any]], model: WordingModel, checks: Sequence[Mapping[str, Any]]
) -> list[ReadText]:
    """Every text's claims read with `model`, as if no claim were risky (so the model's own
    claim is always made where it would be) and every supportable claim supported."""
    shipped = claims._risky_unverified, claims._supportable, claims._with_learned_claim
    added: list[bool] = []

    def with_learned_claim(found: list[claims.Claim], *args: Any) -> list[claims.Claim]:
        made = shipped[2](found, *args)
        added.append(len(made) > len(found))
        return made

    claims._risky_unverified = lambda claim: False
    claims._supportable = lambda claim, beside: True
    claims._with_learned_claim = with_learned_claim
    try:
        read = []
        for item in items:
            added.clear()
            read.append(_read_text(item, model, checks, added))
        return read
    finally:
        claims._risky_unverified, claims._supportable, claims._with_learned_claim = shipped


def _read_text(
    item: Mapping[str, Any],
    model: WordingModel,
    checks: Sequence[Mapping[str, Any]],
    added: list[bool],
) -> ReadText:
    """`added` is told whether the model's claim was a sentence of its own (not a claim of
    the forms given its register)."""
    found = claims.extract_claims(item["text"], learned=model)
    made = bool(added and added[0])
    verified = claims.match_locally(found, checks)
    read, learned, replaces = [], None, None
    for claim, verification in zip(found, verified, strict=True):
        one = _read_claim(claim, verification)
        if "learned_claim" not in claim.register:
            read.append(one)
            continue
        learned = ReadClaim((*one.features, "learned_claim"), one.supportable, one.rated)
        if not made:  # a claim of the forms the model's register was given to
            replaces = len(read)
            read.append(one)
    return ReadText(tuple(read), learned, item["expected"]["claims"] == "high", replaces)


def read_cross_fitted(
    items: Sequence[Mapping[str, Any]], checks: Sequence[Mapping[str, Any]], folds: int
) -> list[ReadText]:
    """Every text's claims read with a model that never saw it: `items` cut into `folds`
    parts by id, each read with the model trained on the others. (Read with the model
    trained on them, the texts would tell the fit to trust the model far too much.)"""
    part = [zlib.crc32(item["id"].encode()) % folds for item in items]
    read: list[ReadText | None] = [None] * len(items)
    for fold in range(folds):
        inside = [i for i, p in enumerate(part) if p == fold]
        others = [item for item, p in zip(items, part, strict=True) if p != fold]
        # The model file records the reference texts' probabilities: they train every fold.
        others += [items[i] for i in inside if items[i]["id"] in REFERENCE_IDS]
        model = held_out_model(others, "claims")
        texts = read_texts([items[i] for i in inside], model, checks)
        for i, text in zip(inside, texts, strict=True):
            read[i] = text
    return [text for text in read if text is not None]


def _scored(claim: ReadClaim, weights: Mapping[str, float], rule: Any) -> tuple[float, float]:
    """The claim's unverified risk (the model's support given where `_supportable` gives
    it) and its risk as `claims.claim_risk` reads it (its rating's, where rated)."""
    unverified = weighed_risk(claim.features, weights, rule)
    own = [f for f in claim.features if f != "learned_claim"]  # as the forms read it
    if claim.supportable and weighed_risk(own, weights, rule) >= rule.learned_beside:
        unverified = weighed_risk((*claim.features, "learned_wording"), weights, rule)
    return unverified, unverified if claim.rated is None else claim.rated


def flagged(text: ReadText, weights: Mapping[str, float], rule: Any) -> bool:
    """Whether the claims component flags the text with these weights: its score
    (`claims.score_claims`) reaches FLAGGED."""
    scored = [_scored(c, weights, rule) for c in text.claims]
    if text.learned is not None and not any(u >= 100 * rule.risky_from for u, _ in scored):
        learned = _scored(text.learned, weights, rule)
        if text.replaces is None:
            scored.append(learned)
        else:
            scored[text.replaces] = learned
    rated = [c.rated is not None for c in text.claims]
    if text.learned is not None and len(scored) > len(rated):
        rated.append(text.learned.rated is not None)
    evidence, calm = [], 0.0
    for (unverified, risk), is_rated in zip(scored, rated, strict=True):
        if (risk > 0) if is_rated else (unverified >= 100 * rule.risky_from):
            evidence.append(risk)
        else:
            calm += risk
    return claims.combined_score(evidence, calm, rule.caution_cap) >= FLAGGED


def tally(texts: Sequence[ReadText], weights: Mapping[str, float]) -> tuple[int, int, int]:
    """Claims found, false and missed."""
    rule = claims_spec().risk
    found = false = missed = 0
    for text in texts:
        hit = flagged(text, weights, rule)
        found += hit and text.risky
        false += hit and not text.risky
        missed += text.risky and not hit
    return found, false, missed


def f1(counts: tuple[int, int, int]) -> float:
    found, false, missed = counts
    return 2 * found / (2 * found + false + missed) if found else 0.0


def fit(texts: Sequence[ReadText], start: Mapping[str, float], min_gain: float) -> dict[str, float]:
    """Coordinate search from `start`: each weight in turn set to the grid value (of its
    sign in `start`: evidence stays evidence, a discount a discount) that raises F1 the
    most, until a pass changes nothing."""
    weights = dict(start)
    best = f1(tally(texts, weights))
    changed = True
    while changed:
        changed = False
        for name in sorted(weights):
            if name in FIXED:
                continue
            kept = weights[name]
            for value in (v for v in GRID if v * start[name] >= 0):
                weights[name] = value
                score = f1(tally(texts, weights))
                if score > best + min_gain:
                    best, kept, changed = score, value, True
            weights[name] = kept
    return weights


def _line(counts: tuple[int, int, int]) -> str:
    found, false, missed = counts
    precision = found / (found + false) if found + false else float("nan")
    recall = found / (found + missed) if found + missed else float("nan")
    return f"{found}/{false}/{missed} P {precision:.3f} R {recall:.3f} F1 {f1(counts):.3f}"


def _add(a: tuple[int, int, int], b: tuple[int, int, int]) -> tuple[int, int, int]:
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@click.command()
@click.option("--pairs", default=PAIRS, show_default=True, help="blind sets, a+b, comma-separated")
@click.option("--min-gain", default=0.0005, show_default=True, help="F1 a change must add")
@click.option("--folds", default=5, show_default=True, help="cross-fitting of the training texts")
@click.option("--fit-all", is_flag=True, help="also fit on the whole of dev and print them")
def main(pairs: str, min_gain: float, folds: int, fit_all: bool) -> None:
    items = read_dev()
    checks = [c.model_dump() for c in read_fact_checks()]
    shipped = dict(claims_spec().risk.weights)
    totals = {"shipped": (0, 0, 0), "fitted": (0, 0, 0)}
    for pair in pairs.split(","):
        sets = pair.split("+")
        train = [i for i in items if not in_sets(i, sets)]
        held = [i for i in items if in_sets(i, sets)]
        model = held_out_model(train, "claims")
        train_read = read_cross_fitted(train, checks, folds)
        held_read = read_texts(held, model, checks)
        fitted = fit(train_read, shipped, min_gain)
        row = {"shipped": tally(held_read, shipped), "fitted": tally(held_read, fitted)}
        for name, counts in row.items():
            totals[name] = _add(totals[name], counts)
        moved = {k: v for k, v in fitted.items() if v != shipped.get(k)}
        click.echo(f"{pair} ({len(held)}): shipped {_line(row['shipped'])} | ")
        click.echo(f"    fitted {_line(row['fitted'])}; moved {moved}")
    for name, counts in totals.items():
        click.echo(f"all pairs, {name}: {_line(counts)}")
    if fit_all:
        every = read_cross_fitted(items, checks, folds)
        fitted = fit(every, shipped, min_gain)
        click.echo(f"dev in-sample, shipped: {_line(tally(every, shipped))}")
        click.echo(f"dev in-sample, fitted: {_line(tally(every, fitted))}")
        click.echo(f"fitted on dev: {fitted}")


if __name__ == "__main__":
    main()
