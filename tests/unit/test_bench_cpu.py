"""bench_cpu's pure helpers: which process is which, and CPU time per session."""

import pytest

from scripts.bench_cpu import (
    broker_per_session,
    cpu_seconds,
    delta,
    kind_of,
    per_kind,
    per_session,
    pg_per_session,
    queue_counters,
    redis_counters,
    redis_per_session,
    rss_mib,
)


@pytest.mark.parametrize(
    ("comm", "cmdline", "kind"),
    [
        ("python", "/usr/bin/python -m ops.cli api", "api"),
        ("python", "/usr/bin/python -m ops.cli aggregator", "aggregator"),
        ("python", "/usr/bin/python scripts/bench_worker.py claims --concurrency 8", "worker"),
        ("beam.smp", "/usr/lib/erlang/erts/bin/beam.smp -- -root", "rabbitmq"),
        ("postgres", "postgres: 15/main: postgres verdict_cpu 127.0.0.1(5)", "postgres"),
        ("redis-server", "redis-server 127.0.0.1:6379", "redis"),
        ("bash", "bash -c sleep 1", None),
    ],
)
def test_processes_are_told_apart_by_name_and_command_line(comm, cmdline, kind):
    """The pipeline's processes by command line, the servers by name, the rest not at all."""
    assert kind_of(comm, cmdline, own_pid=1, pid=2) == kind


def test_the_benchmark_itself_counts_as_the_client():
    """Its HTTP client's CPU is reported apart from the pipeline's."""
    assert kind_of("python", "python scripts/bench_cpu.py", own_pid=7, pid=7) == "client"


def test_cpu_time_is_user_plus_system_ticks():
    """Fields 14 and 15 of /proc/PID/stat, after a command name that may hold spaces."""
    stat = "42 (my (odd) name) S 1 42 42 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0"
    assert cpu_seconds(stat, ticks_per_s=100) == 3.0


def test_cpu_per_session_is_the_difference_over_the_sessions():
    """A kind that appeared after the first snapshot counts from zero."""
    used = per_kind({"api": 1.0}, {"api": 4.0, "worker": 6.0}, sessions=1000)
    assert used == {
        "api": {"cpu_s": 3.0, "ms_per_session": 3.0},
        "worker": {"cpu_s": 6.0, "ms_per_session": 6.0},
    }


def test_resident_memory_is_read_from_vmrss_in_mib():
    """/proc/PID/status gives VmRSS in kB; a process without it (a kernel thread) counts 0."""
    assert rss_mib("Name:\tpython\nVmPeak:\t 900 kB\nVmRSS:\t  153600 kB\n") == 150.0
    assert rss_mib("Name:\tkthreadd\n") == 0.0


def test_counter_deltas_count_a_new_counter_from_zero_and_divide_by_sessions():
    """Cumulative counters read twice: their difference, then per session, rounded."""
    assert delta({"a": 10, "b": 5}, {"a": 30, "b": 5, "c": 4}) == {"a": 20, "b": 0, "c": 4}
    assert per_session({"a": 20, "c": 4}, sessions=3) == {"a": 6.67, "c": 1.33}


def test_queue_counters_keep_the_worlds_queues_only_and_default_missing_stats_to_zero():
    """Another prefix's queues (another run on the same vhost) are not counted; a queue
    that has seen no message has no message_stats at all."""
    queues = [
        {"name": "cpuab.results", "message_stats": {"publish": 7, "ack": 6, "deliver_get": 6}},
        {"name": "cpuab.tasks.claims.p6"},
        {"name": "cpuabc.results", "message_stats": {"publish": 99}},
        {"name": "other.results", "message_stats": {"publish": 99}},
    ]
    assert queue_counters(queues, "cpuab") == {
        "cpuab.results": {"publish": 7, "deliver_get": 6, "ack": 6, "redeliver": 0},
        "cpuab.tasks.claims.p6": {"publish": 0, "deliver_get": 0, "ack": 0, "redeliver": 0},
    }


def test_broker_messages_per_session_sum_the_queues_and_rank_the_busy_ones():
    """Totals over every queue; per queue only those that took messages, busiest first."""
    zero = {"publish": 0, "deliver_get": 0, "ack": 0, "redeliver": 0}
    before = {"q.results": {**zero, "publish": 100, "ack": 100, "deliver_get": 100}}
    after = {
        "q.results": {"publish": 500, "deliver_get": 500, "ack": 500, "redeliver": 1},
        "q.tasks": {"publish": 100, "deliver_get": 100, "ack": 100, "redeliver": 0},
        "q.idle": zero,
    }
    measured = broker_per_session(before, after, sessions=100)
    assert measured["total"] == {"publish": 500, "deliver_get": 500, "ack": 500, "redeliver": 1}
    assert measured["per_session"] == {
        "publish": 5.0,
        "deliver_get": 5.0,
        "ack": 5.0,
        "redeliver": 0.01,
    }
    assert list(measured["publish_per_session_by_queue"].items()) == [
        ("q.results", 4.0),
        ("q.tasks", 1.0),
    ]


def test_postgres_writes_leave_out_the_clients_own_queries():
    """The benchmark's polling queries commit in the same database: they are not the
    pipeline's; rows written is inserted + updated + deleted."""
    before = dict.fromkeys(("xact_commit", "tup_inserted", "tup_updated", "tup_deleted"), 0)
    after = {"xact_commit": 350, "tup_inserted": 600, "tup_updated": 200, "tup_deleted": 0}
    measured = pg_per_session(before, after, own_queries=50, sessions=100)
    assert measured["total"]["xact_commit"] == 300
    assert measured["per_session"] == {
        "xact_commit": 3.0,
        "tup_inserted": 6.0,
        "tup_updated": 2.0,
        "tup_deleted": 0.0,
        "rows_written": 8.0,
    }


def test_redis_counters_come_from_info_stats_and_commandstats():
    """redis-py parses `cmdstat_evalsha:calls=3,usec=…` into a dict per command."""
    stats = {"total_commands_processed": 1234, "instantaneous_ops_per_sec": 5}
    commandstats = {"cmdstat_evalsha": {"calls": 3, "usec": 40}, "cmdstat_info": {"calls": 9}}
    assert redis_counters(stats, commandstats) == {"total": 1234, "evalsha": 3, "info": 9}


def test_redis_per_session_leaves_out_the_snapshots_own_info_calls():
    """The first snapshot's two INFO calls land between the snapshots: not the pipeline's."""
    before = {"total": 1000, "info": 10, "set": 50}
    after = {"total": 1402, "info": 12, "set": 250, "evalsha": 200, "get": 0}
    measured = redis_per_session(before, after, sessions=100)
    assert measured == {
        "total": 400,
        "per_session": 4.0,
        "by_command": {"set": 2.0, "evalsha": 2.0},
    }
