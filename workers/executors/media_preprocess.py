"""media_preprocess: image, audio and video input into text, then the session's analysis tasks."""

import json
import re

from shared.constants import ANALYSIS_COMPONENTS, MEDIA_CACHE_TTL_S
from shared.keys import Keys
from shared.messages import Task, now_ms
from shared.signing import origin_of
from workers.analysis.media import (
    MediaText,
    extract_text,
    installed_tesseract,
    resolve_media_path,
)
from workers.executor import Analysis, ExecutorContext, executor, task_timeout_s

# C0 controls except tab, newline and carriage return: what the API refuses in any field.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


@executor("media_preprocess")
async def run(task: Task, ctx: ExecutorContext) -> Analysis:
    key = Keys(ctx.settings.key_prefix).media_text(task.session_id)
    cache = ctx.media_cache
    cached = await cache.get(key) if cache is not None else None
    if cached:
        media = MediaText(**json.loads(cached))
    else:
        media = await _extract(task, ctx)
        if cache is not None:
            await cache.put(key, json.dumps(media.__dict__), MEDIA_CACHE_TTL_S)
    # Only the components the session runs: a tenant may have chosen fewer than four.
    components = task.tenant.components if task.tenant else ANALYSIS_COMPONENTS
    for component in components:
        await ctx.dispatch(follow_up(task, component, media.text, ctx.settings.max_content_chars))
    return Analysis(
        0.0,
        {
            "method": media.method,
            "chars": len(media.text),
            "cached": bool(cached),
            "dispatched": list(components),
        },
    )


async def _extract(task: Task, ctx: ExecutorContext) -> MediaText:
    path = resolve_media_path(ctx.settings.media_root, task.input.media_path)
    # Leave the runtime a margin to report the failure before its own timeout fires.
    budget = task_timeout_s(task, ctx.settings) * 0.9
    return await extract_text(
        ctx.http, ctx.settings, task.input.input_type, path, budget, installed_tesseract()
    )


def follow_up(task: Task, component: str, extracted: str, max_chars: int) -> Task:
    """The analysis task of `component`: the media text added to any text the client sent.

    A transcript or OCR text comes from a service, not through the API's checks: it is held to
    the same bounds (control characters other than tab and newlines removed — PostgreSQL's
    jsonb refuses NUL in evidence quotes — and at most `max_chars` in all), so the task stays
    within the message size every worker accepts."""
    clean = _CONTROL.sub("", extracted)
    content = "\n\n".join(part for part in (task.input.content, clean) if part)[:max_chars]
    return task.model_copy(
        update={
            "component": component,
            "input": task.input.model_copy(update={"content": content}),
            "timestamp": now_ms(),
            "retry_count": 0,
            "signature": None,
            "origin": origin_of(task),
        }
    )
