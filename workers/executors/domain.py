"""domain: reputation of the URLs and domains in the input (workers.analysis.domains)."""

import asyncio

from shared.messages import Task
from workers.analysis.domains import assess_domains, report_data
from workers.executor import Analysis, ExecutorContext, executor


@executor("domain")
async def run(task: Task, ctx: ExecutorContext) -> Analysis:
    report = await asyncio.to_thread(assess_domains, task.input.content or "", task.input.url)
    return Analysis(report.score, report_data(report))
