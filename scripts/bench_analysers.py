"""The analysers' speed on ordinary text: median CPU time per 5,000-character text, one core.

Texts are built from the development part of the evaluation set (its sentences shuffled
and joined until 5,000 characters: Romanian, English and mixed), so the vocabulary is the
one the analysers meet in use. Each analyser is warmed first (lexicons compiled, lemma
dictionaries loaded), as in a worker's analysis process. Target: a median of at most 15 ms
each.

    python scripts/bench_analysers.py [--texts 60] [--chars 5000] [--seed 7]
"""

from __future__ import annotations

import json
import random
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_adversarial import time_once

from workers.analysis.claims import UNVERIFIABLE, extract_claims, score_claims
from workers.analysis.domains import assess_domains
from workers.analysis.machine_text import assess_machine_text
from workers.analysis.normalise import normalise
from workers.analysis.techniques import assess_techniques

DEV = Path(__file__).resolve().parent / "evaluation" / "dev.jsonl"
TARGET_MEDIAN_MS = 15.0


def analysers() -> dict[str, Callable[[str], Any]]:
    """What a worker's analysis process runs on a text. For claims, extraction and scoring:
    matching against the fact checks is PostgreSQL's work (pg_trgm) in a worker."""

    def claims(text: str) -> float:
        found = extract_claims(text)
        return score_claims(found, [UNVERIFIABLE] * len(found))

    return {
        "normalise": normalise,
        "techniques": assess_techniques,
        "ai_tampered": assess_machine_text,
        "claims": claims,
        "domain": lambda text: assess_domains(text, None),
    }


def sentences(lang: str | None) -> list[str]:
    """The development texts' sentences, of one language or all."""
    found = []
    for line in DEV.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        if lang is None or item["lang"] == lang:
            found += [s.strip() + "." for s in item["text"].split(".") if s.strip()]
    return found


def text_of(pool: list[str], chars: int, rng: random.Random) -> str:
    """Sentences drawn from `pool` until the text is `chars` long."""
    parts: list[str] = []
    while sum(len(p) + 1 for p in parts) < chars:
        parts.append(rng.choice(pool))
    return " ".join(parts)[:chars]


@click.command()
@click.option("--texts", default=60, show_default=True, help="texts per language mix")
@click.option("--chars", default=5000, show_default=True)
@click.option("--seed", default=7, show_default=True)
def main(texts: int, chars: int, seed: int) -> None:
    """Print a table of median and p90 CPU ms per text, per analyser and language mix."""
    rng = random.Random(seed)
    mixes = {"ro": sentences("ro"), "en": sentences("en"), "mixed": sentences(None)}
    corpus = {mix: [text_of(pool, chars, rng) for _ in range(texts)] for mix, pool in mixes.items()}
    heads = " | ".join(f"{m} median / p90 ms" for m in corpus)
    print(f"| analyser | {heads} | ≤ {TARGET_MEDIAN_MS:.0f} ms |")
    print(f"|---|{'---|' * len(corpus)}---|")
    for name, run in analysers().items():
        run(corpus["mixed"][0])  # warm: lexicons, dictionaries, caches of a process
        cells, worst = [], 0.0
        for texts_of_mix in corpus.values():
            times = sorted(1000 * time_once(run, t)[0] for t in texts_of_mix)
            median = statistics.median(times)
            worst = max(worst, median)
            cells.append(f"{median:.1f} / {times[int(0.9 * len(times))]:.1f}")
        print(f"| {name} | {' | '.join(cells)} | {'yes' if worst <= TARGET_MEDIAN_MS else 'no'} |")


if __name__ == "__main__":
    main()
