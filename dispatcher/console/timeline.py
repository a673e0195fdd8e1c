"""A session's timeline from what the record holds: accepted, each component's run and result,
the verdict, final.

The record keeps when each result was recorded, how long its run took and which attempt it
came from; a run's start is that time less its processing time (so it leaves out the trip to
the aggregator), and earlier attempts of a retried task are counted, not timed.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any


@dataclass(frozen=True)
class Moment:
    at: datetime
    what: str
    component: str | None = None


def timeline(record: dict[str, Any]) -> list[Moment]:
    """The session's moments, oldest first (a session's own moments before its components'
    at the same instant)."""
    moments = [Moment(record["created_at"], _accepted(record))]
    for result in record["results"]:
        moments += _component_moments(result)
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


def _component_moments(result: dict[str, Any]) -> list[Moment]:
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
    score = f", score {result['score']:.1f}" if result.get("score") is not None else ""
    moments.append(Moment(finished_at, f"finished: {result['status']}{score}", component))
    return sorted(moments, key=lambda m: m.at)
