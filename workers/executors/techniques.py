"""techniques: manipulation and propaganda techniques in the text (workers.analysis.techniques)."""

from shared.messages import Task
from workers.analysis.llm_review import review_techniques
from workers.analysis.techniques import assess_techniques, report_data, with_tenant_terms
from workers.executor import Analysis, ExecutorContext, executor, in_pool, task_timeout_s


@executor("techniques")
async def run(task: Task, ctx: ExecutorContext) -> Analysis:
    text = task.input.content or ""
    timeout = task_timeout_s(task, ctx.settings)
    report = await ctx.analysis.run(assess_techniques, text, timeout_s=timeout)
    if task.tenant and task.tenant.lexicon_terms:  # the tenant's own terms, signed in the task
        terms = task.tenant.lexicon_terms
        report = await ctx.analysis.run(with_tenant_terms, text, report, terms, timeout_s=timeout)
    reviewed = False
    if ctx.settings.llm_url and text.strip():
        report, reviewed = await review_techniques(
            ctx.http, ctx.settings, text, report, in_pool(ctx, timeout)
        )
    return Analysis(report.score, {**report_data(report), "llm_reviewed": reviewed})
