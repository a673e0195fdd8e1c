"""Tasks through real workers and the aggregator: results, poison, retries, lock contention."""

import asyncio
import itertools
import json
import uuid
from dataclasses import dataclass

import aio_pika
import asyncpg
import pytest

from aggregator.service import Aggregator
from dispatcher.submit import first_tasks
from shared import metrics, sessions
from shared.broker import connect
from shared.constants import ANALYSIS_COMPONENTS, ATTEMPT_HEADER, REASON_HEADER
from shared.dead_letter_queue import reason_of
from shared.dead_letter_table import letter_headers
from shared.errors import RetryableAnalysisError
from shared.locks import lock_key
from shared.names import Names
from shared.sessions import NewSession
from tests.integration.conftest import (
    eventually,
    on_both_transports,
    only_on_rabbitmq,
    publisher_for,
    queue_depths,
    running,
    signed,
)
from workers.executor import Analysis
from workers.runtime import Worker, WorkerOptions

# Each test on both transports, but where one says why it cannot (only_on_rabbitmq).
pytestmark = [pytest.mark.integration, on_both_transports]


def explain(verdict, results):
    return {"en": verdict.label, "ro": verdict.label}


async def scored(task, ctx):
    return Analysis(
        min(100.0, len(task.input.content or "")), {"length": len(task.input.content or "")}
    )


async def broken_claims(task, ctx):
    """An executor whose claims analysis keeps failing for a reason that may pass."""
    if task.component == "claims":
        raise RetryableAnalysisError("still down")
    return Analysis(30)


UNKNOWN_PLAN = {"component": "claims", "planType": 9, "priority": 1, "input": {}, "timestamp": 1}


def workers_for(settings, executor=scored, components=ANALYSIS_COMPONENTS):
    return [
        Worker(settings, WorkerOptions(c, concurrency=2, prefetch=2), executor).run
        for c in components
    ]


async def submit(
    pool, publisher, plan=3, content="some text to analyse", input_type="text", media_path=None
):
    sid = sessions.new_session_id()
    new = NewSession(
        sid,
        "tenant-a",
        plan,
        input_type,
        {"content": content, "inputType": input_type, "mediaPath": media_path},
        60,
    )
    await sessions.create(pool, new)
    for task in first_tasks(new, None):
        await publisher.task(task)
    return sid


async def final_view(pool, sid, timeout=20):
    async def check():
        view = await sessions.load(pool, sid)
        return view if view and view.final else None

    return await eventually(check, timeout)


@dataclass(frozen=True)
class Letter:
    """A dead letter as a test reads it, on either transport."""

    body: bytes
    headers: dict


async def dlq_messages(settings):
    if settings.transport == "postgres":
        return await dead_rows(settings)
    connection = await connect(settings.amqp_url, "test-dlq")
    found = []
    try:
        channel = await connection.channel()
        queue = await channel.get_queue(f"{settings.topology_prefix}_dlq")
        while (message := await queue.get(fail=False, no_ack=True)) is not None:
            found.append(message)
    finally:
        await connection.close()
    return found


async def dead_rows(settings):
    """The error rows of the world, as letters (headers as `verdict dlq` reads them)."""
    conn = await asyncpg.connect(settings.database_url)
    try:
        rows = await conn.fetch(
            "SELECT queue, body, headers, reason, finished_at FROM job_queue"
            " WHERE status = 'error' AND queue LIKE $1 || '%' ORDER BY id",
            settings.topology_prefix,
        )
    finally:
        await conn.close()
    dlq = Names(settings.topology_prefix).dlq
    return [
        Letter(
            r["body"], letter_headers({**dict(r), "headers": json.loads(r["headers"]), "dlq": dlq})
        )
        for r in rows
    ]


async def test_sessions_on_three_plans_complete_through_real_workers(settings, pool, publisher):
    """Tasks on plans 1, 4 and 6 are analysed, aggregated and leave every queue empty."""
    async with running(*workers_for(settings), Aggregator(settings, explain=explain).run):
        sids = [await submit(pool, publisher, plan=p, content="x" * (10 * p)) for p in (1, 4, 6)]
        views = [await final_view(pool, sid) for sid in sids]
    # Every component scores 10 × plan: 10 is under the noise floor, four at 40 add up.
    verdicts = {1: (0.0, "low_risk"), 4: (54.22, "high_risk"), 6: (98.37, "critical_risk")}
    for plan, view in zip((1, 4, 6), views, strict=True):
        assert view.status == "completed"
        assert view.results["techniques"]["score"] == 10 * plan
        score, label = verdicts[plan]
        assert view.verdict["score"] == pytest.approx(score, abs=0.01)
        assert view.verdict["label"] == label
    assert set((await queue_depths(settings)).values()) == {0}


async def test_poison_messages_are_dead_lettered_and_the_worker_keeps_going(
    settings, pool, publisher
):
    """Garbage, oversized, wrong schema, unknown plan, misrouted: to the DLQ with a reason."""
    prefix = settings.topology_prefix
    poison = [
        (f"{prefix}.claims.2", b"\x00not json"),
        (f"{prefix}.claims.2", json.dumps({"sessionId": "x", "component": "claims"}).encode()),
        (f"{prefix}.claims.2", b'{"sessionId":"x","pad":"' + b"x" * 1_100_000 + b'"}'),
        (
            f"{prefix}.claims.2",
            json.dumps({**UNKNOWN_PLAN, "sessionId": str(uuid.uuid4())}).encode(),
        ),
        (
            f"{prefix}.claims.5",
            json.dumps(
                {
                    "sessionId": str(uuid.uuid4()),
                    "component": "domain",
                    "planType": 5,
                    "priority": 8,
                    "input": {},
                    "timestamp": 1,
                }
            ).encode(),
        ),
    ]
    for key, body in poison:
        await publisher.send(prefix, key, aio_pika.Message(body))
    async with running(*workers_for(settings), Aggregator(settings, explain=explain).run):
        sid = await submit(pool, publisher, plan=2)
        assert (await final_view(pool, sid)).status == "completed"
        dead: list = []

        async def all_dead():
            dead.extend(await dlq_messages(settings))
            return len(dead) >= len(poison)

        await eventually(all_dead)
    reasons = sorted(reason_of(dict(m.headers)) for m in dead)
    assert len(dead) == len(poison)
    assert any("invalid task" in r for r in reasons)
    assert f"rejected in {prefix}.claims.2" in reasons  # over 1 MiB: rejected unread
    assert any("planType" in r for r in reasons)
    assert any("arrived on" in r for r in reasons)
    assert sorted(m.body for m in dead) == sorted(body for _, body in poison)


async def test_retryable_failures_back_off_and_then_succeed(world, pool):
    """Two failures, then success: attempts 1..3, each retry held back by its tier's backoff
    (base × 2^(n-1)), one completed session."""
    settings = await world(retry_base_ms=300, max_attempts=3)
    attempts: list[int] = []
    started_at: list[float] = []

    async def flaky(task, ctx):
        if task.component == "claims":
            attempts.append(task.retry_count)
            started_at.append(asyncio.get_running_loop().time())
        if task.component == "claims" and task.retry_count < 2:
            raise RetryableAnalysisError("upstream 503")
        return Analysis(10)

    async with (
        publisher_for(settings) as publisher,
        running(*workers_for(settings, flaky), Aggregator(settings, explain=explain).run),
    ):
        sid = await submit(pool, publisher)
        view = await final_view(pool, sid)
    assert view.status == "completed"
    assert view.results["claims"]["attempt"] == 3
    assert attempts == [0, 1, 2]
    gaps = [later - earlier for earlier, later in itertools.pairwise(started_at)]
    # Each retry waited at least its tier's delay (300 ms, then 600 ms), a little clock slack.
    assert gaps[0] >= 0.3 - 0.03 and gaps[1] >= 0.6 - 0.03, gaps
    assert gaps[1] > gaps[0]  # the second tier is the longer one


async def test_exhausted_retries_give_a_failure_result_and_a_dead_letter(world, pool):
    """Always failing: after max attempts the session ends partial and the task sits in the DLQ."""
    settings = await world(retry_base_ms=50, max_attempts=2)
    async with (
        publisher_for(settings) as publisher,
        running(*workers_for(settings, broken_claims), Aggregator(settings, explain=explain).run),
    ):
        sid = await submit(pool, publisher)
        view = await final_view(pool, sid)
        dead = await eventually(lambda: dlq_messages(settings))
    assert view.status == "partial"
    assert "2 attempts" in view.results["claims"]["error"]
    assert len(dead) == 1
    assert dead[0].headers[ATTEMPT_HEADER] == 2
    assert "still down" in dead[0].headers[REASON_HEADER]


async def test_media_without_a_service_fails_clearly_and_the_session_ends(world, pool, tmp_path):
    """Video, no transcription service, the real media executor: each component fails at
    once with the reason in user terms (no setting named), nothing is dead-lettered, and the
    session ends `failed` (on the table transport its media task, answered with the four
    failures, completed with their recording)."""
    settings = await world(media_root=str(tmp_path))
    (tmp_path / "tenant-a").mkdir()
    (tmp_path / "tenant-a" / "clip.mp4").write_bytes(b"not really a video")
    workers = [Worker(settings, WorkerOptions("media_preprocess", 1, 1)).run]  # real executor
    async with (
        publisher_for(settings) as publisher,
        running(*workers, Aggregator(settings, explain=explain).run),
    ):
        sid = await submit(
            pool, publisher, input_type="video", content=None, media_path="tenant-a/clip.mp4"
        )
        view = await final_view(pool, sid)
    assert view.status == "failed"
    told = "this kind of media cannot be analysed: a service it needs is unavailable"
    assert all(r["error"] == told for r in view.results.values())
    assert await dlq_messages(settings) == []
    if settings.transport != "rabbitmq":  # answered by four failures: completed by the first
        media_task = await pool.fetchval(
            "SELECT status FROM job_queue WHERE message_id = $1", f"{sid}:media_preprocess"
        )
        assert media_task == "completed"


async def test_an_image_is_read_and_its_follow_ups_are_trusted_by_every_worker(
    world, pool, tmp_path
):
    """Image input through the real media worker (tesseract): the four analysis tasks it
    dispatches are signed with the media key and carry their origin; the analysis workers
    accept them and the session completes on the text read from the image."""
    from PIL import Image, ImageDraw, ImageFont

    settings = await world(media_root=str(tmp_path))
    (tmp_path / "tenant-a").mkdir()
    image = Image.new("RGB", (900, 120), "white")
    ImageDraw.Draw(image).text(
        (20, 30), "SHARE BEFORE DELETED", fill="black", font=ImageFont.load_default(size=48)
    )
    image.save(tmp_path / "tenant-a" / "words.png")
    read: list[str] = []

    async def record(task, ctx):
        read.append(task.input.content or "")
        return Analysis(10)

    workers = [
        Worker(settings, WorkerOptions("media_preprocess", 1, 1)).run,  # the real executor
        *workers_for(settings, record),
    ]
    async with (
        publisher_for(settings) as publisher,
        running(*workers, Aggregator(settings, explain=explain).run),
    ):
        sid = await submit(
            pool, publisher, input_type="image", content=None, media_path="tenant-a/words.png"
        )
        view = await final_view(pool, sid, timeout=60)
    assert view.status == "completed" and len(read) == 4
    assert all("DELETED" in text.upper() for text in read)
    assert await dlq_messages(settings) == []


async def test_a_task_whose_lock_is_held_waits_without_spending_an_attempt(
    settings, pool, publisher, redis
):
    """Lock held elsewhere: the task runs only after the lock is gone, having passed through the
    short tier (each pass re-queued, not retried), and still as attempt 1."""
    only_on_rabbitmq(settings, "the postgres transport takes no Redis lock: the lease is one")
    sid = sessions.new_session_id()
    key = lock_key(settings.key_prefix, sid, "domain")
    held_ms = 1500
    await redis.set(key, "someone-else", px=held_ms)
    locked_at = asyncio.get_running_loop().time()
    seen: list[int] = []
    domain_ran_after: list[float] = []
    requeues = metrics.RETRIES.labels("domain", "requeue")
    requeued_before = requeues._value.get()

    async def record(task, ctx):
        seen.append(task.retry_count)
        if task.component == "domain":
            domain_ran_after.append(asyncio.get_running_loop().time() - locked_at)
        return Analysis(5)

    new = NewSession(sid, "tenant-a", 6, "text", {"content": "hello"}, 60)
    await sessions.create(pool, new)
    async with running(*workers_for(settings, record), Aggregator(settings, explain=explain).run):
        for task in first_tasks(new, None):
            await publisher.task(task)
        view = await final_view(pool, sid)
    assert view.status == "completed"
    assert view.results["domain"]["attempt"] == 1
    assert seen.count(0) == 4  # each component executed once, none as a retry
    # It waited for the lock: not before the holder's TTL ran out (a little clock slack)...
    assert domain_ran_after and domain_ran_after[0] >= held_ms / 1000 - 0.05
    # ...by passes through the lock tier of `lock_retry_ms`, not by a counted retry.
    passes = requeues._value.get() - requeued_before
    assert passes >= 2, passes
    assert passes <= held_ms / settings.lock_retry_ms + 2


async def test_one_task_runs_once_even_when_delivered_twice_at_once(settings, pool, publisher):
    """Two copies of the same task on two workers: the lock lets one run, the other skips."""
    only_on_rabbitmq(
        settings,
        "on the postgres transport two rows of one task both run (no Redis lock); the fan-in "
        "records one result: test_table_transport covers what a row's lease guarantees",
    )
    runs: list[str] = []

    async def slow(task, ctx):
        runs.append(task.component)
        await asyncio.sleep(0.5)
        return Analysis(1)

    sid = sessions.new_session_id()
    new = NewSession(sid, "tenant-a", 3, "text", {"content": "dup"}, 60)
    await sessions.create(pool, new)
    workers = [
        Worker(settings, WorkerOptions(c, 2, 2), slow).run
        for c in ANALYSIS_COMPONENTS
        for _ in range(2)
    ]
    skipped = [metrics.JOBS.labels(c, "skipped") for c in ANALYSIS_COMPONENTS]
    skipped_before = sum(counter._value.get() for counter in skipped)

    async def second_copies_skipped() -> bool:
        return sum(counter._value.get() for counter in skipped) - skipped_before >= 4

    async with running(*workers, Aggregator(settings, explain=explain).run):
        for task in first_tasks(new, None):
            await publisher.task(task)
            await publisher.task(task)
        await final_view(pool, sid)
        # Each second copy waits in the lock tier, comes back, finds the result recorded.
        await eventually(second_copies_skipped, timeout=20)
    assert sorted(runs) == sorted(ANALYSIS_COMPONENTS)


async def test_audio_goes_through_media_preprocess_to_a_verdict(world, pool, tmp_path):
    """Real executors: audio is transcribed by the service, then the four tasks reach a verdict."""
    from tests.integration.test_analysis_services import FakeService, Reply
    from workers.runtime import Worker as RealWorker

    fake = FakeService()
    fake.thread.start()
    try:
        (tmp_path / "clip.mp3").write_bytes(b"ID3 fake audio")
        fake.on(
            "/v1/audio/transcriptions",
            Reply(200, {"text": "URGENT!!! Share now: they HIDE the truth about vaccines!"}),
        )
        settings = await world(transcription_url=fake.url, media_root=str(tmp_path))

        components = ("media_preprocess", *ANALYSIS_COMPONENTS)
        workers = [RealWorker(settings, WorkerOptions(c, 2, 2)).run for c in components]
        async with publisher_for(settings) as publisher:
            async with running(*workers, Aggregator(settings).run):
                sid = await submit(
                    pool, publisher, input_type="audio", content=None, media_path="clip.mp3"
                )
                view = await final_view(pool, sid, timeout=30)
    finally:
        fake.server.shutdown()
        fake.server.server_close()
    assert view.status == "completed"
    assert fake.hits("/v1/audio/transcriptions") == 1
    assert view.results["techniques"]["score"] > 0
    assert view.verdict["explanation"]["en"] and view.verdict["explanation"]["ro"]


async def test_a_result_postgres_refuses_is_dead_lettered_and_the_rest_applied(
    settings, pool, publisher
):
    """A result whose evidence Postgres cannot store (a NUL character in JSON) goes to the DLQ;
    the other results of the same batch are applied and the aggregator keeps going."""
    from shared.messages import Result, now_ms

    sid = await submit(pool, publisher, plan=3)  # no workers run: results come from the test
    good = [
        Result(session_id=sid, component=c, success=True, score=10, timestamp=now_ms())
        for c in ("techniques", "ai_tampered", "claims")
    ]
    bad = Result(
        session_id=sid,
        component="domain",
        success=True,
        score=10,
        data={"text": "nul \u0000 here"},
        timestamp=now_ms(),
    )
    for result in [*good, bad]:
        await publisher.result(signed(settings, result))
    async with running(Aggregator(settings, explain=explain).run):
        dead = await eventually(lambda: dlq_messages(settings))
        view = await sessions.load(pool, sid)
    assert "refused by postgres" in dead[0].headers[REASON_HEADER]
    assert sorted(view.results) == ["ai_tampered", "claims", "techniques"]
