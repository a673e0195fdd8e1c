"""Deeper analysis by the optional LLM gateway, merged only where it can be verified.

The model may add findings and claims, but each must quote the text verbatim; the
lexicon result stands when the gateway is absent, slow or off-schema.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import httpx

from shared.llm import ClaimsReply, TechniquesReply, as_prompt, ask_json
from shared.settings import Settings
from workers.analysis.claims import Claim, with_model_claims
from workers.analysis.techniques import TechniqueReport, default_lexicon, with_model_findings

T = TypeVar("T")
# Runs `fn(*args)` and returns its result: in this process, or in the analysis pool.
Merge = Callable[..., Awaitable[Any]]

# The model sees at most this much text: enough for a post or an article's body.
MAX_PROMPT_CHARS = 6000

_TECHNIQUES_SYSTEM = (
    "You detect manipulation and propaganda techniques in Romanian or English text. "
    'Answer only with JSON {"findings": [{"technique": ..., "quote": ...}]} where technique '
    "is one of {names} and quote is copied verbatim from the text. Empty list if none."
)
_CLAIMS_SYSTEM = (
    "You extract check-worthy factual claims from Romanian or English text: statements about "
    "numbers, dates, people, institutions, causes and records that a fact-checker could verify. "
    'Answer only with JSON {"claims": [{"quote": ...}]}, each quote copied verbatim.'
)


async def inline(fn: Callable[..., T], *args: Any) -> T:
    """Run a merge in this process (tests; the executors pass their analysis pool instead)."""
    return fn(*args)


async def review_techniques(
    http: httpx.AsyncClient,
    settings: Settings,
    text: str,
    report: TechniqueReport,
    merge: Merge = inline,
) -> tuple[TechniqueReport, bool]:
    """The report with the model's verifiable findings added, and whether the model answered.

    Matching the model's quotes normalises the whole text: CPU work on input of any size, so
    `merge` runs it where a timeout can end it (the executor's analysis pool)."""
    names = ", ".join(default_lexicon().labels)
    system = _TECHNIQUES_SYSTEM.replace("{names}", names)
    reply = await ask_json(
        http, settings, system, as_prompt({"text": text[:MAX_PROMPT_CHARS]}), TechniquesReply
    )
    if reply is None:
        return report, False
    proposals = [(f.technique, f.quote) for f in reply.findings]
    return await merge(with_model_findings, text, report, proposals), True


async def review_claims(
    http: httpx.AsyncClient,
    settings: Settings,
    text: str,
    claims: list[Claim],
    limit: int,
    merge: Merge = inline,
) -> tuple[list[Claim], bool]:
    """Claims with the model's verbatim quotes added (new ones only), and whether it answered;
    the quotes are matched through `merge`, as in `review_techniques`."""
    reply = await ask_json(
        http, settings, _CLAIMS_SYSTEM, as_prompt({"text": text[:MAX_PROMPT_CHARS]}), ClaimsReply
    )
    if reply is None:
        return claims, False
    quotes = [p.quote for p in reply.claims]
    return await merge(with_model_claims, text, claims, quotes, limit), True
