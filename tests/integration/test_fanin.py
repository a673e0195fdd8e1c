"""The aggregator's fan-in on real Postgres: exactly one verdict, exact progress, deadlines."""

import asyncio
import uuid

import pytest

from aggregator.fanin import UnknownSession, finalize_overdue, record_result
from shared import sessions
from shared.messages import Result
from shared.sessions import NewSession

pytestmark = pytest.mark.integration

WEIGHTS = {"techniques": 0.3, "ai_tampered": 0.2, "claims": 0.3, "domain": 0.2}
COMPONENTS = ("techniques", "ai_tampered", "claims", "domain")


def explain(verdict, results):
    return {"en": f"{verdict.label} from {sorted(results)}", "ro": verdict.label}


async def new_session(pool, deadline_s: float = 60) -> str:
    sid = sessions.new_session_id()
    await sessions.create(
        pool, NewSession(sid, "tenant-a", 3, "text", {"content": "x"}, deadline_s)
    )
    return sid


def result(
    sid: str, component: str, score: float = 40, success: bool = True, data: dict | None = None
) -> Result:
    return Result(
        session_id=sid,
        component=component,
        success=success,
        score=score,
        data=data or {},
        timestamp=1,
        error=None if success else "boom",
    )


async def test_duplicated_results_give_one_verdict_and_exact_progress(pool):
    """Every result delivered three times, concurrently: one verdict, one row per component."""
    sid = await new_session(pool)
    copies = [result(sid, c, score=20 * i) for i, c in enumerate(COMPONENTS) for _ in range(3)]
    recorded = await asyncio.gather(*(record_result(pool, r, WEIGHTS, explain) for r in copies))
    assert sum(1 for r in recorded if r.verdict is not None) == 1
    assert sum(1 for r in recorded if r.duplicate) == 8
    view = await sessions.load(pool, sid)
    assert view.status == "completed"
    assert view.progress()["progress"] == 100
    assert (
        await pool.fetchval("SELECT count(*) FROM verdicts WHERE session_id = $1", uuid.UUID(sid))
        == 1
    )
    assert (
        await pool.fetchval(
            "SELECT count(*) FROM component_results WHERE session_id = $1", uuid.UUID(sid)
        )
        == 4
    )


async def test_progress_is_not_inflated_by_a_redelivery(pool):
    """Two deliveries of the same component leave progress at 25 %."""
    sid = await new_session(pool)
    await record_result(pool, result(sid, "claims"), WEIGHTS, explain)
    again = await record_result(pool, result(sid, "claims", score=99), WEIGHTS, explain)
    assert again.duplicate and again.progress["progress"] == 25
    view = await sessions.load(pool, sid)
    assert view.results["claims"]["score"] == 40  # the first result stands


async def test_failure_results_finalize_a_partial_session(pool):
    """One failed component: the session ends `partial` with the others' combined score, and
    the confidence loses the failed component's share of the weight."""
    sid = await new_session(pool)
    for c in COMPONENTS:
        await record_result(pool, result(sid, c, 60, success=c != "domain"), WEIGHTS, explain)
    view = await sessions.load(pool, sid)
    assert view.status == "partial"
    # Three components at 60 each: every one is a likely finding, together near certain.
    assert view.verdict["score"] == pytest.approx(96.28, abs=0.01)
    assert view.verdict["label"] == "critical_risk"
    assert view.verdict["confidence"] == pytest.approx(0.798, abs=0.001)
    assert view.progress()["failed_components"] == ["domain"]


async def test_the_verdict_reads_applicability_and_evidence_from_the_result_data(pool):
    """Claims and domain had nothing to judge (data.applicable false): the score stays that of
    the others and the confidence drops a little; a high score with no finding behind it
    (evidence_count 0) counts for less than one with findings."""
    idle, guessed = await new_session(pool), await new_session(pool)
    nothing = {"applicable": False, "evidence_count": 0}
    for c in COMPONENTS:
        data = nothing if c in ("claims", "domain") else {}
        await record_result(pool, result(idle, c, 0, data=data), WEIGHTS, explain)
        found = {"evidence_count": 0 if c == "techniques" else 3}
        await record_result(
            pool, result(guessed, c, 85 if c == "techniques" else 0, data=found), WEIGHTS, explain
        )
    calm = (await sessions.load(pool, idle)).verdict
    assert (calm["score"], calm["label"]) == (0, "low_risk")
    assert calm["confidence"] == pytest.approx(0.885)  # 0.915 with all four looking
    unbacked = (await sessions.load(pool, guessed)).verdict
    assert unbacked["label"] == "moderate_risk"  # with findings behind it: 96.8, critical


async def test_a_result_for_an_unknown_session_is_refused(pool):
    """Results of withdrawn sessions do not create rows."""
    with pytest.raises(UnknownSession):
        await record_result(pool, result(str(uuid.uuid4()), "claims"), WEIGHTS, explain)


async def test_overdue_sessions_are_finalized_with_missing_components_timed_out(pool):
    """Past its deadline a session ends from what it has; the rest is marked `timeout`."""
    sid = await new_session(pool, deadline_s=0.01)
    await record_result(pool, result(sid, "techniques", 80), WEIGHTS, explain)
    await asyncio.sleep(0.05)
    finished = await finalize_overdue(pool, WEIGHTS, explain)
    assert sid in [f.session_id for f in finished]
    view = await sessions.load(pool, sid)
    assert view.status == "partial"
    assert {c: r["status"] for c, r in view.results.items()} == {
        "techniques": "ok",
        "ai_tampered": "timeout",
        "claims": "timeout",
        "domain": "timeout",
    }
    late = await record_result(pool, result(sid, "claims", 10), WEIGHTS, explain)
    assert late.duplicate and late.verdict is None  # a late result changes nothing


async def test_a_session_is_visible_only_to_its_tenant(pool):
    """Another tenant sees nothing, not even that the session exists."""
    sid = await new_session(pool)
    assert await sessions.load(pool, sid, "tenant-a") is not None
    assert await sessions.load(pool, sid, "tenant-b") is None
    assert await sessions.load(pool, "not-a-uuid") is None


async def test_one_batch_settles_several_sessions_and_sets_aside_unknown_ones(pool):
    """A prefetched batch: a session completed within it, another half done, a duplicate inside
    the batch and a result of an unknown session, all in one call."""
    from aggregator.fanin import record_results

    done, half = await new_session(pool), await new_session(pool)
    stranger = str(uuid.uuid4())
    batch = [result(done, c, 50) for c in COMPONENTS] + [
        result(done, "claims", 99),  # a duplicate within the batch: the first one counts
        result(half, "domain", 10),
        result(half, "claims", 30),
        result(stranger, "domain"),
    ]
    applied = await record_results(pool, batch, WEIGHTS, explain)
    by_id = {r.session_id: r for r in applied.sessions}
    assert [r.session_id for r in applied.unknown] == [stranger]
    assert by_id[done].verdict is not None
    assert by_id[done].verdict.score == pytest.approx(87.09, abs=0.01)
    assert by_id[half].verdict is None and by_id[half].progress["progress"] == 50
    explained = (await sessions.load(pool, done)).verdict["explanation"]["en"]
    assert explained.startswith("critical_risk")


async def test_results_recorded_by_separate_batches_at_once_finalize_each_session_once(pool):
    """Each batch commits its results on its own, so the one that records a session's last
    result reads every result and finalizes it: 12 sessions whose 48 results arrive as
    concurrent single-result batches all end final, each with exactly one verdict."""
    sids = [await new_session(pool) for _ in range(12)]
    singles = [result(sid, c, 30) for c in COMPONENTS for sid in sids]
    recorded = await asyncio.gather(*(record_result(pool, r, WEIGHTS, explain) for r in singles))
    finalizers = [r.session_id for r in recorded if r.verdict is not None]
    assert sorted(finalizers) == sorted(sids)
    for sid in sids:
        assert (await sessions.load(pool, sid)).status == "completed"


async def test_a_session_recorded_but_not_finalized_is_finalized_by_a_redelivered_result(pool):
    """An aggregator that died between recording a session's last result and finalizing it
    left the result unacked: its redelivery finds the session complete and finalizes it."""
    from aggregator.fanin import _record

    sid = await new_session(pool)
    async with pool.acquire() as conn:  # the first statement only, as a crash would leave it
        await _record(conn, [uuid.UUID(sid)], [result(sid, c, 60) for c in COMPONENTS])
    assert (await sessions.load(pool, sid)).status == "processing"
    again = await record_result(pool, result(sid, "domain", 60), WEIGHTS, explain)
    assert again.duplicate and again.verdict is not None
    assert (await sessions.load(pool, sid)).status == "completed"


async def test_work_joined_to_the_fanin_commits_with_the_results_or_not_at_all(pool):
    """`within` (the table transport's completion of the result rows) runs in the fan-in's
    transaction, after the verdict: when it fails, neither the results nor the verdict are
    written; when it succeeds, it ran in the transaction that wrote them, given the sessions
    that exist."""
    from aggregator.fanin import record_results

    sid = await new_session(pool)
    stranger = str(uuid.uuid4())
    batch = [result(sid, c, 70) for c in COMPONENTS] + [result(stranger, "domain")]

    async def fails(conn, known):
        # Inside the transaction: the verdict is already visible to it.
        assert await conn.fetchval(
            "SELECT count(*) FROM verdicts WHERE session_id = $1", uuid.UUID(sid)
        )
        raise RuntimeError("the completion failed")

    with pytest.raises(RuntimeError):
        await record_results(pool, batch, WEIGHTS, explain, within=fails)
    view = await sessions.load(pool, sid)
    assert view.status == "processing" and view.results == {}
    assert not await pool.fetchval(
        "SELECT count(*) FROM verdicts WHERE session_id = $1", uuid.UUID(sid)
    )

    seen: list[tuple[set[str], bool]] = []

    async def joins(conn, known):
        # The verdict was written by this very transaction.
        ours = await conn.fetchval(
            "SELECT xmin::text = (pg_current_xact_id()::text::bigint % 4294967296)::text"
            " FROM verdicts WHERE session_id = $1",
            uuid.UUID(sid),
        )
        seen.append((known, ours))

    applied = await record_results(pool, batch, WEIGHTS, explain, within=joins)
    assert seen == [({sid}, True)]
    assert [r.session_id for r in applied.unknown] == [stranger]
    assert applied.sessions[0].verdict is not None
    assert (await sessions.load(pool, sid)).status == "completed"
