"""The worker's per-task steps, each around a fake rest-of-chain, and the whole chain in the
order the worker builds it (fakes for the broker, Postgres and the lock)."""

from __future__ import annotations

import asyncio
import gc
from typing import Any

import pytest
import structlog
from prometheus_client import REGISTRY

from shared.constants import (
    ATTEMPT_HEADER,
    MEDIA_PREPROCESS,
    PARKED_HEADER,
    PARKED_KIND_HEADER,
)
from shared.deadletters import parking_headers
from shared.errors import (
    AnalysisTimeout,
    MediaUnavailable,
    Reject,
    Retry,
    RetryableAnalysisError,
)
from shared.messages import MAX_MESSAGE_BYTES, Task, TaskInput, decode_task, failure_results
from shared.settings import Settings
from shared.signing import TaskKeys, public_task_key, result_is_authentic
from tests.unit.fakes import (
    NAMES,
    RESULT_KEY,
    TASK_KEYS,
    FakeDelivery,
    FakeLock,
    FakePool,
    FakePublisher,
    delivery_of,
)
from workers.executor import Analysis, ExecutorContext
from workers.handling import Authenticity, Execute, TaskHandler, steps_for
from workers.middleware.chain import (
    Ack,
    DeadLetter,
    Job,
    Next,
    NextAttempt,
    Outgoing,
    attempt_of,
)
from workers.middleware.dead_letters import DeadLetterOnReject
from workers.middleware.dedupe import SkipFinished
from workers.middleware.locking import HoldLock, Watchdog
from workers.middleware.log_context import bind_log_context
from workers.middleware.oversize import RejectOversize
from workers.middleware.parsing import ParseTask
from workers.middleware.reporting import Report, ReportSuccess
from workers.middleware.requeue import RequeueOnRetry
from workers.middleware.retries import DecideOnFailure

SID = "5f0c6e1e-8f1a-4c3e-9a57-0d2b6a1c9e11"
KEYS = Authenticity(TaskKeys(public_task_key(TASK_KEYS[1])), RESULT_KEY)


def a_task(component: str = "claims", **changes: Any) -> Task:
    task = Task(
        session_id=SID,
        component=component,
        plan_type=6,
        priority=10,
        input=TaskInput(content="text"),
        timestamp=1,
    )
    return task.model_copy(update=changes)


def parsed_job(task: Task | None = None, attempt: int = 1, **delivery: Any) -> Job:
    task = task or a_task()
    job = Job(delivery_of(task, attempt, **delivery), attempt)
    job.parsed = task
    return job


class Rest:
    """The rest of the chain: records that it ran, then does `then(job)`."""

    def __init__(self, then: Any = None) -> None:
        self.ran = 0
        self._then = then

    async def __call__(self, job: Job) -> None:
        self.ran += 1
        if self._then is not None:
            result = self._then(job)
            if asyncio.iscoroutine(result):
                await result


def raising(error: BaseException) -> Rest:
    def fail(job: Job) -> None:
        raise error

    return Rest(fail)


def metric(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


# --- before the task is read ---


async def test_an_oversize_delivery_is_rejected_unread_and_the_rest_never_runs():
    """A body over the message bound is rejected without requeue (the broker dead-letters
    it); a normal one goes on."""
    step, rest = RejectOversize("claims", 16_384), Rest()
    big = FakeDelivery(b"x" * (MAX_MESSAGE_BYTES + 1))
    await step(Job(big, 1), rest)
    assert big.events == [("reject", False)] and rest.ran == 0
    await step(Job(FakeDelivery(b"{}"), 1), rest)
    assert rest.ran == 1


async def test_a_retry_raised_inside_requeues_the_delivery_unchanged_through_its_tier():
    """Retry(delay) anywhere inside: a copy with the same body and attempt header goes to
    the tier of the delay, back to the queue it came from; then the original is acked."""
    events: list[Any] = []
    publisher = FakePublisher(events)
    job = parsed_job(attempt=2)
    job.delivery.events = events
    await RequeueOnRetry(publisher, "claims")(job, raising(Retry(250, "lock held")))  # type: ignore[arg-type]
    (kind, message, routing_key, delay), ack = events
    assert (kind, routing_key, delay, ack) == ("retry", job.delivery.routing_key, 250, "ack")
    assert message.body == job.delivery.body and message.headers[ATTEMPT_HEADER] == 2


async def test_a_reject_raised_inside_dead_letters_the_delivery_as_poison():
    """Reject(reason): the letter carries the reason and the queue it came from, the
    original is acked, and it counts as poison."""
    events: list[Any] = []
    job = parsed_job()
    job.delivery.events = events
    before = metric("verdict_dead_letters_total", source="claims", reason="poison")
    step = DeadLetterOnReject(FakePublisher(events), "claims", 60_000, RESULT_KEY)  # type: ignore[arg-type]
    await step(job, raising(Reject("bad body")))
    assert events == [("dead_letter", "bad body", job.delivery.routing_key), "ack"]
    assert metric("verdict_dead_letters_total", source="claims", reason="poison") == before + 1


async def test_poison_the_full_dlq_refuses_is_parked_in_the_longest_tier_not_lost():
    """A full DLQ: the delivery waits in the parking tier and returns to its own queue."""
    events: list[Any] = []
    job = parsed_job()
    job.delivery.events = events
    step = DeadLetterOnReject(FakePublisher(events, dlq_full=True), "claims", 60_000, RESULT_KEY)  # type: ignore[arg-type]
    await step(job, raising(Reject("bad body")))
    assert [e[0] if isinstance(e, tuple) else e for e in events] == ["retry", "ack"]
    assert events[0][2:] == (job.delivery.routing_key, 60_000)


@pytest.mark.parametrize(
    ("body", "routing_key"),
    [
        (b"not json", None),
        (None, NAMES.task_queue("claims", 1)),  # a plan-6 task on the plan-1 queue
        (None, NAMES.task_queue("domain", 6)),  # another component's queue
    ],
)
async def test_a_body_that_is_no_task_of_this_queue_is_rejected_as_poison(body, routing_key):
    """Not a task, or a task that arrived on a queue it does not belong to: Reject."""
    delivery = delivery_of(a_task())
    delivery.body = body or delivery.body
    delivery.routing_key = routing_key or delivery.routing_key
    rest = Rest()
    with pytest.raises(Reject):
        await ParseTask(NAMES, "claims")(Job(delivery, 1), rest)
    assert rest.ran == 0


async def test_a_task_on_its_own_queue_is_parsed_for_the_steps_after():
    """The rest of the chain sees the task the body carries."""
    seen: list[Task] = []
    await ParseTask(NAMES, "claims")(
        Job(delivery_of(a_task(), signed=False), 1), Rest(lambda j: seen.append(j.task))
    )
    assert seen == [a_task()]


async def test_log_lines_of_a_task_name_its_session_component_and_attempt():
    """Inside the step every log line is bound to the task; after it nothing is."""
    bound: list[dict[str, Any]] = []
    job = parsed_job(attempt=3)
    await bind_log_context(
        job, Rest(lambda j: bound.append(structlog.contextvars.get_contextvars()))
    )
    assert bound == [{"session_id": SID, "component": "claims", "attempt": 3}]
    assert structlog.contextvars.get_contextvars() == {}


def test_the_attempt_comes_from_its_header_and_bad_headers_count_as_the_first():
    """The attempt header, or 1 when it is missing or not a number."""
    assert attempt_of(FakeDelivery(b"", headers={ATTEMPT_HEADER: 3})) == 3  # type: ignore[arg-type]
    for headers in ({}, {ATTEMPT_HEADER: "x"}, {ATTEMPT_HEADER: -2}):
        assert attempt_of(FakeDelivery(b"", headers=headers)) == 1  # type: ignore[arg-type]


# --- dedupe and the lock ---


async def test_a_first_delivery_runs_without_asking_postgres():
    """Attempt 1, not redelivered: no round trip before running."""
    pool, rest = FakePool(), Rest()
    await SkipFinished(pool, 100)(parsed_job(), rest)  # type: ignore[arg-type]
    assert (pool.queries, rest.ran) == (0, 1)


@pytest.mark.parametrize(
    "row",
    [None, {"status": "completed", "recorded": False}, {"status": "processing", "recorded": True}],
)
async def test_a_redelivered_task_no_longer_needed_is_acked_without_running(row):
    """Session gone, final, or this result recorded: acked and counted as skipped."""
    job, rest = parsed_job(redelivered=True), Rest()
    await SkipFinished(FakePool(row), 100)(job, rest)  # type: ignore[arg-type]
    assert (rest.ran, job.delivery.events, job.outcome) == (0, ["ack"], "skipped")


async def test_a_redelivered_task_still_needed_runs_and_postgres_away_is_a_retry():
    """Still processing and unrecorded: it runs; Postgres away: Retry in the lock tier."""
    rest = Rest()
    await SkipFinished(FakePool({"status": "processing", "recorded": False}), 100)(  # type: ignore[arg-type]
        parsed_job(attempt=2), rest
    )
    assert rest.ran == 1
    with pytest.raises(Retry) as retry:
        await SkipFinished(FakePool(error=OSError("refused")), 100)(parsed_job(attempt=2), rest)  # type: ignore[arg-type]
    assert retry.value.delay_ms == 100


async def test_a_lock_held_elsewhere_is_a_retry_and_the_task_does_not_run():
    """Another worker holds the lock: Retry in the lock tier, counted as contention."""
    events: list[Any] = []
    rest = Rest()
    before = metric("verdict_lock_contention_total", component="claims")
    with pytest.raises(Retry):
        await HoldLock(lambda t: FakeLock(events, free=False), 100)(parsed_job(), rest)
    assert rest.ran == 0 and events == ["lock refused"]
    assert metric("verdict_lock_contention_total", component="claims") == before + 1


async def test_the_lock_is_finished_after_a_success_and_released_after_anything_else():
    """Success keeps the key as done (duplicates wait); a failure or an error frees it."""

    def succeed(job: Job) -> None:
        job.outcome = "ok"

    for then, expected in ((succeed, ["lock finished"]), (None, [])):
        events: list[Any] = []
        await HoldLock(lambda t, e=events: FakeLock(e), 100)(parsed_job(), Rest(then))
        assert events == ["lock acquired", *expected, "lock released"]
    events = []
    with pytest.raises(RuntimeError):
        await HoldLock(lambda t: FakeLock(events), 100)(parsed_job(), raising(RuntimeError("x")))
    assert events == ["lock acquired", "lock released"]


async def test_a_lock_lost_while_running_stops_the_run_and_requeues():
    """The watchdog's renewal failed: the run is cancelled at once, nothing reported, Retry."""
    events: list[Any] = []
    lock = FakeLock(events)
    job = parsed_job()
    job.lock = lock
    cancelled = asyncio.Event()

    async def run_forever(job: Job) -> None:
        lock.lost.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    with pytest.raises(Retry, match="lock lost while running"):
        await asyncio.wait_for(Watchdog(100)(job, run_forever), 5)
    await asyncio.wait_for(cancelled.wait(), 5)


async def test_a_run_stopped_for_a_lost_lock_has_finished_its_clean_up_before_the_requeue():
    """The re-queue waits for the cancelled run: its clean-up is over when Retry is raised,
    and an error the clean-up ends with is retrieved, never reported to the event loop."""
    events: list[Any] = []
    lock = FakeLock(events)
    job = parsed_job()
    job.lock = lock

    async def slow_to_stop(job: Job) -> None:
        lock.lost.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            await asyncio.sleep(0.01)
            events.append("cleaned up")
            raise RuntimeError("clean-up failed") from None

    loop = asyncio.get_running_loop()
    reported: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda loop, context: reported.append(context))
    try:
        with pytest.raises(Retry, match="lock lost while running"):
            await asyncio.wait_for(Watchdog(100)(job, slow_to_stop), 5)
        assert events == ["cleaned up"]
        await asyncio.sleep(0.05)  # without the wait, the run ends (unretrieved) meanwhile
        gc.collect()
    finally:
        loop.set_exception_handler(None)
    assert reported == []


async def test_a_watchdog_cancelled_at_shutdown_stops_its_run_and_waits_for_it():
    """The step cancelled (a task still running past the grace period): the run is
    cancelled with it and its clean-up is over when the cancel is through, nothing runs on."""
    events: list[Any] = []
    job = parsed_job()
    job.lock = FakeLock(events)
    started = asyncio.Event()

    async def run_forever(job: Job) -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            await asyncio.sleep(0.01)
            events.append("cleaned up")

    watched = asyncio.ensure_future(Watchdog(100)(job, run_forever))
    await asyncio.wait_for(started.wait(), 5)
    watched.cancel()
    with pytest.raises(asyncio.CancelledError):
        await watched
    assert events == ["cleaned up"]


async def test_a_success_on_a_lock_that_expired_meanwhile_is_not_reported():
    """A run longer than a third of the TTL checks the lock before reporting: gone, Retry."""
    job = parsed_job()
    job.lock = FakeLock([], ttl_ms=3, held=False)

    async def slow_success(job: Job) -> None:
        await asyncio.sleep(0.01)
        job.analysis = Analysis(5)

    with pytest.raises(Retry, match="before reporting"):
        await Watchdog(100)(job, slow_success)
    job.lock = FakeLock([], ttl_ms=30_000, held=False)  # young lock: not even asked
    await Watchdog(100)(job, slow_success)


# --- after the run ---


async def test_a_retryable_failure_becomes_the_next_attempt_after_its_backoff():
    """Attempt 1 of 3 fails transiently: the task goes to the tier of the backoff as
    attempt 2 (retry count 1), with no result."""
    job = parsed_job()
    step = DecideOnFailure(max_attempts=3, retry_base_ms=100, worker_id="w")
    await step(job, raising(RetryableAnalysisError("503")))
    settlement = job.settlement
    assert isinstance(settlement, NextAttempt) and settlement.delay_ms == 100
    assert settlement.message.headers[ATTEMPT_HEADER] == 2
    assert decode_task(settlement.message.body).retry_count == 1
    assert job.results == [] and job.outcome is None


async def test_a_final_failure_reports_a_failure_result_and_dead_letters_only_if_replayable():
    """Out of attempts: failure result and dead letter; not retryable: failure result, ack."""
    out_of_attempts = parsed_job(attempt=3)
    step = DecideOnFailure(max_attempts=3, retry_base_ms=100, worker_id="w")
    await step(out_of_attempts, raising(RetryableAnalysisError("503")))
    assert isinstance(out_of_attempts.settlement, DeadLetter)
    hopeless = parsed_job()
    await step(hopeless, raising(MediaUnavailable("no ocr")))
    assert hopeless.settlement == Ack()
    for job in (out_of_attempts, hopeless):
        assert job.outcome == "failed"
        assert [(o.result.success, o.result.component) for o in job.results] == [(False, "claims")]


async def test_a_media_task_that_fails_for_good_reports_each_analysis_component():
    """media_preprocess failing ends the four components it would have dispatched."""
    job = parsed_job(a_task(MEDIA_PREPROCESS))
    await DecideOnFailure(3, 100, "w")(job, raising(MediaUnavailable("no ocr")))
    assert sorted(o.result.component for o in job.results) == [
        "ai_tampered",
        "claims",
        "domain",
        "techniques",
    ]


async def test_a_success_reports_its_score_and_time_except_for_media_preprocessing():
    """An analysis becomes a success result with the run's time; media_preprocess reports
    through the tasks it dispatched, so it only acks."""

    def analysed(job: Job) -> None:
        job.analysis, job.elapsed_ms = Analysis(42, {"why": "x"}), 17

    job = parsed_job()
    await ReportSuccess("w1")(job, Rest(analysed))
    (out,) = job.results
    assert (out.result.score, out.result.processing_time, out.result.worker_id) == (42, 17, "w1")
    assert (job.settlement, job.outcome) == (Ack(), "ok")
    media = parsed_job(a_task(MEDIA_PREPROCESS))
    await ReportSuccess("w1")(media, Rest(analysed))
    assert media.results == [] and media.outcome == "ok"


@pytest.mark.parametrize(
    ("settlement", "after_results"),
    [
        (Ack(), ["ack"]),
        (DeadLetter("gave up"), ["dead_letter", "ack"]),
        (NextAttempt(object(), 500), ["retry", "ack"]),  # type: ignore[arg-type]
    ],
)
async def test_results_are_published_before_the_delivery_is_settled(settlement, after_results):
    """Every result leaves (with the task's priority and its headers) before the ack, the
    dead letter or the next attempt: a crash in between never loses a result."""
    events: list[Any] = []
    job = parsed_job()
    job.delivery.events = events
    failure = Outgoing(failure_results(a_task(), "broken", 1, "w")[0], {"x-note": "kept"})

    def decide(job: Job) -> None:
        job.results.append(failure)
        job.settlement = settlement

    await Report(FakePublisher(events), "claims", 60_000, RESULT_KEY)(job, Rest(decide))  # type: ignore[arg-type]
    assert events[0][0] == "result" and events[0][2:] == (10, {"x-note": "kept"})
    assert [e[0] if isinstance(e, tuple) else e for e in events[1:]] == after_results


# --- the core ---


async def test_the_core_stops_an_executor_past_its_timeout():
    """Past the task timeout the executor is cancelled and the run is AnalysisTimeout."""
    cancelled = asyncio.Event()

    async def stuck(task: Task, ctx: ExecutorContext) -> Analysis:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        raise AssertionError("unreachable")

    context = ExecutorContext(settings(task_timeout_s=0.05), None, None, None, None, analysis=None)  # type: ignore[arg-type]
    with pytest.raises(AnalysisTimeout):
        await Execute(stuck, context)(parsed_job())
    await asyncio.wait_for(cancelled.wait(), 5)


# --- the whole chain, as the worker builds it ---


def settings(**changes: Any) -> Settings:
    return Settings(
        amqp_url="amqp://unused",
        redis_url="redis://unused",
        database_url="postgresql://unused",
        topology_prefix="unit",
        **changes,
    )


def handler(
    events: list[Any],
    executor: Any,
    lock: FakeLock | None = None,
    extra: Any = None,
    pool: FakePool | None = None,
):
    publisher = FakePublisher(events)
    lock = lock or FakeLock(events)
    pool = pool or FakePool()
    steps = steps_for(settings(), "claims", publisher, lambda t: lock, pool, "w", KEYS)  # type: ignore[arg-type]
    if extra is not None:  # where a step that sees the outgoing results belongs
        steps.insert(next(i for i, s in enumerate(steps) if isinstance(s, Report)) + 1, extra)
    context = ExecutorContext(settings(), None, None, None, None, analysis=None)  # type: ignore[arg-type]
    return TaskHandler(steps, Execute(executor, context)), publisher


def kinds(events: list[Any]) -> list[str]:
    return [e[0] if isinstance(e, tuple) else e for e in events]


async def test_a_task_runs_under_its_lock_and_reports_before_the_ack_exactly_once():
    """Lock, run, result, ack, then the lock is kept as done: the order that makes a
    duplicate wait instead of running the task twice."""
    events: list[Any] = []

    async def analyse(task: Task, ctx: ExecutorContext) -> Analysis:
        events.append("run")
        return Analysis(7)

    handle, publisher = handler(events, analyse)
    delivery = delivery_of(a_task(), events=events)
    await handle.handle(delivery)  # type: ignore[arg-type]
    assert kinds(events) == [
        "lock acquired",
        "run",
        "result",
        "ack",
        "lock finished",
        "lock released",
    ]
    assert [r.score for r in publisher.results()] == [7]


async def test_a_failing_task_goes_to_its_next_attempt_under_the_lock_and_frees_it():
    """A transient failure: no result, the next attempt published, acked, lock released."""
    events: list[Any] = []

    async def flaky(task: Task, ctx: ExecutorContext) -> Analysis:
        raise RetryableAnalysisError("503")

    handle, _ = handler(events, flaky)
    await handle.handle(delivery_of(a_task(), events=events))  # type: ignore[arg-type]
    assert kinds(events) == ["lock acquired", "retry", "ack", "lock released"]


async def test_a_step_added_after_report_sees_and_changes_every_outgoing_result():
    """The extension point (e.g. signing results): a step placed after Report changes the
    results before they are published, success or failure alike."""
    events: list[Any] = []

    async def sign(job: Job, call_next: Next) -> None:
        await call_next(job)
        for outgoing in job.results:
            outgoing.headers["x-signature"] = f"sig:{outgoing.result.component}"

    async def analyse(task: Task, ctx: ExecutorContext) -> Analysis:
        return Analysis(7)

    handle, _ = handler(events, analyse, extra=sign)
    await handle.handle(delivery_of(a_task(), events=events))  # type: ignore[arg-type]
    (published,) = [e for e in events if isinstance(e, tuple) and e[0] == "result"]
    assert published[3] == {"x-signature": "sig:claims"}


async def test_poison_and_a_held_lock_never_reach_the_executor():
    """Not a task: dead-lettered. Lock held: re-queued. The executor runs in neither case."""
    ran: list[Task] = []

    async def analyse(task: Task, ctx: ExecutorContext) -> Analysis:
        ran.append(task)
        return Analysis(1)

    events: list[Any] = []
    handle, _ = handler(events, analyse)
    poison = delivery_of(a_task(), events=events)
    poison.body = b"{"
    await handle.handle(poison)  # type: ignore[arg-type]
    assert kinds(events) == ["dead_letter", "ack"]
    events.clear()
    handle, _ = handler(events, analyse, lock=FakeLock(events, free=False))
    await handle.handle(delivery_of(a_task(), events=events))  # type: ignore[arg-type]
    assert kinds(events) == ["lock refused", "retry", "ack"] and ran == []


async def test_a_step_added_after_parsing_sees_the_task_before_it_runs_and_may_refuse_it():
    """The other extension point (e.g. checking a signature): a step after ParseTask sees
    the parsed task before the executor; refusing it with Reject dead-letters it unrun."""
    ran: list[Task] = []

    async def analyse(task: Task, ctx: ExecutorContext) -> Analysis:
        ran.append(task)
        return Analysis(1)

    async def refuse_plan_6(job: Job, call_next: Next) -> None:
        if job.task.plan_type == 6:
            raise Reject("unsigned task")
        await call_next(job)

    events: list[Any] = []
    publisher = FakePublisher(events)
    steps = steps_for(
        settings(), "claims", publisher, lambda t: FakeLock(events), FakePool(), "w", KEYS
    )  # type: ignore[arg-type]
    steps.insert(
        next(i for i, s in enumerate(steps) if isinstance(s, ParseTask)) + 1, refuse_plan_6
    )
    context = ExecutorContext(settings(), None, None, None, None, analysis=None)  # type: ignore[arg-type]
    await TaskHandler(steps, Execute(analyse, context)).handle(delivery_of(a_task(), events=events))  # type: ignore[arg-type]
    assert kinds(events) == ["dead_letter", "ack"] and ran == []
    assert events[0][1] == "unsigned task"


async def test_an_unsigned_or_altered_task_is_dead_lettered_unrun_and_results_leave_signed():
    """Through the worker's whole chain: a task the API did not sign, or signed for another
    plan, never runs and goes to the DLQ as unauthenticated; a signed one runs and its result
    carries the claims workers' signature."""
    ran: list[Task] = []

    async def analyse(task: Task, ctx: ExecutorContext) -> Analysis:
        ran.append(task)
        return Analysis(7)

    for delivery in (
        delivery_of(a_task(), signed=False),
        delivery_of(a_task(plan_type=5, priority=8), signed=False),
    ):
        events: list[Any] = []
        delivery.events = events
        run, _ = handler(events, analyse)
        await run.handle(delivery)  # type: ignore[arg-type]
        assert kinds(events) == ["dead_letter", "ack"] and events[0][1] == "unauthenticated task"
    assert ran == []
    events = []
    run, _ = handler(events, analyse)
    await run.handle(delivery_of(a_task(), events=events))  # type: ignore[arg-type]
    published = [e[1] for e in events if isinstance(e, tuple) and e[0] == "result"]
    assert len(ran) == 1 and len(published) == 1
    assert result_is_authentic({"claims": RESULT_KEY}, published[0])


def returned_from_parking(events: list[Any]) -> FakeDelivery:
    """The copy a full DLQ made us park, as its retry tier hands it back."""
    copy, routing_key = next(e[1:3] for e in events if isinstance(e, tuple) and e[0] == "retry")
    return FakeDelivery(copy.body, routing_key=routing_key, headers=dict(copy.headers))


async def test_a_task_parked_by_a_full_dlq_is_dead_lettered_unrun_when_it_returns():
    """The worker's own marker round-trips: a task out of attempts that the full DLQ
    refused comes back from its tier and goes to the DLQ with its reason, without running
    again (its failure result is already reported)."""
    ran: list[Task] = []

    async def broken(task: Task, ctx: ExecutorContext) -> Analysis:
        ran.append(task)
        raise RetryableAnalysisError("still down")

    events: list[Any] = []
    last = settings().max_attempts
    still_needed = FakePool({"status": "processing", "recorded": False})
    run, publisher = handler(events, broken, pool=still_needed)
    publisher.dlq_full = True
    await run.handle(delivery_of(a_task(), attempt=last, events=events))  # type: ignore[arg-type]
    back = returned_from_parking(events)
    events.clear()
    back.events = events
    run, _ = handler(events, broken, pool=still_needed)
    await run.handle(back)  # type: ignore[arg-type]
    assert kinds(events) == ["dead_letter", "ack"] and "still down" in events[0][1]
    assert len(ran) == 1


OTHER_ROLE = b"domain-result-key-of-at-least-32-bytes"
FORGERIES = {
    "no MAC": lambda headers, body: {
        **headers,
        PARKED_HEADER: "spoofed",
        PARKED_KIND_HEADER: "unauthenticated",
    },
    "another role's key": lambda headers, body: parking_headers(
        headers, "spoofed", "unauthenticated", body, OTHER_ROLE
    ),
    "another body's MAC": lambda headers, body: parking_headers(
        headers, "spoofed", "unauthenticated", b"{}", RESULT_KEY
    ),
}


@pytest.mark.parametrize("forge", FORGERIES.values(), ids=FORGERIES.keys())
async def test_a_task_with_a_forged_parking_marker_is_handled_as_any_other(forge):
    """A marker this component's workers did not make for this body is ignored: a genuine
    task runs and reports; poison is dead-lettered as poison, not with the claimed reason."""

    async def analyse(task: Task, ctx: ExecutorContext) -> Analysis:
        return Analysis(7)

    events: list[Any] = []
    task = delivery_of(a_task(), events=events)
    task.headers = forge(task.headers, task.body)
    run, publisher = handler(events, analyse)
    await run.handle(task)  # type: ignore[arg-type]
    assert [r.score for r in publisher.results()] == [7] and "dead_letter" not in kinds(events)
    events.clear()
    poison = delivery_of(a_task(), events=events)
    poison.body = b"{"
    poison.headers = forge(poison.headers, poison.body)
    run, _ = handler(events, analyse)
    await run.handle(poison)  # type: ignore[arg-type]
    assert kinds(events) == ["dead_letter", "ack"] and "invalid task" in events[0][1]
