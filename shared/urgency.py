"""Urgent (top-tier) work holds lower tiers back; shared by workers and aggregators."""

from __future__ import annotations

import asyncio
import contextlib


class UrgentGate:
    """While top-tier work is running, lower tiers wait before they start.

    On a saturated machine the order in which a worker starts tasks is not enough: the
    lower-tier tasks already running share the CPU with the urgent one. Holding back new
    low-tier starts for the few milliseconds an urgent task takes gives it the CPU; the hold
    is capped, so low-tier throughput pays at most `max_hold_s` per urgent task.
    """

    def __init__(self, threshold: int, max_hold_s: float) -> None:
        self.threshold = threshold
        self.max_hold_s = max_hold_s
        self._urgent = 0
        self._clear = asyncio.Event()
        self._clear.set()

    def urgent(self, priority: int) -> bool:
        return priority >= self.threshold

    def started(self, priority: int) -> None:
        """A task of `priority` took a slot (urgent ones hold lower tiers back until done).

        Only running urgent tasks hold others back, never buffered ones: a running task
        always finishes and frees its slot, so waiting slots cannot starve the urgent one."""
        if self.urgent(priority):
            self._urgent += 1
            self._clear.clear()

    def finished(self, priority: int) -> None:
        if self.urgent(priority):
            self._urgent = max(0, self._urgent - 1)
            if not self._urgent:
                self._clear.set()

    async def admit(self, priority: int) -> None:
        """Return when a task of `priority` may start: at once if urgent, else when no urgent
        task runs or after `max_hold_s` — a head start, so long urgent tasks cannot starve
        the lower tiers."""
        if not self.urgent(priority) and not self._clear.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._clear.wait(), self.max_hold_s)

    def open(self) -> None:
        """Let everything through (shutdown)."""
        self._urgent = 0
        self._clear.set()
