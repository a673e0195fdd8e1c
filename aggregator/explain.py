"""The verdict's explanation, from the deterministic template of the analysis package."""

from __future__ import annotations

from typing import Any

from aggregator.verdict import Verdict


def explain(verdict: Verdict, results: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Romanian and English explanation citing the strongest findings of each component."""
    from workers.analysis.explanation import explain as template

    components = {
        c: {"status": r["status"], "score": r.get("score"), "data": r.get("data") or {}}
        for c, r in results.items()
    }
    return template(verdict.label, verdict.score or 0.0, verdict.confidence, components)
