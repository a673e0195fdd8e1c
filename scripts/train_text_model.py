"""Train the learned wording model on the development texts and write it for the workers.

Logistic regression (scikit-learn, a development dependency only) over the hashed
character n-grams of `workers/analysis/text_features.py`, balanced classes, a fixed solver
and seed: the same input gives the same file. The label is the techniques component's
(`wording_model.json`), the claims component's (`claims_model.json`) or ai_tampered's
(`machine_text_model.json`, which reads every word whole: how a text is written does not
change inside a quotation).
Only `scripts/evaluation/dev.jsonl` is read, never the frozen test part. The file holds the
weights quantised to 16 bits and a few texts with the probabilities this training run gave
them, which the unit tests compare with the workers' pure-Python inference.

    python scripts/train_text_model.py [--component techniques|claims|ai_tampered] [--out FILE]

The settings (character view, 2^15 slots, C=30) were chosen by leave-one-batch-out
cross-validation on dev (scripts/study_text_model.py; docs/analysis.md, "Learned wording"
and "Learned style").
"""

from __future__ import annotations

import base64
import hashlib
import json
import sys
from array import array
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from workers.analysis.datafiles import data_path
from workers.analysis.machine_text import style_words
from workers.analysis.techniques import context_words
from workers.analysis.text_features import SharedWord, features
from workers.analysis.wording_model import (
    CLAIMS_MODEL_FILE,
    MACHINE_TEXT_MODEL_FILE,
    MODEL_FILE,
    WordingModelFile,
    from_file,
)

DEV = Path(__file__).parent / "evaluation" / "dev.jsonl"
BUCKETS = 2**15
# Inverse regularisation strength: the best of 0.1-30 by leave-one-batch-out on dev (for
# claims: on blind set E, trained on dev and blind set D).
C = 30.0
# Each model's file and the component whose label it learns.
FILES = {
    "techniques": MODEL_FILE,
    "claims": CLAIMS_MODEL_FILE,
    "ai_tampered": MACHINE_TEXT_MODEL_FILE,
}
SEED = 0
# Quantisation step: the largest weight becomes ±32767.
INT16_MAX = 32767
# The quantised model must give every dev text this close to the fitted model's probability.
MAX_QUANTISATION_ERROR = 1e-3
# Reference texts written into the file: dev texts of both labels and both languages.
REFERENCE_IDS = ("ro-news-1", "en-n-prop-3", "ro-b-040", "en-c-027", "en-b-045", "ro-c-054")
# How a model reads a text: its words, each with the share of it that counts.
Reader = Callable[[str], list[SharedWord]]
# ai_tampered's: machine-written texts in both languages beside human ones.
MACHINE_REFERENCE_IDS = ("ro-news-1", "en-n-prop-3", "ro-ai-1", "en-ai-5", "ro-b-040", "en-c-027")


# How each component's model reads a text (the `words` its file records): ai_tampered's
# every word whole, the others' as their context leaves them.
READS = {"techniques": "context", "claims": "context", "ai_tampered": "whole"}
READERS: dict[str, Reader] = {"context": context_words, "whole": style_words}


def words_for(component: str) -> Reader:
    """How the component's model reads a text."""
    return READERS[READS[component]]


def read_dev() -> list[dict[str, Any]]:
    """The development texts (the frozen test part is never read here)."""
    return [json.loads(line) for line in DEV.read_text(encoding="utf-8").splitlines() if line]


def design_matrix(texts: list[str], buckets: int = BUCKETS, read: Reader = context_words) -> Any:
    """Texts as a sparse matrix of the workers' own features."""
    from scipy.sparse import csr_matrix

    rows, cols, values = [], [], []
    for row, text in enumerate(texts):
        for col, value in features(read(text), buckets).items():
            rows.append(row)
            cols.append(col)
            values.append(value)
    return csr_matrix((values, (rows, cols)), shape=(len(texts), buckets))


def fit(
    texts: list[str],
    labels: list[bool],
    c: float = C,
    read: Reader = context_words,
) -> Any:
    """The fitted logistic regression (deterministic: lbfgs, seeded)."""
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(
        C=c, class_weight="balanced", solver="lbfgs", max_iter=5000, random_state=SEED
    )
    return model.fit(design_matrix(texts, read=read), labels)


def model_file(
    model: Any, items: list[dict[str, Any]], component: str = "techniques"
) -> WordingModelFile:
    """The file's content: quantised weights and reference probabilities."""
    weights = model.coef_[0]
    scale = float(max(abs(weights))) / INT16_MAX
    quantised = array("h", (round(w / scale) for w in weights))
    if sys.byteorder != "little":
        quantised.byteswap()
    by_id = {item["id"]: item["text"] for item in items}
    whole = READS[component] == "whole"
    texts = [by_id[i] for i in (MACHINE_REFERENCE_IDS if whole else REFERENCE_IDS)]
    fitted = model.predict_proba(design_matrix(texts, read=words_for(component)))[:, 1]
    view = (
        "every word whole (text_features.whole_words)"
        if whole
        else "the words as their context leaves them (techniques.context_words)"
    )
    return WordingModelFile(
        about="Logistic regression over hashed character 3-5-grams "
        f"(workers/analysis/text_features.py) of {view}; "
        f"label: {component} high. Written by scripts/train_text_model.py.",
        trained_on=f"scripts/evaluation/dev.jsonl, {len(items)} texts, sha256 "
        f"{hashlib.sha256(DEV.read_bytes()).hexdigest()}",
        buckets=BUCKETS,
        bias=round(float(model.intercept_[0]), 6),
        scale=scale,
        weights=base64.b64encode(quantised.tobytes()).decode("ascii"),
        words=READS[component],
        reference=[
            {"text": t, "probability": round(float(p), 6)}
            for t, p in zip(texts, fitted, strict=True)
        ],
    )


def quantisation_error(
    model: Any,
    spec: WordingModelFile,
    texts: list[str],
    read: Reader = context_words,
) -> float:
    """Largest difference between the fitted and the shipped (quantised) model's output."""
    fitted = model.predict_proba(design_matrix(texts, read=read))[:, 1]
    shipped = from_file(spec)
    return max(abs(shipped.probability(read(t)) - p) for t, p in zip(texts, fitted, strict=True))


@click.command()
@click.option(
    "--component",
    type=click.Choice(sorted(FILES)),
    default="techniques",
    show_default=True,
    help="the label the model learns",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="default: the component's file in workers/analysis/data/",
)
def main(component: str, out: Path | None) -> None:
    """Fit on every dev text and write the model file."""
    out = out or data_path(FILES[component])
    items = read_dev()
    texts = [i["text"] for i in items]
    read = words_for(component)
    model = fit(texts, [i["expected"][component] == "high" for i in items], read=read)
    spec = model_file(model, items, component)
    error = quantisation_error(model, spec, texts, read)
    if error > MAX_QUANTISATION_ERROR:
        raise click.ClickException(f"quantised model differs by {error:.4f} from the fitted one")
    out.write_text(json.dumps(spec.model_dump(), ensure_ascii=False, indent=1) + "\n", "utf-8")
    click.echo(f"{out}: {out.stat().st_size:,} bytes; quantisation error {error:.2e}")


if __name__ == "__main__":
    main()
