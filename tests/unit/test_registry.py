"""The worker registry's pure parts: status by silence, records on the wire, who can serve."""

from __future__ import annotations

from shared.constants import ANALYSIS_COMPONENTS
from shared.registry import (
    Announcement,
    WorkerRecord,
    decode,
    encode,
    online_by_component,
    status_at,
    unserved,
)
from workers.capabilities import TEXT_INPUT, media_input_types

NOW = 1_000_000.0


def record(component: str, input_types: tuple[str, ...], silent_s: float = 0) -> WorkerRecord:
    said = Announcement(
        worker_id=f"h-{component}",
        host="h",
        pid=1,
        components=(component,),
        input_types=input_types,
        version="0.1.0",
        concurrency=2,
        started_at=NOW - 100,
    )
    decoded = decode(encode(said, 0, NOW - silent_s), NOW)
    assert decoded is not None
    return decoded


def analysts(silent_s: float = 0) -> list[WorkerRecord]:
    return [record(c, TEXT_INPUT, silent_s) for c in ANALYSIS_COMPONENTS]


def test_status_goes_online_stale_offline_with_silence() -> None:
    """Online under 60 s of silence, stale until 90 s, then offline."""
    assert [status_at(NOW, NOW - s) for s in (0, 59.9, 60, 89.9, 90, 3000)] == [
        "online",
        "online",
        "stale",
        "stale",
        "offline",
        "offline",
    ]


def test_a_clean_stop_is_offline_at_once() -> None:
    """A worker that said it stopped is offline however recent its last beat."""
    assert status_at(NOW, NOW, stopped=True) == "offline"
    said = record("claims", TEXT_INPUT)
    stopped = decode(encode(said, 0, NOW, stopped_at=NOW), NOW)
    assert stopped is not None and stopped.status == "offline"


def test_a_record_round_trips_with_the_fields_the_console_shows() -> None:
    """What a beat writes reads back with every announced field and its status now."""
    said = Announcement(
        "w-1", "host-1", 42, ("media_preprocess",), ("image",), "0.1.0", 2, NOW - 5,
        {"tesseract": True}, {"task_timeout_s": 120.0},
    )  # fmt: skip
    back = decode(encode(said, 3, NOW - 70), NOW)
    assert back is not None
    assert (back.worker_id, back.host, back.pid, back.components) == (
        "w-1",
        "host-1",
        42,
        ("media_preprocess",),
    )
    assert (back.input_types, back.capabilities, back.limits) == (
        ("image",),
        {"tesseract": True},
        {"task_timeout_s": 120.0},
    )
    assert (back.in_flight, back.last_seen, back.status) == (3, NOW - 70, "stale")


def test_a_value_that_is_no_record_is_skipped() -> None:
    """A heartbeat of the older format (or garbage) is not a record: it lapses by itself."""
    assert decode('{"worker_id": "w", "component": "claims", "seen_at": 1}', NOW) is None
    assert decode(b"not json", NOW) is None


def test_text_needs_an_online_worker_of_each_analysis_component() -> None:
    """The first missing component is named; stale workers do not count."""
    assert unserved(analysts(), "text") is None
    assert unserved(analysts()[1:], "text") == "no techniques worker is online"
    assert unserved(analysts(silent_s=61), "url") == "no techniques worker is online"
    assert unserved([], "text") == "no techniques worker is online"


def test_media_needs_a_media_worker_that_reads_that_type() -> None:
    """An image needs a media worker with OCR; audio one with transcription."""
    no_ocr = record("media_preprocess", ("audio", "video"))
    assert unserved(analysts(), "image") == "no media_preprocess worker is online"
    assert (
        unserved([*analysts(), no_ocr], "image")
        == "no online media_preprocess worker can read image input"
    )
    assert unserved([*analysts(), no_ocr], "audio") is None
    assert unserved([no_ocr], "audio") == "no techniques worker is online"


def test_media_input_types_follow_what_was_found() -> None:
    """OCR (either kind) reads images; the transcription service audio and video."""
    assert media_input_types({"tesseract": True}) == ("image",)
    assert media_input_types({"tesseract": False, "ocr_service": True}) == ("image",)
    assert media_input_types({"transcription_service": True}) == ("audio", "video")
    assert media_input_types({"tesseract": False, "transcription_service": False}) == ()


def test_online_counts_name_every_component_even_without_workers() -> None:
    """The gauge behind the 'no online worker' alert needs a 0, not a missing series."""
    counts = online_by_component([*analysts(), record("claims", TEXT_INPUT, 100)], ["claims", "x"])
    assert counts == {"claims": 1, "x": 0}
