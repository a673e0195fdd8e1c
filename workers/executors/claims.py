"""claims: check-worthy claims, looked up in the fact-check store and an optional provider."""

import asyncio

import asyncpg

from shared.errors import RetryableAnalysisError
from shared.messages import Task
from workers.analysis import factcheck_store
from workers.analysis.claims import (
    MAX_CLAIMS,
    Claim,
    Verification,
    extract_claims,
    report_data,
    score_claims,
)
from workers.analysis.evidence import ask_evidence
from workers.analysis.llm_review import review_claims
from workers.executor import Analysis, ExecutorContext, executor, in_pool, task_timeout_s


@executor("claims")
async def run(task: Task, ctx: ExecutorContext) -> Analysis:
    text = task.input.content or ""
    timeout = task_timeout_s(task, ctx.settings)
    claims = await ctx.analysis.run(extract_claims, text, timeout_s=timeout)
    reviewed = False
    if ctx.settings.llm_url and text.strip():
        claims, reviewed = await review_claims(
            ctx.http, ctx.settings, text, claims, MAX_CLAIMS, in_pool(ctx, timeout)
        )
    verifications = list(await asyncio.gather(*(verify(c, ctx) for c in claims)))
    data = report_data(claims, verifications)
    return Analysis(score_claims(claims, verifications), {**data, "llm_reviewed": reviewed})


async def verify(claim: Claim, ctx: ExecutorContext) -> Verification:
    """The fact-check store first; the evidence provider for what the store does not know."""
    try:
        found = await factcheck_store.lookup(ctx.db, claim.text)
    except (asyncpg.PostgresConnectionError, asyncpg.InterfaceError, OSError) as exc:
        raise RetryableAnalysisError(f"fact-check store unavailable: {exc}") from exc
    if found.status == "unverifiable" and ctx.settings.evidence_url:
        return await ask_evidence(ctx.http, ctx.settings.evidence_url, claim.text)
    return found
