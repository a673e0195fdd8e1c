"""bench_cpu's pure helpers: which process is which, and CPU time per session."""

import pytest

from scripts.bench_cpu import cpu_seconds, kind_of, per_kind, rss_mib


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
