"""Manipulation and propaganda techniques: lexicon and pattern matching, text in, findings out.

The lexicon lives in `data/techniques.yaml`; this module only compiles and applies it.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from workers.analysis.datafiles import load
from workers.analysis.findings import (
    MAX_FINDINGS,
    MAX_SUMMARY,
    Finding,
    diminishing_sum,
    evidence_quote,
    saturating_score,
)
from workers.analysis.normalise import normalise
from workers.analysis.text import clip, fold


@dataclass(frozen=True)
class Rule:
    """One compiled matcher of a technique."""

    technique: str
    weight: float
    pattern: re.Pattern[str]
    case_sensitive: bool = False


@dataclass(frozen=True)
class Lexicon:
    """The compiled rules and the human names ({en, ro}) of each technique."""

    rules: tuple[Rule, ...]
    labels: Mapping[str, Mapping[str, str]]

    def label(self, technique: str, language: str) -> str:
        return self.labels.get(technique, {}).get(language, technique.replace("_", " "))


@dataclass(frozen=True)
class TechniqueReport:
    """Findings sorted by position, per-technique totals and the resulting 0-100 risk."""

    score: float
    findings: tuple[Finding, ...]
    totals: Mapping[str, float] = field(default_factory=dict)


def term_pattern(term: str) -> str:
    """Regex source of one lexicon term, matched on folded text at word boundaries."""
    source = re.escape(fold(term.strip()))
    # Possessive and bounded: a wildcard takes the rest of its word and never gives it
    # back, and the words of a term are a few spaces apart at most.
    source = source.replace(r"\*", r"\w*+").replace(r"\ ", r"\s{1,8}+").replace("'", "['’]")
    return source


def compile_lexicon(spec: Mapping[str, Any]) -> Lexicon:
    """Compile the YAML structure of `data/techniques.yaml`."""
    rules: list[Rule] = []
    labels: dict[str, Mapping[str, str]] = {}
    for name, entry in spec["techniques"].items():
        labels[name] = entry.get("label", {})
        weight = float(entry["weight"])
        terms = [t for group in entry.get("terms", {}).values() for t in group]
        if terms:
            # Longest first, so "nu vor să știți" wins over a shorter overlapping term.
            alternation = "|".join(sorted({term_pattern(t) for t in terms}, key=len, reverse=True))
            rules.append(Rule(name, weight, re.compile(rf"(?<!\w)(?:{alternation})(?!\w)")))
        for pattern in entry.get("patterns", []):
            sensitive = bool(pattern.get("case_sensitive", False))
            rules.append(
                Rule(
                    name,
                    float(pattern.get("weight", weight)),
                    re.compile(pattern["regex"], 0 if sensitive else re.IGNORECASE),
                    sensitive,
                )
            )
    return Lexicon(tuple(rules), labels)


@lru_cache(maxsize=1)
def default_lexicon() -> Lexicon:
    """The shipped lexicon, compiled once per process."""
    return compile_lexicon(load("techniques.yaml"))


def find_techniques(text: str, lexicon: Lexicon | None = None) -> list[Finding]:
    """Every lexicon and pattern match in `text`, one finding per technique and span.

    Matching runs on the normalised text (no invisible characters, look-alikes folded);
    each finding's span and quote are the original text's.
    """
    lexicon = lexicon or default_lexicon()
    clean = normalise(text)
    folded = fold(clean.text)
    found: list[Finding] = []
    for rule in lexicon.rules:
        haystack = clean.text if rule.case_sensitive else folded
        for match in rule.pattern.finditer(haystack):
            if match.end() > match.start():
                start, end = clean.span(*match.span())
                quote = evidence_quote(text, start, end)
                found.append(Finding(rule.technique, start, end, quote, rule.weight))
    return _without_overlaps(found)


def _without_overlaps(found: Iterable[Finding]) -> list[Finding]:
    """Drop a finding that sits inside a longer one of the same technique."""
    kept: list[Finding] = []
    for f in sorted(found, key=lambda f: (f.kind, f.start, -(f.end - f.start))):
        last = kept[-1] if kept else None
        if last and last.kind == f.kind and f.start < last.end:
            continue
        kept.append(f)
    return sorted(kept, key=lambda f: (f.start, f.kind))


def score_findings(findings: Iterable[Finding]) -> tuple[float, dict[str, float]]:
    """Risk 0-100 from findings: repeats of a technique diminish, distinct techniques add up."""
    weights: dict[str, list[float]] = defaultdict(list)
    for f in findings:
        weights[f.kind].append(f.weight)
    totals = {kind: round(diminishing_sum(ws), 3) for kind, ws in weights.items()}
    return saturating_score(sum(totals.values())), totals


def assess_techniques(text: str, lexicon: Lexicon | None = None) -> TechniqueReport:
    """Find the techniques in `text` and score them."""
    findings = find_techniques(text, lexicon)
    score, totals = score_findings(findings)
    return TechniqueReport(score, tuple(findings), totals)


def with_model_findings(
    text: str,
    report: TechniqueReport,
    proposals: Iterable[tuple[str, str]],
    lexicon: Lexicon | None = None,
) -> TechniqueReport:
    """Add (technique, quote) pairs proposed by a language model, keeping only verifiable ones.

    A proposal counts only if its technique is known and its quote occurs in the text,
    so a model cannot invent evidence; it gets the technique's lexicon weight.
    """
    lexicon = lexicon or default_lexicon()
    weights = {r.technique: r.weight for r in lexicon.rules}
    clean = normalise(text)
    folded = fold(clean.text)
    extra = []
    for technique, quote in proposals:
        needle = fold(normalise(quote.strip()).text)
        at = folded.find(needle) if needle else -1
        if technique in weights and at >= 0:
            start, end = clean.span(at, at + len(needle))
            quoted = evidence_quote(text, start, end)
            extra.append(Finding(technique, start, end, quoted, weights[technique], "llm"))
    findings = _without_overlaps([*report.findings, *extra])
    score, totals = score_findings(findings)
    return TechniqueReport(score, tuple(findings), totals)


def report_data(report: TechniqueReport, lexicon: Lexicon | None = None) -> dict[str, Any]:
    """The JSON-ready evidence of a report: capped findings and a summary in EN and RO."""
    lexicon = lexicon or default_lexicon()
    strongest = sorted(report.findings, key=lambda f: -f.weight)
    top = _one_per_technique(strongest)[:MAX_SUMMARY]
    return {
        "techniques": dict(sorted(report.totals.items(), key=lambda kv: -kv[1])),
        "findings": [f.as_dict() for f in report.findings[:MAX_FINDINGS]],
        "finding_count": len(report.findings),
        "summary": [f'{lexicon.label(f.kind, "en")}: "{clip(f.text, 60)}"' for f in top],
        "summary_ro": [f"{lexicon.label(f.kind, 'ro')}: „{clip(f.text, 60)}”" for f in top],
    }


def _one_per_technique(findings: Iterable[Finding]) -> list[Finding]:
    seen: set[str] = set()
    unique = []
    for f in findings:
        if f.kind not in seen:
            seen.add(f.kind)
            unique.append(f)
    return unique
