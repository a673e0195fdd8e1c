"""An optional HTTP evidence provider: POST {claim} → {rating, source, url}.

Any failure means "unverifiable": the provider adds evidence, it never fails a session.
"""

from __future__ import annotations

import httpx
import structlog
from pydantic import BaseModel, ValidationError

from shared.errors import AnalysisError
from shared.remote import bounded, json_object, post
from workers.analysis.claims import UNVERIFIABLE, Verification
from workers.analysis.normalise import normalise

EVIDENCE_TIMEOUT_S = 5.0
KNOWN_RATINGS = frozenset({"false", "misleading", "mixed", "unproven", "true"})

log = structlog.get_logger(__name__)


class EvidenceReply(BaseModel):
    """The provider's answer for one claim."""

    rating: str
    source: str
    url: str | None = None


async def ask_evidence(http: httpx.AsyncClient, evidence_url: str, claim: str) -> Verification:
    """The provider's verdict on `claim`, or UNVERIFIABLE on any error or unknown rating."""
    try:
        response = await post(
            http,
            "evidence provider",
            evidence_url,
            bounded(EVIDENCE_TIMEOUT_S),
            json={"claim": normalise(claim).text},
        )
        reply = EvidenceReply.model_validate(json_object(response, "evidence provider"))
    except (AnalysisError, ValidationError) as exc:
        log.warning("evidence provider failed", error=str(exc))
        return UNVERIFIABLE
    rating = reply.rating.strip().lower()
    if rating not in KNOWN_RATINGS:
        return UNVERIFIABLE
    return Verification("evidence", rating, None, None, reply.source, reply.url)
