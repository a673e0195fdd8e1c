"""Event streams as standard SSE clients read them: ids, retry, keep-alive, resumption."""

from __future__ import annotations

from collections.abc import Iterator

from dispatcher.sse import (
    KEEPALIVE,
    RESULT_ID,
    REVIEW_ID,
    Snapshot,
    finished,
    follow,
    frame,
    progress_id,
    retry_field,
)

COMPONENTS = ["techniques", "ai_tampered", "claims", "domain"]


def progress(answered: int, status: str = "processing") -> dict:
    return {
        "status": status,
        "progress": 25 * answered,
        "completed_components": COMPONENTS[:answered],
        "failed_components": [],
        "pending_components": COMPONENTS[answered:],
    }


def final(review: dict | None = None) -> Snapshot:
    result = {"status": "completed", "verdict": {"label": "x"}}
    return Snapshot(progress(4, "completed"), result, review)


PENDING = {"status": "pending", "label": None, "note": None, "reviewed_at": None}
DECIDED = {"status": "decided", "label": "low_risk", "note": "ok", "reviewed_at": "2026-11-30"}


class Clock:
    """A clock each wait moves on by `step` seconds."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 0.0, step

    def __call__(self) -> float:
        return self.now

    async def wait(self) -> None:
        self.now += self.step


async def stream(
    snapshots: list[Snapshot], last_event_id: str | None = None, step: float = 1.0
) -> list[bytes]:
    """Every frame `follow` sends while the session goes through `snapshots` in turn."""
    clock = Clock(step)
    feed: Iterator[Snapshot] = iter(snapshots)

    async def read() -> Snapshot:
        return next(feed)

    async def wait(for_review: bool) -> None:
        await clock.wait()

    return [f async for f in follow(read, wait, last_event_id, 15.0, clock)]


def parsed(frames: list[bytes]) -> list[dict[str, str]]:
    """The events of the frames as a client sees them (comments and retry-only blocks left out)."""
    events = []
    for block in b"".join(frames).decode().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "data" in fields:
            events.append(fields)
    return events


def test_an_event_has_its_name_id_and_data_lines_then_a_blank_line() -> None:
    """The id line lets a client send it back as Last-Event-ID when it reconnects."""
    assert frame("progress", {"a": 1}, "2") == b'event: progress\nid: 2\ndata: {"a": 1}\n\n'
    assert retry_field(3000) == b"retry: 3000\n\n"


async def test_the_stream_opens_with_retry_then_gives_ids_in_order_and_ends_with_the_result() -> (
    None
):
    """retry: first; each progress event's id counts answered components; the result last."""
    frames = await stream([Snapshot(progress(0)), Snapshot(progress(2)), final()])
    assert frames[0].startswith(b"retry: ")
    events = parsed(frames)
    assert [(e["event"], e["id"]) for e in events] == [
        ("progress", "0"),
        ("progress", "2"),
        ("progress", "4"),
        ("result", RESULT_ID),
    ]


async def test_an_unchanged_snapshot_is_not_sent_again() -> None:
    """Polls that find nothing new send nothing (before the keep-alive is due)."""
    events = parsed(await stream([Snapshot(progress(1))] * 3 + [final()]))
    assert [e["id"] for e in events] == ["1", "4", RESULT_ID]


async def test_a_client_resuming_with_last_event_id_gets_only_what_it_has_not_seen() -> None:
    """Last-Event-ID 2: the progress it had is skipped, later progress and the result come."""
    events = parsed(await stream([Snapshot(progress(2)), Snapshot(progress(3)), final()], "2"))
    assert [e["id"] for e in events] == ["3", "4", RESULT_ID]


async def test_a_last_event_id_that_is_not_ours_is_treated_as_absent() -> None:
    """Digits int() cannot read ('²') or that are not ASCII ('٣') were never sent as an id: the
    stream starts from the beginning instead of failing."""
    for odd in ("²", "٣", "1²", "-1", " 2"):
        events = parsed(await stream([Snapshot(progress(2)), final()], odd))
        assert [e["id"] for e in events] == ["2", "4", RESULT_ID], odd


async def test_a_client_that_saw_progress_before_the_end_still_gets_the_result() -> None:
    """A stream dropped at the last progress event: the reconnect brings the result alone."""
    events = parsed(await stream([final()], "4"))
    assert [(e["event"], e["id"]) for e in events] == [("result", RESULT_ID)]


async def test_a_keep_alive_comment_goes_out_whenever_the_stream_was_quiet_long_enough() -> None:
    """Idle polls of 1 s with a 15 s keep-alive: none in 14 s, one in 20 s, two in 31 s."""

    async def comments(idle_polls: int) -> int:
        frames = await stream([Snapshot(progress(1))] * idle_polls + [final()])
        return frames.count(KEEPALIVE)

    assert [await comments(n) for n in (14, 20, 31)] == [0, 1, 2]


async def test_no_keep_alive_while_events_flow() -> None:
    """Progress every few seconds resets the quiet time: no comment is needed."""
    snapshots = [Snapshot(progress(n)) for n in range(4)] + [final()]
    assert KEEPALIVE not in await stream(snapshots, step=10.0)


def test_only_a_client_that_had_the_last_event_is_finished() -> None:
    """204 on reconnect is for a client past the result (past the review when a verdict was
    queued for one), not one that had progress only."""
    assert finished(RESULT_ID, review_queued=False) and finished(REVIEW_ID, review_queued=True)
    assert not finished(RESULT_ID, review_queued=True)
    assert not finished(None, review_queued=False) and not finished("4", review_queued=False)


async def test_a_verdict_queued_for_review_is_followed_by_the_review_once_decided() -> None:
    """The result, then the stream waits (keep-alives meanwhile) for the review event."""
    frames = await stream([final(PENDING)] * 20 + [final(DECIDED)])
    events = parsed(frames)
    assert [(e["event"], e["id"]) for e in events] == [
        ("progress", "4"),
        ("result", RESULT_ID),
        ("review", REVIEW_ID),
    ]
    assert KEEPALIVE in frames


async def test_a_client_back_after_the_result_waits_for_the_review_alone() -> None:
    """Last-Event-ID `result` with a review pending: neither progress nor result again."""
    events = parsed(await stream([final(PENDING), final(DECIDED)], RESULT_ID))
    assert [(e["event"], e["id"]) for e in events] == [("review", REVIEW_ID)]


def test_the_progress_id_counts_failed_components_too() -> None:
    """A component that failed has answered: the id moves on all the same."""
    failed = {**progress(1), "failed_components": ["claims"]}
    assert progress_id(failed) == "2"


async def test_a_stream_open_when_the_server_stops_ends_there_and_resumes_from_its_last_id() -> (
    None
):
    """The server stopping ends the stream after the wait it cuts short, with no final event
    (so an EventSource reconnects); reconnected with the last id it saw, the client gets only
    what came after."""
    snapshots = iter([Snapshot(progress(1)), Snapshot(progress(2))])
    stopped = False

    async def read() -> Snapshot:
        return next(snapshots)

    async def wait(for_review: bool) -> None:
        nonlocal stopped
        stopped = True  # the signal arrives while the stream waits for news

    frames = [f async for f in follow(read, wait, stopping=lambda: stopped)]
    events = parsed(frames)
    assert [(e["event"], e["id"]) for e in events] == [("progress", "1")]

    resumed = parsed(await stream([Snapshot(progress(2)), final()], last_event_id="1"))
    assert [(e["event"], e["id"]) for e in resumed] == [
        ("progress", "2"),
        ("progress", "4"),
        ("result", RESULT_ID),
    ]
