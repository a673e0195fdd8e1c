"""How busy the machine's CPUs are, from /proc/stat: whether holding lower tiers back helps.

Holding lower-tier work back only gives urgent work more CPU when there is no spare CPU to
give. With idle CPUs it costs the lower tiers their throughput and buys the urgent work
nothing, so the urgent gate (`shared/urgency.py`) holds only while the CPUs are saturated.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from pathlib import Path

import structlog

log = structlog.get_logger(__name__)

PROC_STAT = Path("/proc/stat")
# A reading every SAMPLE_S; the busy share is over the last WINDOW readings (one second).
SAMPLE_S = 0.25
WINDOW = 4


def cpu_times(text: str) -> tuple[int, int]:
    """(busy, total) jiffies of all CPUs, from the `cpu` line of /proc/stat.

    Idle and iowait are idle time; guest time is already counted in user and nice."""
    for line in text.splitlines():
        fields = line.split()
        if fields and fields[0] == "cpu":
            ticks = [int(f) for f in fields[1:9]]  # user nice system idle iowait irq softirq steal
            if len(ticks) < 5:
                break
            idle = ticks[3] + ticks[4]
            return sum(ticks) - idle, sum(ticks)
    raise ValueError("no aggregate 'cpu' line in /proc/stat text")


def busy_share(earlier: tuple[int, int], later: tuple[int, int]) -> float:
    """The share (0..1) of CPU time spent busy between two readings."""
    busy, total = later[0] - earlier[0], later[1] - earlier[1]
    if total <= 0:
        return 0.0
    return min(1.0, max(0.0, busy / total))


class CpuLoad:
    """Follows the CPUs' busy share over the last second."""

    def __init__(
        self, read_stat: Callable[[], str] = PROC_STAT.read_text, sample_s: float = SAMPLE_S
    ) -> None:
        self._read_stat = read_stat
        self.sample_s = sample_s
        self._readings: deque[tuple[int, int]] = deque(maxlen=WINDOW + 1)

    def read(self) -> float | None:
        """Take a reading; the busy share since the oldest one kept, None before there are
        two or where /proc/stat cannot be read (not Linux)."""
        try:
            self._readings.append(cpu_times(self._read_stat()))
        except (OSError, ValueError):
            return None
        if len(self._readings) < 2:
            return None
        return busy_share(self._readings[0], self._readings[-1])

    async def follow(self, report: Callable[[float | None], None]) -> None:
        """Report the busy share every `sample_s` until cancelled (None: unknown). Where
        /proc/stat cannot be read at all, report None once and stop."""
        try:
            self._readings.append(cpu_times(self._read_stat()))
        except (OSError, ValueError):
            log.info("cpu load unknown; lower tiers are held whenever urgent work runs")
            report(None)
            return
        while True:
            await asyncio.sleep(self.sample_s)
            report(self.read())
