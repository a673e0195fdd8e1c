"""The HTTP API against real services: submit, poll, result, tenants, errors, sync, backpressure."""

import contextlib
import json
import uuid

import httpx
import pytest

from aggregator.service import Aggregator
from dispatcher.app import create_app
from shared.constants import ANALYSIS_COMPONENTS
from tests.integration.conftest import (
    eventually,
    on_both_transports,
    only_on_rabbitmq,
    queue_depths,
    running,
)
from workers.executor import Analysis
from workers.runtime import Worker, WorkerOptions

# Each test on both transports, but where one says why it cannot (only_on_rabbitmq).
pytestmark = [pytest.mark.integration, on_both_transports]


API = "/api/v3/pipeline"
ENTERPRISE = {"X-API-Key": "test-enterprise"}
OTHER_TENANT = {"X-API-Key": "test-freemium"}


def explain(verdict, results):
    return {"en": verdict.label, "ro": verdict.label}


async def length_score(task, ctx):
    return Analysis(min(100.0, len(task.input.content or "") / 10))


@contextlib.asynccontextmanager
async def client_for(settings):
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        state = app.state.pipeline
        await eventually(
            lambda: _true(state.publisher is not None or settings.amqp_url.endswith(":1/")), 10
        )
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://api"
        ) as client:
            yield client


async def _true(value):
    return value


async def test_submit_poll_and_result_for_the_callers_own_session(settings):
    """202 with links; queue-status and result follow the session to its verdict; 404 for others."""
    services = [
        Worker(settings, WorkerOptions(c, 2, 2), length_score).run for c in ANALYSIS_COMPONENTS
    ]
    async with (
        running(*services, Aggregator(settings, explain=explain).run),
        client_for(settings) as api,
    ):
        response = await api.post(
            f"{API}/analyze-async", json={"content": "a" * 500, "plan_type": 5}, headers=ENTERPRISE
        )
        assert response.status_code == 202, response.text
        body = response.json()
        sid = body["session_id"]
        assert body["poll_url"] == f"{API}/{sid}/queue-status"
        assert body["result_url"] == f"{API}/{sid}/result"

        async def final():
            r = await api.get(body["result_url"], headers=ENTERPRISE)
            return r if r.status_code == 200 else None

        result = (await eventually(final)).json()
        status = (await api.get(body["poll_url"], headers=ENTERPRISE)).json()
        assert (await api.get(body["result_url"], headers=OTHER_TENANT)).status_code == 404
        assert (await api.get(body["poll_url"], headers=OTHER_TENANT)).status_code == 404
    assert (
        result["status"] == "completed" and result["plan_type"] == 5 and result["mode"] == "async"
    )
    assert result["verdict"]["score"] == pytest.approx(87.09, abs=0.01)  # four at 50 add up
    assert set(result["components"]) == set(ANALYSIS_COMPONENTS)
    assert status["progress"] == 100 and status["pending_components"] == []


async def test_events_stream_progress_then_the_result_and_end(settings):
    """GET …/events (text/event-stream): progress events, then one `result` event with the
    verdict, and the stream ends; another tenant gets 404."""
    services = [
        Worker(settings, WorkerOptions(c, 2, 2), length_score).run for c in ANALYSIS_COMPONENTS
    ]
    async with (
        running(*services, Aggregator(settings, explain=explain).run),
        client_for(settings) as api,
    ):
        response = await api.post(
            f"{API}/analyze-async", json={"content": "a" * 500}, headers=ENTERPRISE
        )
        events_url = response.json()["events_url"]
        assert (await api.get(events_url, headers=OTHER_TENANT)).status_code == 404
        events: list[tuple[str, dict]] = []
        async with api.stream("GET", events_url, headers=ENTERPRISE) as stream:
            assert stream.headers["content-type"].startswith("text/event-stream")
            name = ""
            async for line in stream.aiter_lines():
                if line.startswith("event: "):
                    name = line.removeprefix("event: ")
                elif line.startswith("data: "):
                    events.append((name, json.loads(line.removeprefix("data: "))))
    names = [name for name, _ in events]
    assert names[0] == "progress" and names[-1] == "result" and names.count("result") == 1
    final = events[-1][1]
    assert final["status"] == "completed" and final["verdict"]["label"]


async def test_processing_sessions_answer_202_and_unknown_ones_404(settings):
    """With no workers running the result is 202 (processing); a random id is 404."""
    async with client_for(settings) as api:
        sid = (
            await api.post(f"{API}/analyze-async", json={"text": "hello"}, headers=ENTERPRISE)
        ).json()["session_id"]
        pending = await api.get(f"{API}/{sid}/result", headers=ENTERPRISE)
        status = await api.get(f"{API}/{sid}/queue-status", headers=ENTERPRISE)
        missing = await api.get(f"{API}/{uuid.uuid4()}/result", headers=ENTERPRISE)
    assert pending.status_code == 202 and pending.json()["status"] == "processing"
    assert status.json()["progress"] == 0 and len(status.json()["pending_components"]) == 4
    assert missing.status_code == 404


async def test_requests_are_checked_before_anything_is_queued(settings, pool):
    """401 without a key, 403 above the key's plan, 422 with a readable reason, 413 if too big;
    none of them leaves a session row or a task on any queue."""
    rows_before = await pool.fetchval("SELECT count(*) FROM sessions")
    async with client_for(settings) as api:
        no_key = await api.post(f"{API}/analyze-async", json={"text": "x"})
        too_high = await api.post(
            f"{API}/analyze-async", json={"text": "x", "plan_type": 6}, headers=OTHER_TENANT
        )
        invalid = await api.post(
            f"{API}/analyze-async", json={"input_type": "url"}, headers=ENTERPRISE
        )
        huge = await api.post(
            f"{API}/analyze-async",
            json={"text": "x" * (settings.max_content_chars + 1)},
            headers=ENTERPRISE,
        )
    assert no_key.status_code == 401
    assert too_high.status_code == 403 and "may only lower" in too_high.json()["detail"]
    assert invalid.status_code == 422 and "needs a url" in invalid.json()["detail"]
    assert huge.status_code == 413
    assert await pool.fetchval("SELECT count(*) FROM sessions") == rows_before
    assert sum((await queue_depths(settings)).values()) == 0


async def test_same_idempotency_key_returns_the_same_session(settings):
    """A retried POST with the same Idempotency-Key does not start a second session."""
    headers = {**ENTERPRISE, "Idempotency-Key": f"k-{uuid.uuid4()}"}
    async with client_for(settings) as api:
        first = await api.post(f"{API}/analyze-async", json={"text": "once"}, headers=headers)
        second = await api.post(f"{API}/analyze-async", json={"text": "once"}, headers=headers)
    assert first.status_code == second.status_code == 202
    assert first.json()["session_id"] == second.json()["session_id"]


async def test_unreachable_broker_means_synchronous_analysis(world):
    """No RabbitMQ: the API analyses in-process and answers 200 with the verdict, mode sync."""
    settings = await world()
    only_on_rabbitmq(settings, "on the postgres transport there is no broker to lose")
    offline = settings.model_copy(update={"amqp_url": "amqp://guest:guest@127.0.0.1:1/"})
    async with client_for(offline) as api:
        response = await api.post(
            f"{API}/analyze-async",
            json={"text": "Read this NOW!!! https://bit.ly/x"},
            headers=ENTERPRISE,
        )
        status = await api.get(
            f"{API}/{response.json()['session_id']}/queue-status", headers=ENTERPRISE
        )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["mode"] == "sync" and body["status"] == "completed"
    assert body["verdict"]["label"] and set(body["components"]) == set(ANALYSIS_COMPONENTS)
    # The live state (read before Postgres) says so too, not the "processing" of the POST.
    assert status.json()["status"] == "completed" and status.json()["progress"] == 100


async def test_full_queues_answer_503_and_leave_no_session_behind(world, pool):
    """Length cap reached (the broker's x-max-length, or as many rows waiting in job_queue):
    503 with Retry-After, and no session row claims the refused work."""
    settings = await world(queue_max_length=1)
    async with client_for(settings) as api:
        accepted = await api.post(
            f"{API}/analyze-async", json={"text": "first"}, headers=ENTERPRISE
        )
        refused = await api.post(
            f"{API}/analyze-async", json={"text": "second"}, headers=ENTERPRISE
        )
    assert accepted.status_code == 202
    assert refused.status_code == 503 and int(refused.headers["Retry-After"]) > 0
    count = await pool.fetchval("SELECT count(*) FROM sessions WHERE input->>'content' = 'second'")
    assert count == 0


async def test_queue_depths_are_exported_as_metrics(world, pool):
    """The metrics port reports how many tasks wait in each queue, read where they wait: the
    broker itself, or the job_queue table."""
    from dispatcher import queue_watch
    from dispatcher.serving import serve_metrics
    from shared.broker import connect
    from shared.names import Names
    from tests.services import free_port
    from topology.spec import from_settings

    settings = await world(api_metrics_port=free_port())
    topology = from_settings(settings)
    metrics_server = serve_metrics(settings)
    assert metrics_server is not None
    try:
        async with (
            client_for(settings) as api,
            httpx.AsyncClient(base_url=f"http://127.0.0.1:{settings.api_metrics_port}") as ops,
        ):
            await api.post(f"{API}/analyze-async", json={"text": "queued"}, headers=ENTERPRISE)
            if settings.transport == "postgres":
                read = queue_watch.table_readings(pool, Names(settings.topology_prefix), topology)
                depths = {name: reading.ready for name, reading in (await read()).items()}
            else:
                connection = await connect(settings.amqp_url, "test")
                try:
                    depths = await queue_watch.read_depths(connection, topology)
                finally:
                    await connection.close()

            async def exported():
                text = (await ops.get("/metrics")).text
                name = f'verdict_queue_depth{{queue="{settings.topology_prefix}.claims.6"}} 1.0'
                return name in text

            await eventually(exported, timeout=15)
            on_api = await api.get("/metrics")
    finally:
        metrics_server.shutdown()
        metrics_server.server_close()
    assert depths[f"{settings.topology_prefix}.claims.6"] == 1
    assert on_api.status_code == 404  # not on the port clients reach


def sse_events(text: str) -> list[dict[str, str]]:
    """The events of an SSE body as a client sees them: `event`, `id`, `data` fields."""
    events = []
    for block in text.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "data" in fields:
            events.append(fields)
    return events


async def test_a_browser_follows_a_session_with_its_events_url_alone(settings):
    """The POST's events_url opens the stream without a key: retry and ids for EventSource,
    no-cache and no proxy buffering; a reconnect after the result is 204, one after a
    progress event resumes after it."""
    services = [
        Worker(settings, WorkerOptions(c, 2, 2), length_score).run for c in ANALYSIS_COMPONENTS
    ]
    async with (
        running(*services, Aggregator(settings, explain=explain).run),
        client_for(settings) as api,
    ):
        response = await api.post(
            f"{API}/analyze-async", json={"content": "a" * 500}, headers=ENTERPRISE
        )
        events_url = response.json()["events_url"]
        assert "?token=" in events_url
        stream = await api.get(events_url)
        after_result = await api.get(events_url, headers={"Last-Event-ID": "result"})
        resumed = await api.get(events_url, headers={"Last-Event-ID": "4"})
    assert stream.status_code == 200, stream.text
    assert stream.headers["content-type"].startswith("text/event-stream")
    assert "no-cache" in stream.headers["cache-control"]
    assert stream.headers["x-accel-buffering"] == "no"
    assert stream.text.startswith("retry: ")
    events = sse_events(stream.text)
    assert all("id" in e for e in events)
    assert events[-1]["event"] == "result" and events[-1]["id"] == "result"
    assert json.loads(events[-1]["data"])["verdict"]["label"]
    assert after_result.status_code == 204 and after_result.content == b""
    assert [(e["event"], e["id"]) for e in sse_events(resumed.text)] == [("result", "result")]


async def test_an_events_token_opens_its_own_sessions_events_and_nothing_else(settings):
    """One session's token on another session's events, on its own result or queue-status,
    or altered: 401 with a reason; the other session's own token is admitted."""
    async with client_for(settings) as api:
        first, second = [
            (await api.post(f"{API}/analyze-async", json={"text": "hi"}, headers=ENTERPRISE)).json()
            for _ in range(2)
        ]
        token = first["events_url"].split("?token=", 1)[1]
        elsewhere = await api.get(f"{API}/{second['session_id']}/events?token={token}")
        result = await api.get(f"{first['result_url']}?token={token}")
        status = await api.get(f"{first['poll_url']}?token={token}")
        altered = await api.get(f"{first['events_url']}x")
        # Past the result (204), so the in-process transport need not wait for a stream.
        own = await api.get(second["events_url"], headers={"Last-Event-ID": "result"})
    assert elsewhere.status_code == 401 and "another session" in elsewhere.json()["detail"]
    assert result.status_code == 401 and status.status_code == 401
    assert altered.status_code == 401
    assert own.status_code == 204
