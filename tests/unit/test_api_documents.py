"""What the API answers with, as pure functions: links, result documents, events, sizes."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from dispatcher.app import body_limit
from dispatcher.auth import Caller
from dispatcher.idempotency import request_fingerprint
from dispatcher.routes.sessions import new_session, size_problem
from dispatcher.schemas import AnalyzeRequest
from dispatcher.sse import frame
from dispatcher.views import links, processing_body, result_body
from shared.sessions import SessionView
from shared.settings import Settings

SID = "6f1c1a2e-3b1d-4c55-9c0e-2d7a7b1f0a11"
COMPONENTS = ("techniques", "ai_tampered", "claims", "domain")


def _settings(**overrides: object) -> Settings:
    values: dict[str, object] = {"amqp_url": "amqp://x", "redis_url": "redis://x"}
    values["database_url"] = "postgresql://x"
    return Settings(**{**values, **overrides})  # type: ignore[arg-type]


def test_links_point_at_the_sessions_progress_result_and_events() -> None:
    """A submitter is told the three URLs that follow its session, under the API's path."""
    assert links(SID) == {
        "poll_url": f"/api/v3/pipeline/{SID}/queue-status",
        "result_url": f"/api/v3/pipeline/{SID}/result",
        "events_url": f"/api/v3/pipeline/{SID}/events",
    }
    assert processing_body(SID) == {"session_id": SID, "status": "processing", **links(SID)}


def test_the_events_link_carries_the_sessions_token_when_there_is_one() -> None:
    """A browser's EventSource sends no key: the link it is given opens the stream by itself."""
    assert links(SID, "abc.def")["events_url"] == f"/api/v3/pipeline/{SID}/events?token=abc.def"
    assert processing_body(SID, "abc.def")["events_url"].endswith("?token=abc.def")


def test_the_result_document_carries_progress_results_verdict_and_iso_times() -> None:
    """A final session shows 100 %, its plan and mode, each component and the verdict."""
    verdict = {"score": 61.5, "label": "suspicious", "confidence": 0.8, "explanation": {}}
    view = SessionView(
        id=SID,
        tenant="acme",
        status="completed",
        plan=4,
        mode="async",
        components=COMPONENTS,
        results={c: {"status": "ok", "score": 50.0} for c in COMPONENTS},
        verdict=verdict,
        created_at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
        finished_at=None,
    )
    body = result_body(view)
    assert body["session_id"] == SID and body["status"] == "completed"
    assert body["progress"] == 100 and body["pending_components"] == []
    assert (body["plan_type"], body["mode"]) == (4, "async")
    assert body["created_at"] == "2026-01-02T03:04:05+00:00" and body["finished_at"] is None
    assert body["components"]["claims"]["score"] == 50.0 and body["verdict"] == verdict
    assert "tenant" not in body  # whose session it is is not the client's business


def test_a_server_sent_event_is_its_name_then_one_line_of_json() -> None:
    """`event:` and `data:` lines ended by a blank line; values JSON cannot hold become text."""
    when = datetime(2026, 1, 2, tzinfo=UTC)
    raw = frame("progress", {"status": "processing", "at": when, "text": "two\nlines"})
    name, data, end = raw.decode().split("\n", 2)
    assert name == "event: progress" and end == "\n"
    sent = json.loads(data.removeprefix("data: "))
    assert sent == {"status": "processing", "at": str(when), "text": "two\nlines"}


def test_content_and_urls_past_the_servers_limits_are_named() -> None:
    """Content over MAX_CONTENT_CHARS and a url over MAX_URL_CHARS each get a reason."""
    settings = _settings(max_content_chars=10, max_url_chars=30)
    assert size_problem(AnalyzeRequest(content="a" * 10), settings) is None
    assert size_problem(AnalyzeRequest(content="a" * 11), settings) == (
        "content has 11 characters; limit 10"
    )
    long_url = AnalyzeRequest(url="https://example.com/" + "a" * 20, input_type="url")
    assert size_problem(long_url, settings) == "url longer than 30 characters"


def test_a_new_session_runs_on_the_effective_plan_with_its_deadline_and_fingerprint() -> None:
    """The session takes the tenant, the plan, the plan's deadline and, only with an
    idempotency key, the request's fingerprint."""
    settings = _settings(session_deadline_by_plan={2: 42.0})
    body = AnalyzeRequest(content="hello", user_id="u1")
    keyed = new_session(body, Caller("acme", 6), 2, None, "k1", settings)
    assert (keyed.tenant, keyed.plan, keyed.deadline_s, keyed.user_id) == ("acme", 2, 42.0, "u1")
    assert keyed.input["content"] == "hello" and keyed.idempotency_key == "k1"
    assert keyed.request_hash == request_fingerprint(body, 2)
    unkeyed = new_session(body, Caller("acme", 6), 2, None, None, settings)
    assert unkeyed.request_hash is None and unkeyed.id != keyed.id


def test_the_body_limit_fits_the_largest_content_in_its_widest_json_spelling() -> None:
    """Content of MAX_CONTENT_CHARS characters, each sent as a 12-byte surrogate-pair escape,
    with every other field at its longest, is still read whole."""
    settings = _settings()
    widest = {
        "content": "\U0001f600" * settings.max_content_chars,
        "media_path": "m" * 1024,
        "user_id": "u" * 128,
        "input_type": "text",
        "plan_type": 6,
    }
    assert len(json.dumps(widest).encode()) <= body_limit(settings)
