"""The worker registry: what each worker process announced, and whether it is still there.

Every worker and aggregator writes its announcement (shared/heartbeat.py) under
`Keys.worker(id)` every HEARTBEAT_EVERY_S (in Redis, or in PostgreSQL without it:
shared/house.py). Records outlive the beats (RECORD_TTL_S), so a
worker that went silent is still listed, as stale and then offline; its status is a pure
function of the clock (`status_at`). A clean stop marks the record offline at once.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from shared.constants import ANALYSIS_COMPONENTS, MEDIA_INPUT_TYPES, MEDIA_PREPROCESS
from shared.keys import Keys

if TYPE_CHECKING:
    from shared.house import Shelf

HEARTBEAT_EVERY_S = 30
# Two beats missed: the worker may be gone (a long GC pause or a slow Redis can explain one).
STALE_AFTER_S = 60
# Three beats missed: the worker is gone.
OFFLINE_AFTER_S = 90
# A record stays an hour after its last beat, so operators see what went away and when; the
# worker ids of restarts (host and pid) make at most a few records per process an hour.
RECORD_TTL_S = 3600

Status = Literal["online", "stale", "offline"]


def status_at(now: float, last_seen: float, stopped: bool = False) -> Status:
    """online until STALE_AFTER_S of silence, stale until OFFLINE_AFTER_S, then offline; a
    worker that stopped cleanly is offline at once."""
    if stopped:
        return "offline"
    silent = now - last_seen
    if silent < STALE_AFTER_S:
        return "online"
    return "stale" if silent < OFFLINE_AFTER_S else "offline"


@dataclass(frozen=True)
class Announcement:
    """What a worker process says about itself on start and with every beat.

    `capabilities` maps each thing the worker needs (a binary, a service) to whether it was
    found when last checked; `limits` holds its bounds (timeouts, sizes, prefetch)."""

    worker_id: str
    host: str
    pid: int
    components: tuple[str, ...]
    input_types: tuple[str, ...]
    version: str
    concurrency: int
    started_at: float
    capabilities: dict[str, bool] = field(default_factory=dict)
    limits: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class WorkerRecord(Announcement):
    """An announcement as last written, with the worker's state then and its status now."""

    in_flight: int = 0
    last_seen: float = 0.0
    stopped_at: float | None = None
    status: Status = "offline"

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def encode(
    announcement: Announcement, in_flight: int, last_seen: float, stopped_at: float | None = None
) -> str:
    """The JSON a beat writes."""
    body = {**asdict(announcement), "in_flight": in_flight, "last_seen": last_seen}
    return json.dumps({**body, "stopped_at": stopped_at})


def decode(raw: str | bytes, now: float) -> WorkerRecord | None:
    """The record in `raw` with its status at `now`; None for a value that is not one (a
    record of an older version, say: it lapses by itself)."""
    try:
        body = json.loads(raw)
        body["components"] = tuple(body["components"])
        body["input_types"] = tuple(body["input_types"])
        body.pop("status", None)
        record = WorkerRecord(**body)
    except (ValueError, TypeError, KeyError):
        return None
    status = status_at(now, record.last_seen, record.stopped_at is not None)
    return WorkerRecord(**{**asdict(record), "status": status})


async def registry(shelf: Shelf, prefix: str, now: float) -> list[WorkerRecord]:
    """Every worker record of the deployment with its status at `now`, by worker id."""
    values = await shelf.listed(Keys(prefix).worker_directory)
    records = (decode(v, now) for v in values if v)
    return sorted((r for r in records if r is not None), key=lambda r: r.worker_id)


def online_by_component(
    records: Iterable[WorkerRecord], components: Sequence[str]
) -> dict[str, int]:
    """Online workers of each of `components` (0 for one with none)."""
    counts = dict.fromkeys(components, 0)
    for record in records:
        if record.status == "online":
            for component in set(record.components) & set(counts):
                counts[component] += 1
    return counts


def components_needed(
    input_type: str, analysis: Sequence[str] = ANALYSIS_COMPONENTS
) -> tuple[str, ...]:
    """The components a session of `input_type` runs (its tenant's `analysis` components):
    media is turned into text first."""
    if input_type in MEDIA_INPUT_TYPES:
        return (MEDIA_PREPROCESS, *analysis)
    return tuple(analysis)


def unserved(
    records: Iterable[WorkerRecord],
    input_type: str,
    analysis: Sequence[str] = ANALYSIS_COMPONENTS,
) -> str | None:
    """Why no online worker can run a session of `input_type` with these `analysis`
    components, or None when each component it needs has an online worker that takes that
    input type."""
    online = [r for r in records if r.status == "online"]
    for component in components_needed(input_type, analysis):
        serving = [r for r in online if component in r.components]
        if not serving:
            return f"no {component} worker is online"
        reads = _read_by(component, input_type)
        if not any(reads in r.input_types for r in serving):
            return f"no online {component} worker can read {reads} input"
    return None


def _read_by(component: str, input_type: str) -> str:
    """The input `component` gets in a session of `input_type`: after media_preprocess, text."""
    if input_type in MEDIA_INPUT_TYPES and component != MEDIA_PREPROCESS:
        return "text"
    return input_type
