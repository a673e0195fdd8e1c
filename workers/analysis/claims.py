"""Check-worthy claims: extraction (text in, claims out) and the risk of verified claims.

Cue lists and risk levels live in `data/claims.yaml`. Verification (the fact-check
store, an evidence provider) happens elsewhere; this module scores its outcome.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from workers.analysis.datafiles import load
from workers.analysis.findings import combine_probabilities, evidence_quote
from workers.analysis.normalise import NormalisedText, normalise
from workers.analysis.techniques import term_pattern
from workers.analysis.text import Sentence, clip, comparison_form, fold, sentences

MAX_CLAIMS = 10
# Claims are looked up as sentences; a run-on paragraph is cut to a comparable length.
MAX_CLAIM_CHARS = 300
STRONG_CUES = frozenset({"superlative", "causal"})

# At most this many sentences are read: more than any article has, and the bound on
# the work a text of short sentences can ask for.
MAX_SENTENCES = 1500

# Each pattern starts only where a digit run starts and never backtracks into a run
# (possessive quantifiers), so a run of digits is read once: linear on any input.
_NUMBER = re.compile(r"(?<![\w.,])\d++(?:[.,]\d++)*+")
_PERCENT = re.compile(r"(?<!\d)\d++(?:[.,]\d++)?\s?%")
_YEAR = re.compile(r"\b(?:1[89]\d\d|20\d\d)\b")
_NUMERIC_DATE = re.compile(r"\b\d{1,2}[./-]\d{1,2}[./-]\d{2,4}\b")
# Romanian "mai" is both May and "more" ("cel mai"): only a day number makes it a date.
_DAY_OF_MAY = re.compile(r"(?i)\b\d{1,2}\s{1,3}mai\b")


@dataclass(frozen=True)
class Claim:
    """A sentence worth checking, where it is, and the cues that make it so."""

    text: str
    start: int
    end: int
    cues: tuple[str, ...]
    checkworthiness: float

    @property
    def strong(self) -> bool:
        return bool(STRONG_CUES & set(self.cues))


@dataclass(frozen=True)
class Verification:
    """What is known of one claim: a matching fact check, a provider's answer, or nothing."""

    status: Literal["matched", "evidence", "unverifiable"]
    rating: str | None = None
    similarity: float | None = None
    checked_claim: str | None = None
    source: str | None = None
    url: str | None = None


UNVERIFIABLE = Verification("unverifiable")


@dataclass(frozen=True)
class _Cues:
    weights: Mapping[str, float]
    factual: frozenset[str]
    minimum: float
    patterns: Mapping[str, re.Pattern[str]]
    not_names: frozenset[str]


def _terms(groups: Mapping[str, list[str]]) -> re.Pattern[str]:
    terms = sorted(
        {term_pattern(t) for group in groups.values() for t in group}, key=len, reverse=True
    )
    return re.compile(rf"(?<!\w)(?:{'|'.join(terms)})(?!\w)")


@lru_cache(maxsize=1)
def _cues() -> _Cues:
    spec = load("claims.yaml")
    return _Cues(
        weights=spec["cue_weights"],
        factual=frozenset(spec["factual_cues"]),
        minimum=float(spec["min_checkworthiness"]),
        patterns={
            "month": _terms(spec["months"]),
            "percentage": _terms(spec["percentage_words"]),
            "quantity": _terms(spec["quantity_words"]),
            "superlative": _terms(spec["superlatives"]),
            "causal": _terms(spec["causal"]),
        },
        not_names=frozenset(fold(w) for w in spec["not_names"]),
    )


def claim_policy() -> Mapping[str, Any]:
    """Risk levels and thresholds from `data/claims.yaml`."""
    return load("claims.yaml")


def sentence_cues(sentence: str) -> list[str]:
    """The check-worthiness cues present in one sentence."""
    cues = _cues()
    folded = fold(sentence)
    found = []
    if _PERCENT.search(sentence) or cues.patterns["percentage"].search(folded):
        found.append("percentage")
    if _NUMBER.search(_YEAR.sub("", sentence)) or cues.patterns["quantity"].search(folded):
        found.append("number")
    dated = (_YEAR, _NUMERIC_DATE, _DAY_OF_MAY)
    if any(p.search(sentence) for p in dated) or cues.patterns["month"].search(folded):
        found.append("date")
    if any(fold(w) not in cues.not_names for w in names(sentence)):
        found.append("named_entity")
    for cue in ("superlative", "causal"):
        if cues.patterns[cue].search(folded):
            found.append(cue)
    return found


def names(sentence: str) -> list[str]:
    """Capitalised words that are not the first word of the sentence or of a quote."""
    tokens = sentence.split()
    found = []
    for previous, token in itertools.pairwise(tokens):
        word = token.strip("\"'„“”«»()[],;")
        if (
            word[:1].isupper()
            and not previous.endswith((".", "!", "?", ":"))
            and token[:1].isalpha()
        ):
            found.append(word)
    return found


def extract_claims(text: str) -> list[Claim]:
    """Check-worthy sentences of `text`, the most check-worthy first, at most MAX_CLAIMS.

    Cues are read in the normalised text; each claim's span and text are the original's.
    """
    cues = _cues()
    clean = normalise(text)
    found = sentences(clean.text)[:MAX_SENTENCES]
    claims = [c for s in found if (c := _as_claim(s, cues, clean))]
    claims.sort(key=lambda c: (-c.checkworthiness, c.start))
    return claims[:MAX_CLAIMS]


def _as_claim(sentence: Sentence, cues: _Cues, clean: NormalisedText) -> Claim | None:
    found = sentence_cues(sentence.text)
    worth = min(1.0, sum(cues.weights[c] for c in found))
    if worth < cues.minimum or not cues.factual & set(found):
        return None
    start, end = clean.span(sentence.start, sentence.start + len(sentence.text[:MAX_CLAIM_CHARS]))
    text = evidence_quote(clean.original, start, end)
    return Claim(text, start, start + len(text), tuple(found), round(worth, 2))


def with_model_claims(
    text: str, claims: Sequence[Claim], quotes: Iterable[str], limit: int = MAX_CLAIMS
) -> list[Claim]:
    """Claims with a model's quotes added: only quotes found in the (normalised) text, not
    overlapping a claim already there, up to `limit`; spans are the original's."""
    clean = normalise(text)
    folded = fold(clean.text)
    merged = list(claims)
    for quote in quotes:
        needle = normalise(quote.strip()).text
        at = folded.find(fold(needle)) if needle else -1
        if at < 0 or len(merged) >= limit:
            continue
        start, end = clean.span(at, at + len(needle))
        if not any(c.start <= start < c.end for c in merged):
            cues = (*sentence_cues(needle), "llm")
            quoted = evidence_quote(text, start, end)
            merged.append(Claim(quoted, start, start + len(quoted), cues, 0.5))
    return merged


def claim_risk(claim: Claim, verification: Verification) -> float:
    """Risk 0-100 one claim contributes, given what is known of it."""
    policy = claim_policy()
    if verification.status == "unverifiable" or verification.rating is None:
        key = "unverifiable_strong_risk" if claim.strong else "unverifiable_risk"
        return float(policy[key])
    return float(policy["rating_risk"].get(verification.rating, policy["rating_risk"]["unproven"]))


def score_claims(claims: Sequence[Claim], verifications: Sequence[Verification]) -> float:
    """Component risk: verified claims combine as independent evidence; unverifiable ones
    add a capped caution."""
    policy = claim_policy()
    checked = [
        claim_risk(c, v)
        for c, v in zip(claims, verifications, strict=True)
        if v.status != "unverifiable"
    ]
    unverified = sum(
        claim_risk(c, v)
        for c, v in zip(claims, verifications, strict=True)
        if v.status == "unverifiable"
    )
    caution = min(float(policy["unverifiable_cap"]), unverified)
    return round(100.0 * combine_probabilities([r / 100 for r in [*checked, caution]]), 1)


def report_data(claims: Sequence[Claim], verifications: Sequence[Verification]) -> dict[str, Any]:
    """JSON-ready evidence: each claim with its cues and verification, and a summary."""
    rows = [_row(c, v) for c, v in zip(claims, verifications, strict=True)]
    ranked = sorted(rows, key=lambda r: -r["risk"])
    return {
        "claims": rows,
        "claim_count": len(rows),
        "unverifiable": sum(1 for r in rows if r["status"] == "unverifiable"),
        "summary": [_summary(r, "en") for r in ranked[:5]],
        "summary_ro": [_summary(r, "ro") for r in ranked[:5]],
    }


def _row(claim: Claim, verification: Verification) -> dict[str, Any]:
    return {
        "text": claim.text,
        "start": claim.start,
        "end": claim.end,
        "cues": list(claim.cues),
        "checkworthiness": claim.checkworthiness,
        "status": verification.status,
        "rating": verification.rating,
        "similarity": verification.similarity,
        "checked_claim": verification.checked_claim,
        "source": verification.source,
        "url": verification.url,
        "risk": claim_risk(claim, verification),
    }


_RATINGS_RO = {
    "false": "fals",
    "misleading": "înșelător",
    "mixed": "parțial adevărat",
    "true": "adevărat",
}


def _summary(row: Mapping[str, Any], language: str) -> str:
    quoted = clip(row["text"], 70)
    if row["status"] == "unverifiable":
        return f'"{quoted}": unverifiable' if language == "en" else f"„{quoted}”: neverificabil"
    rating = row["rating"] if language == "en" else _RATINGS_RO.get(row["rating"], row["rating"])
    via = row["source"] or "?"
    return (
        f'"{quoted}": rated {rating} ({via})'
        if language == "en"
        else f"„{quoted}”: evaluat {rating} ({via})"
    )


def match_locally(
    claims: Iterable[Claim], checks: Sequence[Mapping[str, Any]], threshold: float | None = None
) -> list[Verification]:
    """Verify claims against fact checks held in memory (evaluation, tests), ranked like pg_trgm."""
    from workers.analysis.similarity import claim_similarity

    threshold = float(claim_policy()["match_threshold"]) if threshold is None else threshold
    folded = [(comparison_form(c["claim"]), c) for c in checks]
    results = []
    for claim in claims:
        target = comparison_form(claim.text)
        scored = [(claim_similarity(key, target), check) for key, check in folded]
        best = max(scored, key=lambda s: s[0], default=(0.0, None))
        results.append(verification_from(best[1], best[0], threshold))
    return results


def verification_from(
    check: Mapping[str, Any] | None, score: float, threshold: float
) -> Verification:
    """A matched Verification when `check` is similar enough, else UNVERIFIABLE."""
    if check is None or score < threshold:
        return UNVERIFIABLE
    return Verification(
        "matched",
        check["rating"],
        round(score, 3),
        check["claim"],
        check.get("source"),
        check.get("url"),
    )
