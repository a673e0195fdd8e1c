"""Human review on real Postgres, RabbitMQ and Redis: verdicts queued exactly once by the
fan-in, one reviewer at a time, decisions in the result document and the event stream."""

import asyncio
import contextlib
import json
import uuid

import httpx
import pytest

from aggregator.fanin import finalize_overdue, record_result, record_results
from aggregator.service import Aggregator
from dispatcher import review_backlog
from dispatcher.app import create_app
from shared import metrics, reviews, sessions
from shared.api_keys import hashed, key_hash, key_label
from shared.constants import ANALYSIS_COMPONENTS
from shared.messages import Result
from shared.review_policy import ReviewPolicy
from shared.sessions import NewSession
from tests.conftest import TEST_API_KEYS
from tests.integration.conftest import eventually, running
from workers.executor import Analysis
from workers.runtime import Worker, WorkerOptions

pytestmark = pytest.mark.integration

WEIGHTS = {"techniques": 0.3, "ai_tampered": 0.2, "claims": 0.3, "domain": 0.2}
# A partial session (one component failed) has confidence 0.798; a complete one more.
UNSURE = ReviewPolicy(confidence_below=0.8)
PIPELINE = "/api/v3/pipeline"
REVIEW = "/api/v3/review"
OWNER = {"X-API-Key": "test-enterprise"}  # tenant-a, plan 6, no admin scope
ALICE = {"X-API-Key": "test-reviewer-alice"}
BOB = {"X-API-Key": "test-reviewer-bob"}
# A second admin key of alice's tenant: another person, so another reviewer.
CAROL = {"X-API-Key": "test-reviewer-carol"}
KEYS = {
    **TEST_API_KEYS,
    "test-reviewer-alice": {"tenant": "alice", "plan": 1, "scopes": ["admin"]},
    "test-reviewer-bob": {"tenant": "bob", "plan": 1, "scopes": ["admin"]},
    "test-reviewer-carol": {"tenant": "alice", "plan": 1, "scopes": ["admin"]},
}


def reviewer_of(headers: dict[str, str], tenant: str) -> str:
    """The name the review record gives the key in `headers`."""
    return key_label(tenant, key_hash(headers["X-API-Key"]))


def explain(verdict, results):
    return {"en": verdict.label, "ro": verdict.label}


async def new_session(pool, tenant: str = "tenant-a", deadline_s: float = 60) -> str:
    sid = sessions.new_session_id()
    await sessions.create(pool, NewSession(sid, tenant, 3, "text", {"content": "x"}, deadline_s))
    return sid


def result(sid: str, component: str, score: float = 60, success: bool = True) -> Result:
    return Result(
        session_id=sid,
        component=component,
        success=success,
        score=score,
        timestamp=1,
        error=None if success else "boom",
    )


async def queued_rows(pool, sid: str) -> int:
    return await pool.fetchval(
        "SELECT count(*) FROM review_queue WHERE session_id = $1", uuid.UUID(sid)
    )


async def queued_unsure(pool, tenant: str = "tenant-a") -> str:
    """A session finalized partial (domain failed), so queued under UNSURE."""
    sid = await new_session(pool, tenant)
    batch = [result(sid, c, success=c != "domain") for c in ANALYSIS_COMPONENTS]
    await record_results(pool, batch, WEIGHTS, explain, UNSURE)
    return sid


async def test_a_low_confidence_verdict_is_queued_exactly_once(pool):
    """Every result delivered three times, concurrently, and once more after the verdict: one
    review row, pending, with the verdict's label, score and confidence and the reason; a
    sure verdict under the same policy, and any verdict with no policy, is not queued."""
    unsure, sure, unreviewed = [await new_session(pool) for _ in range(3)]
    copies = [
        result(unsure, c, success=c != "domain") for c in ANALYSIS_COMPONENTS for _ in range(3)
    ]
    await asyncio.gather(*(record_result(pool, r, WEIGHTS, explain, UNSURE) for r in copies))
    await record_result(pool, result(unsure, "claims"), WEIGHTS, explain, UNSURE)
    for c in ANALYSIS_COMPONENTS:
        await record_result(pool, result(sure, c), WEIGHTS, explain, UNSURE)
        await record_result(pool, result(unreviewed, c, success=c != "domain"), WEIGHTS, explain)
    assert await queued_rows(pool, unsure) == 1
    item = await reviews.review_of(pool, unsure)
    verdict = (await sessions.load(pool, unsure)).verdict
    assert (item.status, item.reasons, item.tenant, item.plan) == (
        "pending",
        ("low_confidence",),
        "tenant-a",
        3,
    )
    assert (item.label, item.confidence) == (verdict["label"], pytest.approx(0.798, abs=0.001))
    assert item.score == pytest.approx(verdict["score"], abs=0.01)
    assert await queued_rows(pool, sure) == 0
    assert await queued_rows(pool, unreviewed) == 0
    assert (await sessions.load(pool, sure)).review is None


async def test_a_session_ended_by_its_deadline_is_queued_too(pool):
    """The janitor's verdict (missing components timed out) goes through the same policy."""
    sid = await new_session(pool, deadline_s=0.01)
    await record_result(pool, result(sid, "techniques", 80), WEIGHTS, explain, UNSURE)
    await asyncio.sleep(0.05)
    await finalize_overdue(pool, WEIGHTS, explain, review=UNSURE)
    assert (await reviews.review_of(pool, sid)).reasons == ("low_confidence",)
    assert (await sessions.load(pool, sid)).review == {
        "status": "pending",
        "label": None,
        "note": None,
        "reviewed_at": None,
    }


async def test_one_reviewer_at_a_time_and_a_lapsed_claim_returns(pool):
    """Two reviewers claim at once: one wins, the other gets nothing and the item leaves the
    list; once the claim lapses the item is listed again and the other may take it, after
    which the first may no longer decide."""
    tenant = f"tenant-{uuid.uuid4().hex[:8]}"
    older, newer = await queued_unsure(pool, tenant), await queued_unsure(pool, tenant)
    assert [i.session_id for i in await reviews.pending(pool, tenant=tenant)] == [older, newer]
    won = await asyncio.gather(
        reviews.claim(pool, older, "alice"), reviews.claim(pool, older, "bob")
    )
    winner = next(item.claimed_by for item in won if item is not None)
    loser = "bob" if winner == "alice" else "alice"
    assert sum(item is None for item in won) == 1
    assert [i.session_id for i in await reviews.pending(pool, tenant=tenant)] == [newer]
    assert await reviews.claim(pool, older, loser) is None
    assert (await reviews.claim(pool, older, winner)).claimed_by == winner  # renewed
    await asyncio.sleep(0.05)
    lapsed = await reviews.pending(pool, tenant=tenant, claim_ttl_s=0.01)
    assert [i.session_id for i in lapsed] == [older, newer]
    assert (await reviews.claim(pool, older, loser, claim_ttl_s=0.01)).claimed_by == loser
    assert await reviews.decide(pool, older, winner, None, "too late") is None
    assert (await reviews.review_of(pool, older)).status == "claimed"


async def test_only_the_claimer_decides_a_confirmation_or_an_override(pool):
    """Unclaimed or claimed by another: no decision. The claimer confirms (no label, or the
    same label) or overrides (another label), with who and when; a decided item cannot be
    claimed or decided again."""
    confirmed, overridden = await queued_unsure(pool), await queued_unsure(pool)
    assert await reviews.decide(pool, confirmed, "alice", None, "x") is None  # not claimed
    await reviews.claim(pool, confirmed, "alice")
    assert await reviews.decide(pool, confirmed, "bob", "low_risk", "mine") is None
    same = (await reviews.review_of(pool, confirmed)).label
    done = await reviews.decide(pool, confirmed, "alice", same, "right")
    assert (done.status, done.reviewed_label, done.reviewed_by) == ("confirmed", same, "alice")
    await reviews.claim(pool, overridden, "bob")
    done = await reviews.decide(pool, overridden, "bob", "low_risk", "satire")
    assert (done.status, done.reviewed_label, done.note) == ("overridden", "low_risk", "satire")
    assert done.reviewed_at is not None
    assert await reviews.claim(pool, overridden, "bob") is None
    assert await reviews.decide(pool, overridden, "bob", "high_risk", "again") is None
    assert (await sessions.load(pool, overridden)).review["label"] == "low_risk"
    assert await reviews.review_of(pool, "not-a-uuid") is None


async def test_the_backlog_gauges_follow_the_oldest_waiting_item(pool):
    """An item queued an hour ago shows in verdict_review_oldest_age_seconds and
    verdict_review_pending; once decided the age drops below the hour."""
    sid = await queued_unsure(pool)
    await pool.execute(
        "UPDATE review_queue SET queued_at = now() - interval '1 hour' WHERE session_id = $1",
        uuid.UUID(sid),
    )
    watching = asyncio.create_task(review_backlog.watch(pool, every_s=0.05))
    try:
        await eventually(lambda: _at_least(metrics.REVIEW_OLDEST_AGE, 3600))
        assert metrics.REVIEW_PENDING._value.get() >= 1
        await reviews.claim(pool, sid, "alice")
        await reviews.decide(pool, sid, "alice", None, None)
        await eventually(lambda: _below(metrics.REVIEW_OLDEST_AGE, 3600))
    finally:
        watching.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watching


async def _at_least(gauge, value: float) -> bool:
    return gauge._value.get() >= value


async def _below(gauge, value: float) -> bool:
    return gauge._value.get() < value


async def high_score(task, ctx):
    return Analysis(60.0)  # four components at 60: critical_risk


@contextlib.asynccontextmanager
async def api_for(settings):
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        state = app.state.pipeline
        await eventually(lambda: _set(state.publisher))
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://api"
        ) as client:
            yield client


async def _set(value) -> bool:
    return value is not None


async def stream_events(api, url: str, into: list[tuple[str, dict]]) -> None:
    """Read a session's server-sent events until the stream ends (the in-process transport
    hands the body over once it is complete)."""
    async with api.stream("GET", url, headers=OWNER) as stream:
        name = ""
        async for line in stream.aiter_lines():
            if line.startswith("event: "):
                name = line.removeprefix("event: ")
            elif line.startswith("data: "):
                into.append((name, json.loads(line.removeprefix("data: "))))


async def test_reviewing_over_the_api(world):
    """A critical verdict on plan 6 is queued. Its event stream does not end at the result;
    a key without the admin scope is refused (403); two reviewers claim it at once and one
    wins (the other 409); the other cannot decide (409); the winner's override shows in the
    result document and as the stream's `review` event, after which the stream ends."""
    settings = await world(
        api_keys=hashed(KEYS), review_label_at_least="critical_risk", review_plans=[6]
    )
    workers = [
        Worker(settings, WorkerOptions(c, 2, 2), high_score).run for c in ANALYSIS_COMPONENTS
    ]
    async with (
        running(*workers, Aggregator(settings, explain=explain).run),
        api_for(settings) as api,
    ):
        posted = (
            await api.post(f"{PIPELINE}/analyze-async", json={"content": "x" * 50}, headers=OWNER)
        ).json()
        sid = posted["session_id"]
        events: list[tuple[str, dict]] = []
        streaming = asyncio.create_task(stream_events(api, posted["events_url"], events))
        first = (await eventually(lambda: final_result(api, posted["result_url"]), 60)).json()
        assert first["verdict"]["label"] == "critical_risk"
        assert first["review"] == {
            "status": "pending",
            "label": None,
            "note": None,
            "reviewed_at": None,
        }

        assert (await api.get(REVIEW, headers=OWNER)).status_code == 403
        assert (await api.post(f"{REVIEW}/{sid}/claim", headers=OWNER)).status_code == 403
        listed = (await api.get(REVIEW, params={"tenant": "tenant-a"}, headers=ALICE)).json()
        mine = [i for i in listed["items"] if i["session_id"] == sid]
        assert mine and mine[0]["reasons"] == ["label_at_least"] and mine[0]["plan"] == 6

        claims = await asyncio.gather(
            api.post(f"{REVIEW}/{sid}/claim", headers=ALICE),
            api.post(f"{REVIEW}/{sid}/claim", headers=BOB),
        )
        assert sorted(r.status_code for r in claims) == [200, 409]
        winner, loser = (ALICE, BOB) if claims[0].status_code == 200 else (BOB, ALICE)
        refused = await api.post(
            f"{REVIEW}/{sid}/decision", json={"label": "low_risk", "note": "no"}, headers=loser
        )
        assert refused.status_code == 409 and "claimed by" in refused.json()["detail"]
        bad = await api.post(f"{REVIEW}/{sid}/decision", json={"label": "fine"}, headers=winner)
        assert bad.status_code == 422
        assert not streaming.done()  # the stream waits for the decision
        decided = await api.post(
            f"{REVIEW}/{sid}/decision",
            json={"label": "moderate_risk", "note": "quoted, not endorsed"},
            headers=winner,
        )
        assert decided.status_code == 200 and decided.json()["status"] == "overridden"
        await asyncio.wait_for(streaming, 10)
        after = (await api.get(posted["result_url"], headers=OWNER)).json()
        unknown = await api.post(f"{REVIEW}/{uuid.uuid4()}/claim", headers=ALICE)
    review = after["review"]
    assert (review["status"], review["label"], review["note"]) == (
        "overridden",
        "moderate_risk",
        "quoted, not endorsed",
    )
    assert review["reviewed_at"] and after["verdict"]["label"] == "critical_risk"
    assert [name for name, _ in events][-2:] == ["result", "review"]
    assert events[-1][1] == review
    assert unknown.status_code == 404


async def final_result(api, url: str) -> httpx.Response | None:
    answer = await api.get(url, headers=OWNER)
    return answer if answer.status_code == 200 else None


async def test_a_verdict_made_in_the_api_while_the_broker_is_away_is_queued_too(world):
    """No RabbitMQ: the API analyses in-process, and its verdict goes through the same policy
    (every risk label queued here): the 200 answer already carries the pending review."""
    settings = await world(review_label_at_least="low_risk")
    offline = settings.model_copy(update={"amqp_url": "amqp://guest:guest@127.0.0.1:1/"})
    app = create_app(offline)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://api") as api,
    ):
        answer = await api.post(
            f"{PIPELINE}/analyze-async",
            json={"text": "Read this NOW!!! https://bit.ly/x"},
            headers=OWNER,
        )
    body = answer.json()
    assert answer.status_code == 200 and body["mode"] == "sync", answer.text
    assert body["review"]["status"] == "pending"


async def test_a_lapsed_claim_returns_to_the_list_over_the_api(world, pool):
    """REVIEW_CLAIM_TTL_S: once alice's claim lapses the item is listed again and bob takes it
    (before, 409 naming alice); GET one item shows who holds it."""
    settings = await world(api_keys=hashed(KEYS), review_claim_ttl_s=3)
    tenant = f"tenant-{uuid.uuid4().hex[:8]}"
    sid = await queued_unsure(pool, tenant)
    app = create_app(settings)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://api") as api,
    ):

        async def listed() -> list[str]:
            found = await api.get(REVIEW, params={"tenant": tenant}, headers=BOB)
            return [item["session_id"] for item in found.json()["items"]]

        assert (await api.post(f"{REVIEW}/{sid}/claim", headers=ALICE)).status_code == 200
        refused = await api.post(f"{REVIEW}/{sid}/claim", headers=BOB)
        assert refused.status_code == 409 and "alice" in refused.json()["detail"]
        assert await listed() == []
        assert await eventually(listed) == [sid]
        assert (await api.post(f"{REVIEW}/{sid}/claim", headers=BOB)).status_code == 200
        item = (await api.get(f"{REVIEW}/{sid}", headers=ALICE)).json()
        bad_limit = await api.get(REVIEW, params={"limit": 0}, headers=ALICE)
    assert (item["status"], item["claimed_by"]) == ("claimed", reviewer_of(BOB, "bob"))
    assert bad_limit.status_code == 422


async def test_two_admin_keys_of_one_tenant_are_two_reviewers(world, pool):
    """Alice's claim is refused to carol, whose key has the same tenant (409 naming alice's
    key, not the tenant), and so is a decision; alice decides, recorded as her key."""
    settings = await world(api_keys=hashed(KEYS))
    sid = await queued_unsure(pool, f"tenant-{uuid.uuid4().hex[:8]}")
    alice = reviewer_of(ALICE, "alice")
    app = create_app(settings)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://api") as api,
    ):
        claimed = await api.post(f"{REVIEW}/{sid}/claim", headers=ALICE)
        taken = await api.post(f"{REVIEW}/{sid}/claim", headers=CAROL)
        refused = await api.post(f"{REVIEW}/{sid}/decision", json={"note": "mine"}, headers=CAROL)
        decided = await api.post(f"{REVIEW}/{sid}/decision", json={"note": "ok"}, headers=ALICE)
    assert claimed.status_code == 200 and claimed.json()["claimed_by"] == alice
    assert taken.status_code == 409 and f"claimed by {alice}" in taken.json()["detail"]
    assert refused.status_code == 409
    assert decided.status_code == 200 and decided.json()["reviewed_by"] == alice
    assert alice.startswith("alice/") and alice != reviewer_of(CAROL, "alice")
