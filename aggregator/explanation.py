"""The verdict's explanation in Romanian and English.

`template_explanation` is deterministic and cites the strongest findings of each component
(their `summary` / `summary_ro` lists); `llm_explanation` lets a configured gateway write it
instead and falls back to the template on any failure. `explain` / `explain_by_llm` are the
same for a computed `Verdict` and the session's recorded results, as the fan-in calls them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, Literal

import httpx

from aggregator.verdict import Verdict
from shared.constants import ANALYSIS_COMPONENTS
from shared.llm import LLM_ATTEMPTS, LLM_TIMEOUT_S, ExplanationReply, as_prompt, ask_json
from shared.settings import Settings

Lang = Literal["en", "ro"]

# Findings cited per component: enough to justify, short enough to read.
CITED_FINDINGS = 3

LABELS: Mapping[str, tuple[str, str]] = {
    # aggregator/verdict.py labels
    "low_risk": ("low risk", "risc scăzut"),
    "moderate_risk": ("moderate risk", "risc moderat"),
    "high_risk": ("high risk", "risc ridicat"),
    "critical_risk": ("critical risk", "risc critic"),
    "inconclusive": ("inconclusive", "neconcludent"),
    # older names, used by the original service
    "credible": ("credible", "credibil"),
    "questionable": ("questionable", "discutabil"),
    "misleading": ("misleading", "înșelător"),
    "low": ("low risk", "risc scăzut"),
    "moderate": ("moderate risk", "risc moderat"),
    "high": ("high risk", "risc ridicat"),
    "critical": ("critical risk", "risc critic"),
}
COMPONENT_NAMES: Mapping[str, tuple[str, str]] = {
    "techniques": ("Manipulation techniques", "Tehnici de manipulare"),
    "ai_tampered": ("AI-generated or edited content", "Conținut generat de AI sau modificat"),
    "claims": ("Factual claims", "Afirmații factuale"),
    "domain": ("Sources and domains", "Surse și domenii"),
}
STATUS_NAMES: Mapping[str, tuple[str, str]] = {
    "failed": ("the analysis failed", "analiza a eșuat"),
    "timeout": ("the analysis timed out", "analiza a depășit timpul"),
}


def label_words(label: str) -> tuple[str, str]:
    """(English, Romanian) words of a verdict label; unknown labels read as themselves."""
    plain = label.replace("_", " ")
    return LABELS.get(label, (plain, plain))


def _in(words: tuple[str, str], lang: Lang) -> str:
    """The `lang` member of an (English, Romanian) pair."""
    return words[0] if lang == "en" else words[1]


def template_explanation(
    label: str, score: float | None, confidence: float, components: Mapping[str, Mapping[str, Any]]
) -> dict[str, str]:
    """Explanation {"ro", "en"} of a verdict from its label, score, confidence and components."""
    return {
        "en": _explain(label, score, confidence, components, "en"),
        "ro": _explain(label, score, confidence, components, "ro"),
    }


def _explain(
    label: str,
    score: float | None,
    confidence: float,
    components: Mapping[str, Mapping[str, Any]],
    lang: Lang,
) -> str:
    words = _in(label_words(label), lang)
    percent = round(100 * confidence) if confidence <= 1 else round(confidence)
    if score is None:
        opening = _in(
            (
                "No component produced a result, so there is no verdict.",
                "Nicio componentă nu a produs un rezultat, deci nu există un verdict.",
            ),
            lang,
        )
    else:
        opening = _in(
            (
                f"Verdict: {words} (risk {score:.0f}/100, confidence {percent}%).",
                f"Verdict: {words} (risc {score:.0f}/100, încredere {percent}%).",
            ),
            lang,
        )
    order = [c for c in ANALYSIS_COMPONENTS if c in components] + sorted(
        set(components) - set(ANALYSIS_COMPONENTS)
    )
    return " ".join([opening, *(_component_line(c, components[c], lang) for c in order)])


def _component_line(name: str, outcome: Mapping[str, Any], lang: Lang) -> str:
    title = _in(COMPONENT_NAMES.get(name, (name, name)), lang)
    status = outcome.get("status", "ok")
    if status != "ok" or outcome.get("score") is None:
        reason = _in(STATUS_NAMES.get(status, ("no result", "niciun rezultat")), lang)
        return f"{title}: {_in(('not assessed', 'neevaluat'), lang)} ({reason})."
    data = outcome.get("data") or {}
    cited = _cited(data, lang)
    risk = _in(("risk", "risc"), lang)
    if not cited:
        nothing = _in(("nothing of concern found", "nu s-a găsit nimic îngrijorător"), lang)
        return f"{title} — {risk} {outcome['score']:.0f}/100: {nothing}."
    return f"{title} — {risk} {outcome['score']:.0f}/100: {'; '.join(cited)}."


def _cited(data: Mapping[str, Any], lang: Lang) -> list[str]:
    keys = ("summary", "summary_ro") if lang == "en" else ("summary_ro", "summary")
    for key in keys:
        items = data.get(key)
        if isinstance(items, list) and items:
            return [str(item).rstrip(".") for item in items[:CITED_FINDINGS]]
    return []


_SYSTEM = (
    "You explain the verdict of a content-analysis service to a general reader. Use only the "
    "facts given: the verdict and each component's score and findings. Be brief (at most 5 "
    "sentences per language), neutral and concrete. Answer only with JSON "
    '{"ro": "<Romanian explanation>", "en": "<English explanation>"}.'
)


async def llm_explanation(
    http: httpx.AsyncClient,
    settings: Settings,
    label: str,
    score: float | None,
    confidence: float,
    components: Mapping[str, Mapping[str, Any]],
) -> dict[str, str]:
    """An explanation written by the LLM gateway, or the template on any error or timeout."""
    template = template_explanation(label, score, confidence, components)
    if not settings.llm_url:
        return template
    facts = {
        "label": label,
        "score": score,
        "confidence": confidence,
        "components": {
            name: {
                "status": c.get("status"),
                "score": c.get("score"),
                "findings": (c.get("data") or {}).get("summary", [])[:5],
            }
            for name, c in components.items()
        },
        "template": template["en"],
    }
    try:
        async with asyncio.timeout(LLM_TIMEOUT_S * LLM_ATTEMPTS + 1):
            reply = await ask_json(http, settings, _SYSTEM, as_prompt(facts), ExplanationReply)
    except TimeoutError:
        reply = None
    return {"ro": reply.ro, "en": reply.en} if reply else template


def _components(results: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    return {
        c: {"status": r["status"], "score": r.get("score"), "data": r.get("data") or {}}
        for c, r in results.items()
    }


def explain(verdict: Verdict, results: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """Romanian and English explanation citing the strongest findings of each component."""
    return template_explanation(
        verdict.label, verdict.score, verdict.confidence, _components(results)
    )


async def explain_by_llm(
    http: httpx.AsyncClient,
    settings: Settings,
    verdict: Verdict,
    results: Mapping[str, Mapping[str, Any]],
) -> dict[str, str]:
    """The gateway's explanation; the template on any error, timeout or malformed reply."""
    return await llm_explanation(
        http, settings, verdict.label, verdict.score, verdict.confidence, _components(results)
    )
