"""The executor contract: one async function per component, found through a registry."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncpg
    import httpx

    from shared.house import Shelf
    from shared.messages import Task
    from shared.settings import Settings
    from workers.isolation import AnalysisPool


@dataclass(frozen=True)
class Analysis:
    """What an executor found: a risk score 0-100 (0 = no concern) and its evidence."""

    score: float
    data: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not 0 <= self.score <= 100:
            raise ValueError(f"score {self.score} is outside 0..100")


@dataclass(frozen=True)
class ExecutorContext:
    """The I/O an executor may use. `dispatch` publishes a follow-up task (media_preprocess);
    CPU-bound analysis runs through `analysis`, where a timeout really stops it."""

    settings: Settings
    # Where a media task caches the text it extracted, for its retries (shared/house.py);
    # None: nothing is cached.
    media_cache: Shelf | None
    db: asyncpg.Pool
    http: httpx.AsyncClient
    dispatch: Callable[[Task], Awaitable[None]]
    worker_id: str = ""
    analysis: AnalysisPool = field(kw_only=True)


Executor = Callable[["Task", ExecutorContext], Awaitable[Analysis]]

_REGISTRY: dict[str, Executor] = {}


def executor(component: str) -> Callable[[Executor], Executor]:
    """Register the decorated function as the executor of `component`."""

    def register(fn: Executor) -> Executor:
        _REGISTRY[component] = fn
        return fn

    return register


def executor_for(component: str) -> Executor:
    """The registered executor of `component` (importing the built-in ones on first use)."""
    import workers.executors  # noqa: F401 - registers the built-in executors

    try:
        return _REGISTRY[component]
    except KeyError:
        raise LookupError(f"no executor registered for component {component!r}") from None


def task_timeout_s(task: Task, settings: Settings) -> float:
    """Video gets the long timeout; everything else the default (docs/architecture.md §2.2)."""
    long = task.input.input_type == "video"
    return settings.video_timeout_s if long else settings.task_timeout_s


def in_pool(ctx: ExecutorContext, timeout_s: float) -> Callable[..., Awaitable[Any]]:
    """A runner of `fn(*args)` in the context's analysis pool, under `timeout_s`."""

    async def run(fn: Callable[..., Any], *args: Any) -> Any:
        return await ctx.analysis.run(fn, *args, timeout_s=timeout_s)

    return run
