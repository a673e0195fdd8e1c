"""Does a learned text model find what the phrase rules miss in texts by new writers?

Leave-one-batch-out on the development part: dev was written in batches by different
writers (ids with `-n-`, `-b-` to `-g-`, and the original batch without). For each of the
seven later batches the model is trained on the other batches only (its settings chosen
by cross-validation inside them) and measured on the batch left out, beside the rules as
they were *before* anyone tuned them on that batch (the commit given per batch, read with
`git archive`; the rules of today were tuned on every batch, so their figures on dev are
in-sample). Combinations: the larger of rule score and model score, the model as a cue in
the analyser's score (alone, or only beside lexicon evidence), and a stacked logistic
regression over [rule score, model logit] fitted on the other held-out batches.

scikit-learn and a git checkout are needed (development only); never reads the test part.

For ai_tampered the model reads every word whole and joins the rules as one more signal
of machine_text.py's logistic combination ("rules + learned style signal").

    python scripts/study_text_model.py [--component techniques|claims|ai_tampered] [--json]
    python scripts/study_text_model.py --every-batch [--component ...]
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable, Mapping, Sequence
from io import BytesIO
from pathlib import Path
from typing import Any

import click

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scripts.train_text_model import BUCKETS, SEED, read_dev, words_for
from workers.analysis.findings import saturating_score
from workers.analysis.machine_text import LEARNED_FROM, WEIGHTS
from workers.analysis.normalise import normalise
from workers.analysis.technique_context import labelled_satire
from workers.analysis.techniques import default_lexicon
from workers.analysis.text import fold
from workers.analysis.text_features import features
from workers.analysis.wording_model import (
    CUE_FROM,
    CUE_WEIGHT,
    LONE_FROM,
    LONE_MIN_WORDS,
    stands_alone,
)

ROOT = Path(__file__).resolve().parents[1]
BATCHES = {"N": "-n-", "B": "-b-", "C": "-c-", "D": "-d-", "E": "-e-", "F": "-f-", "G": "-g-"}
# The last commit whose rules had not been tuned on each batch (git log of dev.jsonl).
RULES_BEFORE = {
    "N": "8d2fc74",
    "B": "6c1e638",
    "C": "1723e19",
    "D": "79465a2",
    "E": "79465a2",
    "F": "9c9edd9",
    "G": "9c9edd9",
}
# Candidate models: (kind, C); chosen per held-out batch by inner cross-validation.
GRID = [("lr", c) for c in (0.3, 1.0, 3.0, 10.0, 30.0)] + [
    ("svm", c) for c in (0.1, 0.3, 1.0, 3.0, 10.0)
]
# Cue shapes tried for the combination: weight at probability 1, probability it starts at.
CUE_GRID = [(w, p0) for w in (0.6, 0.8, 1.0, 1.2, 1.5) for p0 in (0.3, 0.4, 0.5, 0.6)]
FLAG = 50.0
TARGET_PRECISION = 0.9
# The first batch's name (its ids carry a category, not a letter: `en-health-7`).
ORIGINAL = "first"
# Computes one commit's rule scores of every dev text, run inside that commit's tree.
_OLD_RULES = """
import json, sys
sys.path[:0] = ['.', 'scripts']
import evaluate
items = [json.loads(l) for l in open(sys.argv[1], encoding='utf-8') if l.strip()]
run = evaluate.analysers()
print(json.dumps({i['id']: {c: run[c](i)[0] for c in ('techniques', 'claims', 'ai_tampered')}
                  for i in items}))
"""


def batch_of(item_id: str) -> str:
    """A batch letter (N, B to G) from a dev id, or ORIGINAL (the first batch, and the
    batches this study does not hold out)."""
    return next((b for b, mark in BATCHES.items() if mark in item_id), ORIGINAL)


def rule_scores_at(commit: str) -> dict[str, dict[str, float]]:
    """Every dev text's techniques, claims and ai_tampered scores under the rules of
    `commit`."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", commit], check=True, capture_output=True
    ).stdout
    with tempfile.TemporaryDirectory() as tree:
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(tree, filter="data")
        dev = str(ROOT / "scripts" / "evaluation" / "dev.jsonl")
        out = subprocess.run(
            [sys.executable, "-c", _OLD_RULES, dev],
            cwd=tree,
            env={**os.environ, "PYTHONPATH": tree},  # that commit's code, not this one's
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    return json.loads(out)  # type: ignore[no-any-return]


def precision_recall(labels: Sequence[bool], flags: Sequence[bool]) -> tuple[float, float]:
    tp = sum(y and f for y, f in zip(labels, flags, strict=True))
    flagged, positive = sum(flags), sum(labels)
    return (tp / flagged if flagged else math.nan), (tp / positive if positive else math.nan)


def _f1(labels: Sequence[bool], flags: Sequence[bool]) -> float:
    p, r = precision_recall(labels, flags)
    return 0.0 if math.isnan(p) or p + r == 0 else 2 * p * r / (p + r)


def _fit(kind: str, c: float, x: Any, y: Sequence[bool]) -> Callable[[Any], list[float]]:
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import LinearSVC

    if kind == "lr":
        lr = LogisticRegression(C=c, class_weight="balanced", max_iter=5000, random_state=SEED).fit(
            x, y
        )
        return lambda xs: list(lr.predict_proba(xs)[:, 1])
    svm = LinearSVC(C=c, class_weight="balanced", max_iter=20000, random_state=SEED).fit(x, y)
    return lambda xs: [1 / (1 + math.exp(-2 * d)) for d in svm.decision_function(xs)]


def _rows(x: Any, mask: Sequence[bool]) -> Any:
    return x[[i for i, m in enumerate(mask) if m]]


def held_out_probabilities(
    x: Any, labels: Sequence[bool], groups: Sequence[str], held: str
) -> tuple[list[float], tuple[str, float]]:
    """The model's probabilities on batch `held`, trained on the others with the setting
    that cross-validated best (F1 at 0.5, leaving out each training batch in turn)."""
    train = [g != held for g in groups]
    x_train, y_train = _rows(x, train), [y for y, t in zip(labels, train, strict=True) if t]
    g_train = [g for g, t in zip(groups, train, strict=True) if t]

    def inner(kind: str, c: float) -> float:
        predicted = [0.0] * len(y_train)
        for g in sorted(set(g_train)):
            fold = [h == g for h in g_train]
            fit = _fit(
                kind,
                c,
                _rows(x_train, [not f for f in fold]),
                [y for y, f in zip(y_train, fold, strict=True) if not f],
            )
            at = [i for i, f in enumerate(fold) if f]
            for i, p in zip(at, fit(_rows(x_train, fold)), strict=True):
                predicted[i] = p
        return _f1(y_train, [p >= 0.5 for p in predicted])

    kind, c = max(GRID, key=lambda setting: inner(*setting))
    model = _fit(kind, c, x_train, y_train)
    return model(_rows(x, [g == held for g in groups])), (kind, c)


def cue_score(rule: float, probability: float, weight: float, start: float, gated: bool) -> float:
    """The analyser's score with the model's cue among its findings (as techniques.py; a
    labelled satire comes with probability 0: no cue)."""
    total = -math.log(1 - min(rule, 99.9) / 100) / 1.5
    cue = weight * max(0.0, (probability - start) / (1 - start))
    return saturating_score(total + (0.0 if gated and rule <= 0 else cue))


def _style_score(rule: float, probability: float) -> float:
    """ai_tampered's score with the learned style among its signals (as machine_text.py:
    the model's strength from LEARNED_FROM, times its weight, added to the log-odds). An
    approximation: it adds the signal to every text, short ones included (which the
    analyser caps at 10 %), and after a self-reference's combination, not before, so its
    row is slightly optimistic."""
    strength = min(max((probability - LEARNED_FROM) / (1 - LEARNED_FROM), 0.0), 1.0)
    z = _logit(rule / 100) + WEIGHTS["learned_style"] * strength
    return 100 / (1 + math.exp(-z))


def _satire(text: str) -> bool:
    return labelled_satire(fold(normalise(text).text), default_lexicon().context.satire)


def _logit(p: float) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


def _best_cue(pairs: Sequence[tuple[bool, float, float]], gated: bool) -> tuple[float, float]:
    """The cue shape with the most recall at precision >= 0.9 on (label, rule, prob)."""

    def merit(shape: tuple[float, float]) -> tuple[float, float]:
        flags = [cue_score(s, p, *shape, gated) >= FLAG for _, s, p in pairs]
        precision, recall = precision_recall([y for y, _, _ in pairs], flags)
        return (recall if precision >= TARGET_PRECISION else precision - 1.0, -shape[0])

    return max(CUE_GRID, key=merit)


def _cue_way(shape: tuple[float, float], gated: bool) -> Callable[[float, float], bool]:
    return lambda s, p: cue_score(s, p, *shape, gated) >= FLAG


def _stacked(pairs: Sequence[tuple[bool, float, float]]) -> Callable[[float, float], bool]:
    from sklearn.linear_model import LogisticRegression

    z = [[s / 100, _logit(p)] for _, s, p in pairs]
    stack = LogisticRegression(class_weight="balanced").fit(z, [y for y, _, _ in pairs])
    return lambda s, p: bool(stack.predict_proba([[s / 100, _logit(p)]])[0, 1] >= 0.5)


def study(component: str, before: Mapping[str, Mapping[str, Mapping[str, float]]]) -> dict:
    """Per held-out batch: precision and recall of each way of flagging."""
    from scipy.sparse import csr_matrix

    items = read_dev()
    groups = [batch_of(i["id"]) for i in items]
    labels = [i["expected"][component] == "high" for i in items]
    read = words_for(component)
    rows, cols, values = [], [], []
    for r, item in enumerate(items):
        for c, v in features(read(item["text"]), BUCKETS).items():
            rows.append(r)
            cols.append(c)
            values.append(v)
    x = csr_matrix((values, (rows, cols)), shape=(len(items), BUCKETS))
    pairs: dict[str, list[tuple[bool, float, float]]] = {}
    lengths: dict[str, list[int]] = {}  # words the model reads, per held-out text
    chosen = {}
    for held in BATCHES:
        probabilities, chosen[held] = held_out_probabilities(x, labels, groups, held)
        ids = [i["id"] for i, g in zip(items, groups, strict=True) if g == held]
        ys = [y for y, g in zip(labels, groups, strict=True) if g == held]
        rules = [before[held][i][component] for i in ids]
        # Satire silences the wording cue; how a text is written does not change with it.
        satire = [
            component != "ai_tampered" and _satire(i["text"])
            for i, g in zip(items, groups, strict=True)
            if g == held
        ]
        probabilities = [0.0 if s else p for p, s in zip(probabilities, satire, strict=True)]
        pairs[held] = list(zip(ys, rules, probabilities, strict=True))
        lengths[held] = [
            len(read(i["text"])) for i, g in zip(items, groups, strict=True) if g == held
        ]
    table: dict[str, dict[str, tuple[float, float]]] = {}
    for held, own in pairs.items():
        others = [p for h, ps in pairs.items() if h != held for p in ps]
        shapes = {gated: _best_cue(others, gated) for gated in (False, True)}
        stack = _stacked(others)
        ways: dict[str, Callable[[float, float], bool]] = {
            "rules before tuning": lambda s, p: s >= FLAG,
            "model alone (p >= 0.5)": lambda s, p: p >= 0.5,
            "max(rules, 100 p)": lambda s, p: max(s, 100 * p) >= FLAG,
            "cue alone or beside lexicon, shape from other batches": _cue_way(shapes[False], False),
            "cue beside lexicon only, shape from other batches": _cue_way(shapes[True], True),
            "stack (fit on other batches)": stack,
        }
        if component == "techniques":  # the only component that ships the cue
            ways[f"cue beside lexicon only, {CUE_WEIGHT}/{CUE_FROM} (shipped to round 10)"] = (
                _cue_way((CUE_WEIGHT, CUE_FROM), True)
            )
        if component == "ai_tampered":
            shipped = f"rules + learned style signal, {WEIGHTS['learned_style']}/{LEARNED_FROM}"
            ways[f"{shipped} (shipped)"] = lambda s, p: _style_score(s, p) >= FLAG
        ys = [y for y, _, _ in own]
        table[held] = {
            name: precision_recall(ys, [way(s, p) for _, s, p in own]) for name, way in ways.items()
        }
        if component == "techniques":
            shipped = f"cue beside lexicon, alone from p {LONE_FROM} in {LONE_MIN_WORDS}+ words"
            flags = [
                cue_score(s, p, CUE_WEIGHT, CUE_FROM, gated=not stands_alone(p, n)) >= FLAG
                for (_, s, p), n in zip(own, lengths[held], strict=True)
            ]
            table[held][f"{shipped} (shipped)"] = precision_recall(ys, flags)
    return {"component": component, "models": chosen, "table": table}


def render(result: Mapping[str, Any]) -> list[str]:
    """The study as a Markdown table: P/R per held-out batch and the mean."""
    table = result["table"]
    names = list(next(iter(table.values())))
    lines = [
        f"{result['component']}: models chosen {result['models']}",
        "| way | " + " | ".join(f"{h} P/R" for h in BATCHES) + " | mean P/R |",
        "|---" * (len(BATCHES) + 2) + "|",
    ]
    for name in names:
        cells = [table[h][name] for h in BATCHES]
        n = len(cells)
        mean = (sum(c[0] for c in cells) / n, sum(c[1] for c in cells) / n)
        shown = " | ".join(f"{p:.2f}/{r:.2f}" for p, r in [*cells, mean])
        lines.append(f"| {name} | {shown} |")
    return lines


def letter_of(item_id: str) -> str:
    """Any dev batch's letter (`ro-t-012` → T, `ro-o-012` → O), or ORIGINAL for the first
    batch (`ro-news-1`)."""
    mark = item_id.split("-")[1]
    return mark.upper() if len(mark) == 1 else ORIGINAL


def model_by_batch(component: str) -> list[str]:
    """The model alone, p >= 0.5, on each batch of dev left out in turn (every batch,
    the later ones too; trained on all the others with the shipped setting, C of
    train_text_model): a Markdown table of precision/recall per batch and over all."""
    from sklearn.linear_model import LogisticRegression

    from scripts.train_text_model import C, design_matrix

    items = read_dev()
    read = words_for(component)
    x = design_matrix([i["text"] for i in items], read=read)
    labels = [i["expected"][component] == "high" for i in items]
    groups = [letter_of(i["id"]) for i in items]
    flags = [False] * len(items)
    for held in sorted(set(groups)):
        train = [g != held for g in groups]
        lr = LogisticRegression(
            C=C, class_weight="balanced", solver="lbfgs", max_iter=5000, random_state=SEED
        ).fit(_rows(x, train), [y for y, t in zip(labels, train, strict=True) if t])
        at = [k for k, t in enumerate(train) if not t]
        for k, p in zip(at, lr.predict_proba(_rows(x, [not t for t in train]))[:, 1], strict=True):
            flags[k] = p >= 0.5
    lines = [f"| {component}: model alone, held out | P/R | positives |", "|---|---|---|"]
    for held in [*sorted(set(groups)), "all"]:
        at = [k for k, g in enumerate(groups) if held in ("all", g)]
        p, r = precision_recall([labels[k] for k in at], [flags[k] for k in at])
        lines.append(f"| {held} | {p:.2f}/{r:.2f} | {sum(labels[k] for k in at)} |")
    return lines


@click.command()
@click.option(
    "--component", type=click.Choice(["techniques", "claims", "ai_tampered"]), multiple=True
)
@click.option("--json", "as_json", is_flag=True)
@click.option(
    "--every-batch",
    is_flag=True,
    help="only the model alone, on every batch left out in turn (no rules before tuning)",
)
def main(component: tuple[str, ...], as_json: bool, every_batch: bool) -> None:
    """Leave-one-batch-out table of rules, model and combinations."""
    if every_batch:
        for name in component or ("techniques", "claims", "ai_tampered"):
            click.echo("\n".join([*model_by_batch(name), ""]))
        return
    before = {held: rule_scores_at(commit) for held, commit in RULES_BEFORE.items()}
    results = [study(c, before) for c in component or ("techniques", "claims")]
    if as_json:
        click.echo(json.dumps(results, indent=1))
        return
    for result in results:
        click.echo("\n".join([*render(result), ""]))


if __name__ == "__main__":
    main()
