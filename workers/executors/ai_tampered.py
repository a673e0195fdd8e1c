"""ai_tampered: signs of machine-generated text and of generated or edited images."""

from typing import Any

from shared.messages import Task
from workers.analysis import image_forensics, machine_text
from workers.analysis.media import resolve_media_path
from workers.executor import Analysis, ExecutorContext, executor, task_timeout_s

# Fewer words than this say nothing about how a text was written.
MIN_TEXT_WORDS = 5


@executor("ai_tampered")
async def run(task: Task, ctx: ExecutorContext) -> Analysis:
    parts: dict[str, tuple[float, dict[str, Any]]] = {}
    text = task.input.content or ""
    timeout = task_timeout_s(task, ctx.settings)
    if len(text.split()) >= MIN_TEXT_WORDS:
        report = await ctx.analysis.run(machine_text.assess_machine_text, text, timeout_s=timeout)
        parts["text"] = (report.score, machine_text.report_data(report))
    if task.input.input_type == "image" and task.input.media_path:
        path = resolve_media_path(ctx.settings.media_root, task.input.media_path)
        image = await ctx.analysis.run(image_forensics.inspect_image, path, timeout_s=timeout)
        parts["image"] = (image.score, image_forensics.report_data(image))
    if not parts:
        return Analysis(
            0.0,
            {
                "applicable": False,
                "evidence_count": 0,
                "summary": [],
                "summary_ro": [],
                "note": "no text or image to analyse",
            },
        )
    # The strongest part decides: a genuine caption does not clear a generated image.
    score = max(score for score, _ in parts.values())
    summary = [s for _, data in parts.values() for s in data["summary"]]
    summary_ro = [s for _, data in parts.values() for s in data["summary_ro"]]
    data = {name: d for name, (_, d) in parts.items()}
    return Analysis(
        score, {**data, **_coverage(data), "summary": summary[:5], "summary_ro": summary_ro[:5]}
    )


def _coverage(parts: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Whether anything could be judged (a text long enough, an image) and how many signs
    raised the score: the text's evidence plus the image's signs."""
    text = parts.get("text", {})
    image = parts.get("image", {})
    return {
        "applicable": bool(text.get("applicable")) or bool(image),
        "evidence_count": int(text.get("evidence_count", 0)) + len(image.get("signs", [])),
    }
