"""Forged results and tasks, published by someone who can reach the broker but holds no
signing key: each is dead-lettered with its reason and the verdict is the genuine one. A
worker adds a parking marker of its own making, where it may not park: it changes nothing."""

import json

import aio_pika
import pytest

from aggregator.explanation import explain
from aggregator.service import Aggregator
from shared.constants import REASON_HEADER
from shared.deadletters import parking_headers
from shared.messages import Result, Task, TaskInput, encode, now_ms
from shared.names import Names
from shared.signing import new_task_keys, private_task_key, result_key, sign_result, sign_task
from tests.integration.conftest import publisher_for, running, signed
from tests.integration.test_dead_letters import dead_letters
from tests.integration.test_worker_flow import final_view, submit, workers_for
from workers.executor import Analysis

pytestmark = pytest.mark.integration


async def calm(task, ctx):
    return Analysis(5, {"evidence_count": 0})


def forged_results(settings, sid):
    """A critical score for claims: unsigned, under a guessed key, and signed by the domain
    workers (who may not report claims); and a claims failure signed by the media workers,
    who may fail the components of a media session only (this one is text)."""

    def claims(**fields):
        return Result(
            session_id=sid,
            component="claims",
            success=True,
            score=100,
            timestamp=now_ms(),
            **fields,
        )

    unsigned = claims()
    guessed = sign_result(b"a-guessed-key-of-at-least-32-bytes!", "claims", claims())
    by_domain = signed(settings, claims().model_copy(update={"component": "domain"}))
    by_domain = by_domain.model_copy(update={"component": "claims"})
    failure = claims().model_copy(update={"success": False, "score": 0, "error": "x"})
    by_media = sign_result(result_key(settings, "media_preprocess"), "media_preprocess", failure)
    return [unsigned, guessed, by_domain, by_media]


def spoofed_marker(settings, body, by):
    """What a worker of `by` could add to have a message dead-lettered as it chooses: a
    parking marker under its own key, which holds only on its own component's queues."""
    return parking_headers({}, "spoofed", "refused", body, result_key(settings, by))


async def test_forged_results_and_tasks_are_dead_lettered_and_the_verdict_stands(world, pool):
    """Results with no, a wrong or another component's signature, a media failure for a text
    session, a task re-signed under another key and a genuine task replayed at plan 6: six
    dead letters, each with its
    reason (not the one a forged parking marker claims); the session's verdict comes from
    the genuine results alone."""
    settings = await world()
    names = Names(settings.topology_prefix)
    async with publisher_for(settings) as publisher:
        sid = await submit(pool, publisher, plan=2, content="a calm note about the weather")
        for forged in forged_results(settings, sid):
            await publisher.result(
                forged, headers=spoofed_marker(settings, encode(forged), "claims")
            )
        task = Task(
            session_id=sid,
            component="claims",
            plan_type=6,
            priority=10,
            input=TaskInput(content="forged"),
            timestamp=now_ms(),
        )
        other_key = private_task_key(new_task_keys()[0])
        resigned = encode(sign_task(other_key, task))
        await publisher.send(
            names.exchange,
            names.task_queue("claims", 6),
            aio_pika.Message(resigned, headers=spoofed_marker(settings, resigned, "domain")),
        )
        genuine = sign_task(private_task_key(settings.task_signing_key.get_secret_value()), task)
        replayed = genuine.model_copy(update={"plan_type": 6, "input": TaskInput(content="x")})
        await publisher.send(
            names.exchange, names.task_queue("claims", 6), aio_pika.Message(encode(replayed))
        )
    async with running(*workers_for(settings, calm), Aggregator(settings, explain=explain).run):
        view = await final_view(pool, sid)
        letters = await dead_letters(settings, 6)
    assert view.status == "completed"
    assert view.results["claims"]["score"] == 5 and view.verdict["label"] == "low_risk"
    reasons = sorted(letter.headers[REASON_HEADER] for letter in letters)
    assert reasons == ["unauthenticated result"] * 4 + ["unauthenticated task"] * 2
    bodies = [json.loads(letter.body) for letter in letters]
    assert all(b["sessionId"] == sid for b in bodies)
