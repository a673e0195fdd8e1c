"""domain: reputation of the URLs and domains in the input (workers.analysis.domains)."""

from shared.messages import Task
from workers.analysis.domains import (
    assess_domains,
    assess_domains_for,
    report_data,
    shipped_lists,
)
from workers.executor import Analysis, ExecutorContext, executor, task_timeout_s

# A broken data file stops the worker as it starts, naming the file and the field, rather
# than failing every task later inside an analysis process (a few ms: parsing only).
shipped_lists()


@executor("domain")
async def run(task: Task, ctx: ExecutorContext) -> Analysis:
    tenant = task.tenant
    if tenant and (tenant.blocked_hosts or tenant.protected_brands):  # signed in the task
        report, data = await ctx.analysis.run(
            assess_domains_for,
            task.input.content or "",
            task.input.url,
            tenant.blocked_hosts,
            tenant.protected_brands,
            timeout_s=task_timeout_s(task, ctx.settings),
        )
        return Analysis(report.score, data)
    report = await ctx.analysis.run(
        assess_domains,
        task.input.content or "",
        task.input.url,
        timeout_s=task_timeout_s(task, ctx.settings),
    )
    return Analysis(report.score, report_data(report))
