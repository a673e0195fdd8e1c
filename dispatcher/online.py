"""The worker registry as the API sees it: read at most every few seconds, so a POST stays fast.

A session that no online worker can serve is refused (503) instead of left to wait in a queue
nobody reads. When the API cannot tell it accepts, as it accepted before: Redis unreachable,
or a registry without a single record (Redis flushed or replaced: every worker writes its
record again within a heartbeat, and records of stopped workers stay an hour otherwise).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

import structlog

from shared import metrics
from shared.background import raise_if_cancelled
from shared.constants import ANALYSIS_COMPONENTS, QUEUE_COMPONENTS
from shared.house import Shelf
from shared.registry import WorkerRecord, online_by_component, registry, unserved

log = structlog.get_logger(__name__)

# Every process kind that beats: the components and the aggregator.
REGISTERED: tuple[str, ...] = (*QUEUE_COMPONENTS, "aggregator")
# The gauge is kept current this often, like the queue depths, for the "no worker" alert.
WORKERS_WATCH_S = 5.0
# A refusal is never made on a cached read older than this: a worker that came online since
# (the pipeline just started, a replica was added) is seen first. Bounds the registry reads
# that refused requests can cause to a few per second.
RECHECK_BEFORE_REFUSING_S = 0.25


class OnlineWorkers:
    """The registry, read again once `ttl_s` has passed since the last read."""

    def __init__(self, shelf: Shelf, prefix: str, ttl_s: float) -> None:
        self._shelf = shelf
        self._prefix = prefix
        self.ttl_s = ttl_s
        self._read_at = -float("inf")
        self._records: list[WorkerRecord] = []
        self._reading = asyncio.Lock()

    async def records(self, max_age_s: float | None = None) -> list[WorkerRecord]:
        """The records as last read (read now when older than `max_age_s`, default `ttl_s`)."""
        max_age_s = self.ttl_s if max_age_s is None else max_age_s
        arrived = time.monotonic()
        async with self._reading:  # one read for all the requests that found it old
            # A read that started after this request arrived is as fresh as it needs, even
            # if slow: the requests queued behind one slow read do not each read again.
            if time.monotonic() - self._read_at >= max_age_s and self._read_at < arrived:
                await self.refresh()
        return self._records

    def cached_refusal(self, input_type: str) -> str | None:
        """Why no online worker can serve a session of `input_type`, by the last read only
        (no I/O, nothing logged: /healthz answers from it); None when that read found no
        record at all (nothing can be told) or every component it needs is served."""
        if not self._records:
            return None
        return unserved(self._records, input_type)

    async def refresh(self) -> list[WorkerRecord]:
        """Read the registry now and count who is online (`verdict_workers_online`).

        The read is as old as its start: a worker that announced itself while the read was
        under way may be missing from it, so it must not pass for newer than that."""
        started = time.monotonic()
        records = await registry(self._shelf, self._prefix, time.time())
        if started >= self._read_at:  # a read that started earlier and ended later is older
            self._records, self._read_at = records, started
        for component, count in online_by_component(self._records, REGISTERED).items():
            metrics.WORKERS_ONLINE.labels(component).set(count)
        return self._records

    async def refusal(
        self, input_type: str, components: Sequence[str] = ANALYSIS_COMPONENTS
    ) -> str | None:
        """Why no online worker can serve a session of `input_type` running `components`;
        None when one can or the registry cannot be read."""
        try:
            records = await self.records()
            reason = unserved(records, input_type, components)
            if reason is not None:  # refuse only on a fresh read
                records = await self.records(RECHECK_BEFORE_REFUSING_S)
                reason = unserved(records, input_type, components)
        except Exception as exc:  # Redis away: the queues still take the session
            raise_if_cancelled(exc)
            log.warning("worker registry not read, session accepted", error=repr(exc))
            return None
        if not records:
            log.warning("worker registry empty, session accepted")
            return None
        return reason


async def watch(online: OnlineWorkers) -> None:
    """Keep `verdict_workers_online` current while the API runs (cancel to stop)."""
    while True:
        try:
            await online.refresh()
        except Exception as exc:  # Redis away: the gauge keeps its last value until it is back
            raise_if_cancelled(exc)
            log.debug("worker registry not read", error=repr(exc))
        await asyncio.sleep(WORKERS_WATCH_S)
