"""The adversarial benchmark's pure helpers, inputs and command line (no timing asserted)."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from scripts.bench_adversarial import (
    FRESH_INPUTS,
    INPUTS,
    Measurement,
    analysers,
    main,
    markdown_table,
    per_10k_ms,
    worst_by_analyser,
)


@pytest.mark.parametrize("name", INPUTS)
def test_every_input_has_the_size_asked_for(name: str) -> None:
    """Each hostile input is built at exactly the requested number of characters."""
    assert len(INPUTS[name](10_000)) == 10_000
    assert len(INPUTS[name](1_234)) == 1_234


def test_inputs_are_what_their_names_say() -> None:
    """A few spot checks: digits are digits, a single word has no space, floods are one char."""
    assert INPUTS["digits"](500).isdigit()
    assert " " not in INPUTS["single_word"](500)
    assert set(INPUTS["zero_width_flood"](500)) == {"\u200b"}
    assert "a" * 4900 in INPUTS["long_label_urls"](20_000)


@pytest.mark.parametrize("name", FRESH_INPUTS)
def test_every_fresh_input_has_the_size_asked_for(name: str) -> None:
    """An input built anew each round is as long as asked for, whatever the round."""
    assert len(FRESH_INPUTS[name](10_000)) == 10_000
    assert len(FRESH_INPUTS[name](1_234)) == 1_234


def test_distinct_sentences_repeat_none_within_or_across_texts() -> None:
    """No sentence repeats in one text or in the next one built: no memo can answer for it."""
    first = FRESH_INPUTS["distinct_sentences"](100_000).split(". ")[:-1]
    second = FRESH_INPUTS["distinct_sentences"](10_000).split(". ")[:-1]
    assert len(first) == len(set(first)) > 14_000
    assert len(second) > 1_400
    assert not set(first) & set(second)


def test_time_per_10k_characters_scales_by_length() -> None:
    """50 ms on 100,000 characters is 5 ms per 10,000; no characters do not divide by zero."""
    assert per_10k_ms(0.05, 100_000) == pytest.approx(5.0)
    assert per_10k_ms(0.01, 0) == pytest.approx(100_000.0)


def test_worst_measurement_per_analyser_is_the_slowest_per_character() -> None:
    """The worst figure is per 10,000 characters, not the longest total time."""
    rows = [
        Measurement("claims", "digits", 100_000, 0.20),  # 20 ms / 10k
        Measurement("claims", "dots", 10_000, 0.03),  # 30 ms / 10k
        Measurement("domain", "many_urls", 50_000, 0.01),
    ]
    worst = worst_by_analyser(rows)
    assert worst["claims"].input == "dots"
    assert worst["domain"].input == "many_urls"


def test_table_marks_analysers_over_the_target() -> None:
    """Each analyser is one markdown row with its worst figure, and "no" when over target."""
    table = markdown_table(
        {
            "claims": Measurement("claims", "digits", 100_000, 0.2),
            "domain": Measurement("domain", "many_urls", 10_000, 0.09),
        },
        target=50.0,
    )
    lines = table.splitlines()
    assert lines[0].startswith("| analyser | worst CPU ms")
    assert lines[2] == "| claims | 20.0 | digits (100,000) | 200 | yes |"
    assert lines[3] == "| domain | 90.0 | many_urls (10,000) | 90 | **no** |"


def test_every_component_is_benchmarked() -> None:
    """The four text analysers and normalisation are timed, each runnable on plain text."""
    runs = analysers()
    assert set(runs) == {"normalise", "techniques", "ai_tampered", "claims", "domain"}
    for run in runs.values():
        run("SHOCKING: 40% of https://rt.com readers agree!")


def test_command_prints_the_table_and_writes_json(tmp_path: Path) -> None:
    """`bench_adversarial.py --sizes … --only … --out FILE` prints a table and writes every run."""
    out = tmp_path / "bench.json"
    args = ["--sizes", "300", "--repeat", "1", "--only", "digits", "--out", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "| techniques |" in result.output
    report = json.loads(out.read_text())
    assert set(report["worst"]) == {"normalise", "techniques", "ai_tampered", "claims", "domain"}
    inputs = {m["input"] for m in report["measurements"]}
    assert inputs == {"digits", "digits_percent"}
    assert all(m["chars"] == 300 for m in report["measurements"])
    assert all({"seconds", "wall_seconds", "ms_per_10k"} <= set(m) for m in report["measurements"])
