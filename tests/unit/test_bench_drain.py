"""The drain benchmark's own helpers: the tasks it publishes and the CPU it counts."""

import os

import bench_drain

from shared.constants import PLAN_PRIORITY


def test_each_task_is_a_new_session_of_the_plan_at_the_plans_priority():
    first, second = (bench_drain.task_for("claims", 6) for _ in range(2))
    assert first.session_id != second.session_id
    assert (first.component, first.plan_type, first.priority) == ("claims", 6, PLAN_PRIORITY[6])


def test_the_cpu_of_a_process_group_counts_its_members():
    """This test's own group holds at least this process, which has spent CPU by now."""
    spent = sum(os.times()[:2])
    counted = bench_drain.group_cpu_seconds(os.getpgid(0))
    assert counted >= spent - 0.05
