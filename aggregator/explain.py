"""The verdict's explanation: the deterministic template, or the LLM gateway when configured."""

from __future__ import annotations

from typing import Any

import httpx

from aggregator.verdict import Verdict
from shared.settings import Settings
from workers.analysis.explanation import explain as template
from workers.analysis.explanation import explain_with_llm


def _components(results: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {
        c: {"status": r["status"], "score": r.get("score"), "data": r.get("data") or {}}
        for c, r in results.items()
    }


def explain(verdict: Verdict, results: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Romanian and English explanation citing the strongest findings of each component."""
    return template(verdict.label, verdict.score, verdict.confidence, _components(results))


async def explain_by_llm(
    http: httpx.AsyncClient,
    settings: Settings,
    verdict: Verdict,
    results: dict[str, dict[str, Any]],
) -> dict[str, str]:
    """The gateway's explanation; the template on any error, timeout or malformed reply."""
    return await explain_with_llm(
        http, settings, verdict.label, verdict.score, verdict.confidence, _components(results)
    )
