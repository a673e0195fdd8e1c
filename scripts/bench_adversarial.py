"""Time every text analyser on hostile inputs and report the worst time per 10,000 characters.

Each analyser runs on every adversarial input (digit runs, overlong host labels,
100,000-character words, punctuation and whitespace floods, zero-width and mixed
scripts, …) at each size; a measurement is the best CPU time of `--repeat` rounds
over the whole set, and an analyser's figure is its worst measurement scaled to
10,000 characters. The target
is at most 50 ms per 10,000 characters: linear, and fast enough that no input holds a
worker for long.

    python scripts/bench_adversarial.py [--sizes 10000,50000,100000] [--repeat 3] [--out FILE]
"""

from __future__ import annotations

import itertools
import json
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import click

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from workers.analysis.claims import UNVERIFIABLE, extract_claims, match_locally, score_claims
from workers.analysis.domains import assess_domains
from workers.analysis.factcheck_store import read_fact_checks
from workers.analysis.machine_text import assess_machine_text
from workers.analysis.normalise import normalise
from workers.analysis.techniques import assess_techniques

TARGET_MS_PER_10K = 50.0
DEFAULT_SIZES = (10_000, 50_000, 100_000)


def _repeat(unit: str, size: int) -> str:
    """`unit` repeated to exactly `size` characters."""
    return (unit * (size // len(unit) + 1))[:size]


def _urls(host_of: Callable[[int], str], size: int) -> str:
    parts, total, i = [], 0, 0
    while total < size:
        parts.append(f"https://{host_of(i)}/x ")
        total += len(parts[-1])
        i += 1
    return "".join(parts)[:size]


# Each input family: a name and how to build it at a given size.
INPUTS: Mapping[str, Callable[[int], str]] = {
    "digits": lambda n: "7" * n,
    "digit_groups": lambda n: _repeat("1,2.", n),
    "digits_percent": lambda n: "7" * (n - 1) + "%",
    "years": lambda n: _repeat("1999 ", n),
    "single_word": lambda n: "a" * n,
    "single_upper_word": lambda n: "A" * n,
    "upper_words": lambda n: _repeat("SHOCK ", n - 1) + "x",
    "exclamations": lambda n: "!" * n,
    "question_marks": lambda n: "?" * n,
    "mixed_punctuation": lambda n: _repeat("!?.,;:-", n),
    "dots": lambda n: "." * n,
    "spaces": lambda n: " " * n,
    "newlines": lambda n: "\n" * n,
    "mixed_whitespace": lambda n: _repeat(" \n\t\r", n),
    "short_sentences": lambda n: _repeat("Da. ", n),
    "abbreviations": lambda n: _repeat("Dr. ", n),
    "long_sentence": lambda n: _repeat("cuvant ", n),
    "capitalised_words": lambda n: _repeat("Ion Popescu ", n),
    "hyphenated_word": lambda n: _repeat("a-", n),
    "quotes": lambda n: _repeat('"„', n),
    "mixed_scripts": lambda n: _repeat("рrореgаndа ШОCК ", n),
    "fullwidth": lambda n: _repeat("ＳＨＯＣＫ ", n),
    "zero_width_flood": lambda n: "\u200b" * n,
    "zero_width_interleaved": lambda n: _repeat("a\u200b", n),
    "combining_marks": lambda n: "a" + _repeat("\u0301\u0316", n - 1),
    "bidi_controls": lambda n: _repeat("\u202e\u2066x", n),
    "emoji": lambda n: _repeat("😀🔥", n),
    "math_letters": lambda n: _repeat("𝐒𝐇𝐎𝐂𝐊 ", n),
    "long_label_urls": lambda n: _urls(lambda i: f"{'a' * 4900}{i}.com", n),
    "long_host_urls": lambda n: _urls(lambda i: ".".join(["abcdefgh"] * 600) + f"{i}.ro", n),
    "many_urls": lambda n: _urls(lambda i: f"digi{i}4.xyz", n),
    "many_bare_domains": lambda n: _repeat("a.b.c.d.e.f.g.h.com ", n),
    "dotted_label_run": lambda n: _repeat("a.", n),
    "ip_notations": lambda n: _urls(lambda i: ("0x7f.0.0.1", "2130706433", "127.1")[i % 3], n),
}


# Where the next made-up word starts: each text of distinct sentences takes new ones.
_NEXT_WORD = itertools.count()
WORD_LETTERS = 5  # 26**5, some 12 million words: hundreds of 100,000-character texts


def _distinct_sentences(size: int) -> str:
    """One-word sentences ("Aaaab. Aaaac. …"), none the same, and none the same as in any
    text built before: a memo of sentences or words read before must not hide what reading
    each one costs."""
    parts, total = [], 0
    while total < size:
        i = next(_NEXT_WORD)
        word = "".join(chr(97 + (i // 26**k) % 26) for k in range(WORD_LETTERS - 1, -1, -1))
        parts.append(f"{word.capitalize()}. ")
        total += len(parts[-1])
    return "".join(parts)[:size]


# Input families built anew for every round.
FRESH_INPUTS: Mapping[str, Callable[[int], str]] = {
    "distinct_sentences": _distinct_sentences,
}


def analysers() -> dict[str, Callable[[str], Any]]:
    """The analysers timed, by name: the pure part of each component, and normalisation."""
    checks = [c.model_dump() for c in read_fact_checks()]

    def claims(text: str) -> float:
        found = extract_claims(text)
        matched = match_locally(found, checks)
        return score_claims(found, matched) + score_claims(found, [UNVERIFIABLE] * len(found))

    return {
        "normalise": normalise,
        "techniques": assess_techniques,
        "ai_tampered": assess_machine_text,
        "claims": claims,
        "domain": assess_domains,
    }


@dataclass(frozen=True)
class Measurement:
    """One analyser on one input at one size: the best CPU time of the rounds (and wall)."""

    analyser: str
    input: str
    chars: int
    seconds: float
    wall_seconds: float = 0.0

    @property
    def ms_per_10k(self) -> float:
        return per_10k_ms(self.seconds, self.chars)


def per_10k_ms(seconds: float, chars: int) -> float:
    """Milliseconds per 10,000 characters of input."""
    return 1000.0 * seconds * 10_000 / max(chars, 1)


def worst_by_analyser(measurements: Iterable[Measurement]) -> dict[str, Measurement]:
    """For each analyser, its measurement with the highest time per 10,000 characters."""
    worst: dict[str, Measurement] = {}
    for m in measurements:
        if m.analyser not in worst or m.ms_per_10k > worst[m.analyser].ms_per_10k:
            worst[m.analyser] = m
    return worst


def markdown_table(worst: Mapping[str, Measurement], target: float = TARGET_MS_PER_10K) -> str:
    """The worst figure of each analyser as a markdown table, with the target verdict."""
    lines = [
        "| analyser | worst CPU ms / 10,000 chars | on input (chars) | total ms | ≤ target |",
        "|---|---|---|---|---|",
    ]
    for name, m in worst.items():
        ok = "yes" if m.ms_per_10k <= target else "**no**"
        lines.append(
            f"| {name} | {m.ms_per_10k:.1f} | {m.input} ({m.chars:,}) "
            f"| {1000 * m.seconds:.0f} | {ok} |"
        )
    return "\n".join(lines)


def time_once(run: Callable[[str], Any], text: str) -> tuple[float, float]:
    """CPU and wall-clock seconds of one `run(text)`.

    The figures use CPU time: on a machine shared with other work, wall time also
    measures the neighbours; the analysers are single-threaded, so on an idle machine
    the two agree.
    """
    cpu, wall = time.process_time(), time.perf_counter()
    run(text)
    return time.process_time() - cpu, time.perf_counter() - wall


def measure(sizes: Iterable[int], repeat: int, only: str | None) -> list[Measurement]:
    """Time every analyser on every input at every size; the best of `repeat` rounds each.

    Rounds go over the whole matrix, so the runs of one measurement are minutes apart
    and a burst of load from other processes on a shared machine does not spoil all.
    """
    runs = analysers()
    for run in runs.values():
        run("Warm-up: caches, compiled patterns, look-alikes (ș а\u200b). https://digi24.ro 12%")
    sizes = list(sizes)
    texts = {
        (name, size): build(size)
        for size in sizes
        for name, build in INPUTS.items()
        if not only or only in name
    }
    best: dict[tuple[str, str, int], tuple[float, float]] = {}
    for _ in range(max(repeat, 1)):
        texts |= {
            (name, size): build(size)
            for size in sizes
            for name, build in FRESH_INPUTS.items()
            if not only or only in name
        }
        for (input_name, size), text in texts.items():
            for name, run in runs.items():
                key = (name, input_name, size)
                best[key] = min(best.get(key, (float("inf"), 0.0)), time_once(run, text))
    return [
        Measurement(name, input_name, len(texts[input_name, size]), cpu, wall)
        for (name, input_name, size), (cpu, wall) in best.items()
    ]


@click.command()
@click.option("--sizes", default=",".join(map(str, DEFAULT_SIZES)), help="Comma-separated.")
@click.option("--repeat", default=3, show_default=True, help="Rounds; each figure is the best.")
@click.option("--only", default=None, help="Only inputs whose name contains this.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None)
@click.option("--verbose", is_flag=True, help="Print every measurement.")
def main(sizes: str, repeat: int, only: str | None, out: Path | None, verbose: bool) -> None:
    """Run the adversarial benchmark and print the worst time of each analyser."""
    measurements = measure([int(s) for s in sizes.split(",")], repeat, only)
    if verbose:
        for m in sorted(measurements, key=lambda m: -m.ms_per_10k):
            click.echo(f"{m.analyser:12} {m.input:24} {m.chars:>7} {m.ms_per_10k:9.1f} ms/10k")
    worst = worst_by_analyser(measurements)
    click.echo(markdown_table(worst))
    if out:
        report = {
            "target_ms_per_10k": TARGET_MS_PER_10K,
            "worst": {name: {**asdict(m), "ms_per_10k": m.ms_per_10k} for name, m in worst.items()},
            "measurements": [{**asdict(m), "ms_per_10k": m.ms_per_10k} for m in measurements],
        }
        out.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
