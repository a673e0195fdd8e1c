"""techniques: manipulation and propaganda techniques in the text (workers.analysis.techniques)."""

import asyncio

from shared.messages import Task
from workers.analysis.llm_review import review_techniques
from workers.analysis.techniques import assess_techniques, report_data
from workers.executor import Analysis, ExecutorContext, executor


@executor("techniques")
async def run(task: Task, ctx: ExecutorContext) -> Analysis:
    text = task.input.content or ""
    report = await asyncio.to_thread(assess_techniques, text)
    reviewed = False
    if ctx.settings.llm_url and text.strip():
        report, reviewed = await review_techniques(ctx.http, ctx.settings, text, report)
    return Analysis(report.score, {**report_data(report), "llm_reviewed": reviewed})
