"""Deeper analysis by the optional LLM gateway, merged only where it can be verified.

The model may add findings and claims, but each must quote the text verbatim; the
lexicon result stands when the gateway is absent, slow or off-schema.
"""

from __future__ import annotations

import httpx

from shared.settings import Settings
from workers.analysis.claims import Claim, with_model_claims
from workers.analysis.llm import ClaimsReply, TechniquesReply, as_prompt, ask_json
from workers.analysis.techniques import TechniqueReport, default_lexicon, with_model_findings

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


async def review_techniques(
    http: httpx.AsyncClient, settings: Settings, text: str, report: TechniqueReport
) -> tuple[TechniqueReport, bool]:
    """The report with the model's verifiable findings added, and whether the model answered."""
    names = ", ".join(default_lexicon().labels)
    system = _TECHNIQUES_SYSTEM.replace("{names}", names)
    reply = await ask_json(
        http, settings, system, as_prompt({"text": text[:MAX_PROMPT_CHARS]}), TechniquesReply
    )
    if reply is None:
        return report, False
    proposals = [(f.technique, f.quote) for f in reply.findings]
    return with_model_findings(text, report, proposals), True


async def review_claims(
    http: httpx.AsyncClient, settings: Settings, text: str, claims: list[Claim], limit: int
) -> tuple[list[Claim], bool]:
    """Claims with the model's verbatim quotes added (new ones only), and whether it answered."""
    reply = await ask_json(
        http, settings, _CLAIMS_SYSTEM, as_prompt({"text": text[:MAX_PROMPT_CHARS]}), ClaimsReply
    )
    if reply is None:
        return claims, False
    return with_model_claims(text, claims, [p.quote for p in reply.claims], limit), True
