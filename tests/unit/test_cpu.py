"""The CPUs' busy share, read from /proc/stat, tells whether holding lower tiers back helps."""

import pytest

from shared.cpu import CpuLoad, busy_share, cpu_times

STAT = """cpu  {user} 0 {system} {idle} {iowait} 0 0 0 0 0
cpu0 1 0 1 1 0 0 0 0 0 0
intr 12345
"""


def stat(user: int, system: int, idle: int, iowait: int = 0) -> str:
    return STAT.format(user=user, system=system, idle=idle, iowait=iowait)


def test_busy_time_excludes_idle_and_iowait():
    assert cpu_times(stat(user=30, system=10, idle=50, iowait=10)) == (40, 100)


def test_a_text_without_the_aggregate_line_is_refused():
    with pytest.raises(ValueError):
        cpu_times("cpu0 1 2 3 4 5\n")


def test_busy_share_is_busy_time_over_elapsed_time():
    assert busy_share((40, 100), (130, 200)) == 0.9
    assert busy_share((40, 100), (40, 100)) == 0.0  # no time passed: nothing known to be busy


def test_the_load_is_taken_over_the_readings_of_the_last_second(tmp_path):
    path = tmp_path / "stat"
    load = CpuLoad(path)
    path.write_text(stat(user=0, system=0, idle=0))
    assert load.read() is None  # one reading says nothing yet
    path.write_text(stat(user=100, system=0, idle=0))
    assert load.read() == 1.0
    for _ in range(4):  # an idle second pushes the busy readings out of the window
        path.write_text(stat(user=100, system=0, idle=int(path.read_text().split()[4]) + 100))
        share = load.read()
    assert share == 0.0


def test_an_unreadable_stat_file_gives_an_unknown_load(tmp_path):
    assert CpuLoad(tmp_path / "missing").read() is None


async def test_without_proc_stat_the_load_is_reported_unknown_once(tmp_path):
    reports: list[float | None] = []
    await CpuLoad(tmp_path / "missing").follow(reports.append)
    assert reports == [None]
