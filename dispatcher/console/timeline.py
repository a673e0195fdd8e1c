"""A session's timeline: accepted, each attempt at each component (started, retried,
dead-lettered), each result, the verdict, final.

Workers write each attempt down in Redis for a day (shared/attempts.py); the record in
Postgres keeps when each result was recorded, how long its run took and which attempt it came
from. Without the attempts (older than a day, or analysed in the API while the broker was
away), a run's start is its result's time less its processing time, and earlier attempts
are counted, not timed.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from shared.attempts import Attempt


@dataclass(frozen=True)
class Moment:
    at: datetime
    what: str
    component: str | None = None


def timeline(
    record: dict[str, Any], attempts: dict[str, list[Attempt]] | None = None
) -> list[Moment]:
    """The session's moments, oldest first (a session's own moments before its components'
    at the same instant)."""
    attempts = attempts or {}
    moments = [Moment(record["created_at"], _accepted(record))]
    for result in record["results"]:
        tried = attempts.get(result["component"])
        moments += _attempt_moments(result["component"], tried) if tried else _derived(result)
        moments.append(_finished(result))
    results = {r["component"] for r in record["results"]}
    for component, tried in attempts.items():
        if component not in results:  # still running, or never reported: dead-lettered
            moments += _attempt_moments(component, tried)
    verdict = record.get("verdict")
    if verdict is not None:
        moments.append(Moment(verdict["created_at"], f"verdict reached: {verdict['label']}"))
    if record.get("finished_at") is not None:
        moments.append(Moment(record["finished_at"], f"final: {record['status']}"))
    return sorted(moments, key=lambda m: m.at)


def _accepted(record: dict[str, Any]) -> str:
    return (
        f"accepted: {record['input_type']} on plan {record['plan']} "
        f"({record['mode']}), components {', '.join(record['components'])}"
    )


_ENDS = {"retry": "retried", "dead_letter": "dead-lettered", "skipped": "skipped"}


def _attempt_moments(component: str, tried: list[Attempt]) -> list[Moment]:
    """Each recorded attempt's start, and its end unless it reported a result."""
    moments = []
    for a in tried:
        started = datetime.fromtimestamp(a.started_at, UTC)
        moments.append(Moment(started, f"attempt {a.attempt} started on {a.worker_id}", component))
        if a.end in _ENDS:
            ended = datetime.fromtimestamp(a.ended_at, UTC)
            detail = f": {a.detail}" if a.detail else ""
            moments.append(Moment(ended, f"attempt {a.attempt} {_ENDS[a.end]}{detail}", component))
    return moments


def _finished(result: dict[str, Any]) -> Moment:
    score = f", score {result['score']:.1f}" if result.get("score") is not None else ""
    return Moment(
        result["recorded_at"], f"finished: {result['status']}{score}", result["component"]
    )


def _derived(result: dict[str, Any]) -> list[Moment]:
    """The run's start from its processing time, and how many attempts came before it."""
    component, attempt = result["component"], result["attempt"]
    finished_at = result["recorded_at"]
    moments = []
    if attempt > 1:
        retried = attempt - 1
        moments.append(
            Moment(
                finished_at,
                f"retried {retried} time{'s' if retried > 1 else ''} before this attempt",
                component,
            )
        )
    if result.get("processing_ms") is not None:
        started_at = finished_at - timedelta(milliseconds=result["processing_ms"])
        worker = f" on {result['worker_id']}" if result.get("worker_id") else ""
        moments.append(Moment(started_at, f"attempt {attempt} started{worker}", component))
    return sorted(moments, key=lambda m: m.at)
