"""Every broker name of one deployment (exchanges, queues, routing keys), derived from its
prefix by pure functions. The topology (`topology.spec`) declares what these name."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Names:
    """Every broker name of one deployment, derived from its prefix."""

    prefix: str

    @property
    def exchange(self) -> str:
        return self.prefix

    @property
    def results(self) -> str:
        return f"{self.prefix}.results"

    @property
    def urgent_results(self) -> str:
        """Top-tier results: a queue of their own, so no backlog of others can delay them."""
        return f"{self.results}.urgent"

    @property
    def dead_letters(self) -> str:
        """Exchange (fanout to the DLQ) that processes publish dead letters to. Not the default
        exchange: a role allowed to write there could put a message in any queue by name."""
        return f"{self.prefix}.dead"

    @property
    def dlq(self) -> str:
        return f"{self.prefix}_dlq"

    def task_queue(self, component: str, plan: int) -> str:
        """Queue (and routing key) of one component's tasks on one plan."""
        return f"{self.prefix}.{component}.{plan}"

    def result_key(self, component: str, urgent: bool = False) -> str:
        """Routing key of a result: `{results}.{component}` or `{results}.urgent.{component}`."""
        return f"{self.urgent_results if urgent else self.results}.{component}"

    def retry_tier(self, delay_ms: int) -> str:
        """Exchange and queue name of the retry tier that holds messages for `delay_ms`."""
        return f"{self.prefix}.retry.{format_delay(delay_ms)}"


def format_delay(delay_ms: int) -> str:
    """`30000` → `30s`, `250` → `250ms`: whole seconds read as seconds."""
    return f"{delay_ms // 1000}s" if delay_ms % 1000 == 0 else f"{delay_ms}ms"
