"""The API's own documentation: offline assets, a way to enter a key, every answer described."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from dispatcher import answers
from dispatcher.app import create_app
from dispatcher.views import links, processing_body, result_body
from shared.reviews import ReviewItem
from shared.sessions import SessionView
from shared.settings import Settings

SID = "6f1c1a2e-3b1d-4c55-9c0e-2d7a7b1f0a11"
COMPONENTS = ("techniques", "ai_tampered", "claims", "domain")
# Codes every route wanting a key documents, beyond its own.
KEYED = {"400", "401", "422", "429", "431", "500"}


@pytest.fixture(scope="module")
def app() -> Any:
    """The app as assembled, without its lifespan (no service is needed to read its docs)."""
    return create_app(
        Settings(amqp_url="amqp://x", redis_url="redis://x", database_url="postgresql://x")
    )


@pytest.fixture(scope="module")
def document(app: Any) -> dict[str, Any]:
    return app.openapi()


def operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(m, p, op) for p, ops in document["paths"].items() for m, op in ops.items()]


def test_every_route_is_documented_and_every_answer_has_its_body(document) -> None:
    """Each status code a route documents says what it means and, but for 204, its body."""
    for method, path, op in operations(document):
        for code, answer in op["responses"].items():
            assert answer.get("description"), (method, path, code)
            if code != "204":
                schemas = [c.get("schema") for c in answer.get("content", {}).values()]
                assert schemas and all(schemas), (method, path, code)


@pytest.mark.parametrize(
    ("method", "path", "codes"),
    [
        ("post", "/analyze-async", {"200", "202", "403", "408", "409", "413", "503"}),
        ("get", "/{session_id}/queue-status", {"200", "404"}),
        ("get", "/{session_id}/result", {"200", "202", "404"}),
        ("get", "/{session_id}/events", {"200", "204", "404"}),
    ],
)
def test_each_route_documents_the_codes_it_answers_with(document, method, path, codes) -> None:
    """A client reading the docs learns of every answer, refusals included."""
    op = document["paths"][f"/api/v3/pipeline{path}"][method]
    assert codes | KEYED <= set(op["responses"])


def test_refusals_are_documented_with_the_body_they_carry(document) -> None:
    """A refusal's body is `{"detail": …}`; a 422's also lists its problems."""
    op = document["paths"]["/api/v3/pipeline/analyze-async"]["post"]
    schema = lambda code: op["responses"][code]["content"]["application/json"]["schema"]  # noqa: E731
    assert schema("401")["$ref"].endswith("/Problem")
    assert schema("422")["$ref"].endswith("/ValidationProblem")
    assert schema("202")["$ref"].endswith("/Processing")
    assert set(document["components"]["schemas"]["ValidationProblem"]["properties"]) == {
        "detail",
        "errors",
    }


def test_the_event_stream_is_documented_as_text_event_stream(document) -> None:
    """Its 200 is `text/event-stream` only; its token and Last-Event-ID are parameters."""
    op = document["paths"]["/api/v3/pipeline/{session_id}/events"]["get"]
    assert set(op["responses"]["200"]["content"]) == {"text/event-stream"}
    assert {p["name"].lower() for p in op["parameters"]} >= {"token", "last-event-id"}


def test_both_ways_of_presenting_a_key_are_security_schemes_of_every_keyed_route(
    document,
) -> None:
    """The docs' Authorize takes an X-API-Key or a bearer token, and "Try it out" sends it."""
    schemes = document["components"]["securitySchemes"]
    assert schemes["APIKeyHeader"] == {
        "type": "apiKey",
        "in": "header",
        "name": "X-API-Key",
        "description": schemes["APIKeyHeader"]["description"],
    }
    assert schemes["HTTPBearer"]["scheme"] == "bearer"
    for _, path, op in operations(document):
        if path.startswith("/api/"):
            assert op["security"] == [{"APIKeyHeader": []}, {"HTTPBearer": []}], path


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
async def test_the_docs_pages_load_only_assets_this_api_serves(app, page) -> None:
    """No CDN: every script, style and icon the page names is a path of this server, the
    server has it, and the page's policy allows nothing else."""
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
        response = await client.get(page)
        html = response.text
        # What the bundles themselves would fetch from elsewhere, the browser is told not to.
        assert "default-src 'self'" in response.headers["content-security-policy"]
        assets = re.findall(r"""(?:src|href)=["']([^"']+)["']""", html)
        assets += re.findall(r"""(?:url|spec-url)\s*[:=]\s*['"]([^'"]+)['"]""", html)
        assert assets and not [a for a in assets if "://" in a or a.startswith("//")]
        for asset in assets:
            assert (await client.get(asset)).status_code == 200, asset


async def test_the_swagger_page_does_not_keep_keys_in_browser_storage(app) -> None:
    """Swagger UI's persistAuthorization stores the key in localStorage: it stays off."""
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
        html = (await client.get("/docs")).text
    assert '"persistAuthorization": false' in html
    assert '"persistAuthorization": true' not in html


def test_the_answer_models_describe_what_the_routes_answer() -> None:
    """The documented bodies hold the documents the views build (a stale model fails here)."""
    view = SessionView(
        id=SID,
        tenant="acme",
        status="completed",
        plan=4,
        mode="async",
        components=COMPONENTS,
        results={c: {"status": "ok", "score": 50.0} for c in COMPONENTS},
        verdict={"score": 61.5, "label": "suspicious", "confidence": 0.8, "explanation": {}},
        created_at=datetime(2026, 1, 2, tzinfo=UTC),
        finished_at=datetime(2026, 1, 2, tzinfo=UTC),
    )
    processing = processing_body(SID, "t.k")
    assert answers.Processing.model_validate(processing).model_dump() == processing
    result = result_body(view)
    assert answers.Result.model_validate(result).model_dump() == result
    with_links = {**result, **links(SID, "t.k")}
    assert answers.ResultWithLinks.model_validate(with_links).model_dump() == with_links


@pytest.mark.parametrize("status", ["pending", "claimed", "confirmed", "overridden"])
def test_the_review_models_document_every_status_a_review_takes(status: str) -> None:
    """Each status shared/reviews.py stores validates as the reviewers' item and the owner's
    review; a status it never stores (`decided`) does not."""
    item = ReviewItem(
        session_id=SID,
        tenant="acme",
        plan=3,
        label="suspicious",
        score=61.5,
        confidence=0.7,
        reasons=("low_confidence",),
        queued_at=datetime(2026, 1, 2, tzinfo=UTC),
        status=status,
        claimed_by=None if status == "pending" else "acme/ab12cd34",
    )
    assert answers.ReviewItem.model_validate(item.document()).model_dump() == item.document()
    assert answers.Review.model_validate(item.public()).model_dump() == item.public()
    with pytest.raises(ValueError):
        answers.Review.model_validate({**item.public(), "status": "decided"})
