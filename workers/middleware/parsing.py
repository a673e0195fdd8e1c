"""The task a delivery carries, checked against the queue it came from."""

from __future__ import annotations

from dataclasses import dataclass

from shared.errors import InvalidMessage, Reject
from shared.messages import decode_task
from shared.names import Names
from workers.middleware.chain import Job, Next


@dataclass(frozen=True)
class ParseTask:
    """Sets `job.parsed`; a body that is no task of this component's queue is Reject (poison)."""

    names: Names
    component: str

    async def __call__(self, job: Job, call_next: Next) -> None:
        try:
            task = decode_task(job.delivery.body)
        except InvalidMessage as exc:
            raise Reject(str(exc)) from exc
        arrived_on = job.delivery.routing_key
        if task.component != self.component or arrived_on != self.names.task_queue(
            task.component, task.plan_type
        ):
            raise Reject(f"task for {task.component}/plan {task.plan_type} arrived on {arrived_on}")
        job.parsed = task
        await call_next(job)
