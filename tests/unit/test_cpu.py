"""The CPUs' busy share, read from /proc/stat, tells whether holding lower tiers back helps."""

from collections.abc import Callable

import pytest

from shared.cpu import CpuLoad, busy_share, cpu_times


def stat(user: int, system: int, idle: int, iowait: int = 0) -> str:
    """A /proc/stat text: the aggregate line, one per-CPU line, another counter."""
    return (
        f"cpu  {user} 0 {system} {idle} {iowait} 0 0 0 0 0\ncpu0 1 0 1 1 0 0 0 0 0 0\nintr 12345\n"
    )


def readings(*texts: str) -> Callable[[], str]:
    """A /proc/stat that answers each text in turn."""
    answers = iter(texts)
    return lambda: next(answers)


def unreadable() -> str:
    raise FileNotFoundError("/proc/stat")


def test_busy_time_excludes_idle_and_iowait():
    """Waiting for the disk is not CPU work: iowait counts as idle."""
    assert cpu_times(stat(user=30, system=10, idle=50, iowait=10)) == (40, 100)


def test_a_text_without_the_aggregate_line_is_refused():
    """Per-CPU lines alone do not say how busy the machine is."""
    with pytest.raises(ValueError):
        cpu_times("cpu0 1 2 3 4 5\n")


def test_busy_share_is_busy_time_over_elapsed_time():
    """90 busy ticks of 100; no time passed means nothing is known to be busy."""
    assert busy_share((40, 100), (130, 200)) == 0.9
    assert busy_share((40, 100), (40, 100)) == 0.0


def test_the_load_is_taken_over_the_readings_of_the_last_second():
    """A busy burst leaves the window after four more readings (one second)."""
    idle_second = [stat(user=100, system=0, idle=100 * n) for n in range(1, 5)]
    load = CpuLoad(readings(stat(0, 0, 0), stat(100, 0, 0), *idle_second))
    assert load.read() is None  # one reading says nothing yet
    assert load.read() == 1.0
    shares = [load.read() for _ in idle_second]
    assert shares[0] == 0.5 and shares[-1] == 0.0


def test_an_unreadable_stat_gives_an_unknown_load():
    assert CpuLoad(unreadable).read() is None


async def test_without_proc_stat_the_load_is_reported_unknown_once():
    """Not Linux: the gate is told once that the load is unknown, and nothing is polled."""
    reports: list[float | None] = []
    await CpuLoad(unreadable).follow(reports.append)
    assert reports == [None]
