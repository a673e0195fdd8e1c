"""Text extracted from media is held to the API's bounds before it becomes analysis tasks."""

from shared.messages import Task, TaskInput
from workers.executors.media_preprocess import follow_up


def media_task(content: str | None = None) -> Task:
    return Task(
        session_id="00000000-0000-0000-0000-000000000001",
        component="media_preprocess",
        plan_type=2,
        priority=2,
        input=TaskInput(content=content, mediaPath="t/a.png", inputType="image"),
        timestamp=1,
    )


def test_control_characters_from_a_transcript_are_removed_tabs_and_newlines_kept():
    """NUL and other C0 controls a service returned never reach an analysis task."""
    task = follow_up(media_task(), "claims", "one\x00two\x1bthree\tfour\nfive", 1000)
    assert task.input.content == "onetwothree\tfour\nfive"
    assert task.component == "claims"


def test_the_task_text_is_capped_at_the_content_limit():
    """A transcript far over the limit is cut, the client's own text first."""
    task = follow_up(media_task("caption"), "techniques", "x" * 50_000, 1_000)
    assert task.input.content is not None
    assert len(task.input.content) == 1_000
    assert task.input.content.startswith("caption\n\n")
