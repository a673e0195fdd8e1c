"""Client of an optional OpenAI-compatible chat gateway that must answer in a JSON schema.

Every call is bounded (timeout, one retry) and returns None instead of failing: the
caller's heuristic result stands whenever the model is slow, down, or off-schema.
"""

from __future__ import annotations

import json
from typing import TypeVar

import httpx
import structlog
from pydantic import BaseModel, Field, ValidationError

from shared.errors import AnalysisError, RetryableAnalysisError
from shared.remote import bearer, bounded, json_object, post
from shared.settings import Settings

LLM_TIMEOUT_S = 10.0
# One retry: a second slow answer means the gateway is struggling; give up on it.
LLM_ATTEMPTS = 2

M = TypeVar("M", bound=BaseModel)
log = structlog.get_logger(__name__)


class TechniqueProposal(BaseModel):
    technique: str = Field(max_length=40)
    quote: str = Field(min_length=2, max_length=300)


class TechniquesReply(BaseModel):
    """Techniques a model found, each with a verbatim quote."""

    findings: list[TechniqueProposal] = Field(max_length=25)


class ClaimProposal(BaseModel):
    quote: str = Field(min_length=8, max_length=400)


class ClaimsReply(BaseModel):
    """Check-worthy claims a model found, quoted verbatim."""

    claims: list[ClaimProposal] = Field(max_length=10)


class ExplanationReply(BaseModel):
    """A verdict explanation in both languages."""

    ro: str = Field(min_length=20, max_length=3000)
    en: str = Field(min_length=20, max_length=3000)


def parse_reply(content: str, schema: type[M]) -> M:
    """Validate a model's message content (code fences allowed) against `schema`."""
    return schema.model_validate_json(without_fence(content))


def without_fence(content: str) -> str:
    """The reply without the ```json … ``` fence a model may put around it.

    String operations, not a pattern: a trailing-fence regex backtracks quadratically
    on a long run of whitespace.
    """
    text = content.strip()
    if text.startswith("```"):
        text = text[3:].removeprefix("json")
    return text.removesuffix("```").strip()


async def ask_json(
    http: httpx.AsyncClient, settings: Settings, system: str, user: str, schema: type[M]
) -> M | None:
    """Ask the gateway; the reply parsed as `schema`, or None on any failure."""
    if not settings.llm_url:
        return None
    for attempt in range(1, LLM_ATTEMPTS + 1):
        try:
            return parse_reply(await _complete(http, settings, system, user), schema)
        except RetryableAnalysisError as exc:
            log.warning("llm gateway failed", attempt=attempt, error=str(exc))
        except (AnalysisError, ValidationError, ValueError) as exc:
            log.warning("llm reply rejected", error=str(exc)[:300])
            return None
    return None


async def _complete(http: httpx.AsyncClient, settings: Settings, system: str, user: str) -> str:
    url = f"{settings.llm_url.rstrip('/')}/v1/chat/completions"  # type: ignore[union-attr]
    body = {
        "model": settings.llm_model,
        "temperature": 0,
        "response_format": {"type": "json_object"},
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
    }
    response = await post(
        http,
        "llm gateway",
        url,
        bounded(LLM_TIMEOUT_S),
        json=body,
        headers=bearer(settings.llm_api_key),
    )
    reply = json_object(response, "llm gateway")
    try:
        return str(reply["choices"][0]["message"]["content"])
    except (KeyError, IndexError, TypeError) as exc:
        raise AnalysisError("llm gateway reply has no choices[0].message.content") from exc


def as_prompt(payload: object) -> str:
    """Compact JSON for a user message."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
