"""What a worker can do, checked rather than assumed: its binaries and services, and from them
the input types it reads. Announced with every heartbeat (shared/registry.py)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace

import httpx

from shared.constants import MEDIA_PREPROCESS
from shared.heartbeat import Announce, announcement
from shared.messages import MAX_MESSAGE_BYTES
from shared.registry import Announcement
from shared.settings import Settings
from workers.analysis.media import installed_tesseract

# A service that does not answer within this is not counted on (the beat must not lag).
PROBE_TIMEOUT_S = 3.0
# What every analysis component reads: text, and urls (the domain checks; the others the text).
TEXT_INPUT = ("text", "url")


def media_input_types(capabilities: dict[str, bool]) -> tuple[str, ...]:
    """Media a media worker can turn into text: images by OCR (tesseract or the service),
    audio and video by the transcription service."""
    ocr = capabilities.get("tesseract") or capabilities.get("ocr_service")
    heard = capabilities.get("transcription_service")
    return (*(("image",) if ocr else ()), *(("audio", "video") if heard else ()))


async def reachable(http: httpx.AsyncClient, url: str) -> bool:
    """Whether anything answers HTTP at `url` (any status: the service is there)."""
    try:
        await http.get(url, timeout=PROBE_TIMEOUT_S)
    except (httpx.HTTPError, ValueError):  # refused, timed out, or not a URL at all
        return False
    return True


async def media_capabilities(settings: Settings, http: httpx.AsyncClient) -> dict[str, bool]:
    """The media worker's needs, each found now or not (a service not configured is not)."""
    found = {"tesseract": installed_tesseract() is not None}
    services = {
        "ocr_service": settings.ocr_url,
        "transcription_service": settings.transcription_url,
    }
    for name, url in services.items():
        found[name] = bool(url) and await reachable(http, url or "")
    return found


def limits_of(settings: Settings, prefetch: int) -> dict[str, float]:
    """The bounds a worker runs under, for operators comparing workers."""
    return {
        "prefetch": prefetch,
        "task_timeout_s": settings.task_timeout_s,
        "video_timeout_s": settings.video_timeout_s,
        "max_content_chars": settings.max_content_chars,
        "max_message_bytes": MAX_MESSAGE_BYTES,
    }


def announcer(
    settings: Settings,
    http: httpx.AsyncClient,
    component: str,
    concurrency: int,
    prefetch: int,
    check: Callable[[Settings, httpx.AsyncClient], Awaitable[dict[str, bool]]] = (
        media_capabilities
    ),
) -> Announce:
    """The announcement of a worker of `component`, its capabilities checked at each beat."""
    first = announcement(component, concurrency, TEXT_INPUT, limits=limits_of(settings, prefetch))

    async def announce() -> Announcement:
        if component != MEDIA_PREPROCESS:
            return first
        found = await check(settings, http)
        return replace(first, capabilities=found, input_types=media_input_types(found))

    return announce


def combined(said: Sequence[Announcement]) -> Announcement:
    """One process's announcement for the components it serves together: each component's
    input types, capabilities and prefetch, concurrency summed (a single one unchanged)."""
    if len(said) == 1:
        return said[0]
    limits = {k: v for a in said for k, v in a.limits.items() if k != "prefetch"}
    for one in said:
        limits[f"prefetch_{one.components[0]}"] = one.limits.get("prefetch", 0)
    return replace(
        said[0],
        components=tuple(c for a in said for c in a.components),
        input_types=tuple(dict.fromkeys(t for a in said for t in a.input_types)),
        concurrency=sum(a.concurrency for a in said),
        capabilities={k: v for a in said for k, v in a.capabilities.items()},
        limits=limits,
    )


def group_announcer(announcers: Sequence[Announce]) -> Announce:
    """The announcement of a process serving several components, each checked at each beat."""

    async def announce() -> Announcement:
        return combined([await each() for each in announcers])

    return announce
