"""One worker process for several components (`verdict worker --components a,b`): a Worker per
component, each with its own queues, concurrency, prefetch, connections and analysis
processes, under one heartbeat that announces them all and one stop that drains them all."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence

import structlog

from shared.constants import QUEUE_COMPONENTS, WORKER_DEFAULTS
from shared.errors import InvalidWorkerOptions, VerdictError
from shared.heartbeat import Heartbeat
from shared.house import open_house
from shared.resources import Resources
from shared.settings import Settings
from workers.capabilities import group_announcer
from workers.executor import Executor
from workers.runtime import Worker, WorkerOptions
from workers.warm import modules_for

log = structlog.get_logger(__name__)


def components_asked(component: str | None, components: str | None) -> tuple[str, ...]:
    """The components of `verdict worker COMPONENT` or `--components a,b`, checked."""
    if (component is None) == (components is None):
        raise InvalidWorkerOptions("name one COMPONENT or a --components list, not both")
    names = [c.strip() for c in (components or component or "").split(",")]
    unknown = [c for c in names if c not in QUEUE_COMPONENTS]
    if unknown:
        known = ", ".join(QUEUE_COMPONENTS)
        raise InvalidWorkerOptions(f"unknown component {unknown[0]!r}: choose from {known}")
    if len(set(names)) != len(names):
        raise InvalidWorkerOptions("a component is named twice in --components")
    return tuple(names)


def worker_options(
    components: Sequence[str], concurrency: int | None, prefetch: int | None
) -> list[WorkerOptions]:
    """Each component with its own defaults (WORKER_DEFAULTS) unless overridden for all."""
    options = []
    for component in components:
        default_concurrency, default_prefetch = WORKER_DEFAULTS[component]
        options.append(
            WorkerOptions(
                component, concurrency or default_concurrency, prefetch or default_prefetch
            )
        )
    return options


class WorkerGroup:
    """Runs one Worker per component in this process; a failure of one stops them all."""

    def __init__(
        self,
        settings: Settings,
        options: Sequence[WorkerOptions],
        executors: Mapping[str, Executor] | None = None,
    ) -> None:
        executors = executors or {}
        self.settings = settings
        # One fork server per process: every pool asks it for every component's analysers.
        warm = modules_for(o.component for o in options)
        self.workers = [
            Worker(settings, o, executors.get(o.component), announce=False, warm=warm)
            for o in options
        ]

    @property
    def busy(self) -> int:
        """Tasks running now, over every component of the process."""
        return sum(w.busy for w in self.workers)

    async def run(self, stop: asyncio.Event) -> None:
        """Serve every component until `stop` is set; each then drains as a lone worker does."""
        async with Resources() as opened:
            # Any component's Redis user may write the registry: the first one's announces
            # (without Redis, a small pool of its own writes it to PostgreSQL).
            first = self.workers[0].settings
            pool = await opened.pool(first.database_url, max_size=2)
            # One LISTEN connection for the process: every component's wake-ups and channels.
            listener = opened.listener(first.database_url)
            house = await open_house(opened, first, pool, listener=listener)
            http = opened.http()
            async with _first_error_unwrapped(), asyncio.TaskGroup() as group:
                running = [group.create_task(w.run(stop, listener)) for w in self.workers]
                # Announced once every component consumes: online means able to take work.
                await asyncio.gather(*(w.ready.wait() for w in self.workers))
                heartbeat = Heartbeat(
                    house.shelf,
                    self.settings.key_prefix,
                    group_announcer([w.announcer(http) for w in self.workers]),
                    lambda: self.busy,
                )
                log.info("workers ready", components=[w.options.component for w in self.workers])
                # Beating until every component has drained: its last record says "stopped"
                # once no task of the process runs, not while the grace period still does.
                async with heartbeat.running():
                    await stop.wait()
                    await asyncio.wait(running)


@contextlib.asynccontextmanager
async def _first_error_unwrapped() -> AsyncIterator[None]:
    """A component that cannot start (the broker away, a credential refused) ends the
    process with its own VerdictError, which the CLI prints in one line, not wrapped in the
    task group's ExceptionGroup."""
    try:
        yield
    except* VerdictError as errors:
        raise errors.exceptions[0] from None
