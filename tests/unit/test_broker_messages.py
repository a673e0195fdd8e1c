"""Every message the project publishes is built by one function (shared.broker
.persistent_message): persistent so it survives a broker restart, JSON unless a copy keeps
its own content type."""

from __future__ import annotations

from typing import Any

import aio_pika

from shared.broker import Publisher, redelivery_copy, result_message, task_message
from shared.constants import ATTEMPT_HEADER, REASON_HEADER, REPLAYS_HEADER
from shared.dead_letter_queue import replay_copy
from shared.messages import Result, Task, TaskInput
from tests.unit.fakes import NAMES, FakeDelivery

SID = "5f0c6e1e-8f1a-4c3e-9a57-0d2b6a1c9e11"
TASK = Task(
    session_id=SID, component="claims", plan_type=6, priority=10, input=TaskInput(), timestamp=1
)
RESULT = Result(session_id=SID, component="claims", success=True, score=1, timestamp=1)
PERSISTENT = aio_pika.DeliveryMode.PERSISTENT


async def dead_letter() -> aio_pika.Message:
    sent: list[Any] = []

    async def send(exchange: str, routing_key: str, message: aio_pika.Message) -> None:
        sent.append(message)

    publisher = Publisher(None, NAMES, 1.0)  # type: ignore[arg-type]
    publisher.send = send  # type: ignore[method-assign]
    await publisher.dead_letter(b"{}", {"component": "claims"}, "poison", "q")
    return sent[0]


async def test_tasks_results_and_dead_letters_are_persistent_json():
    """The three messages the pipeline makes from scratch survive a broker restart and say
    they are JSON."""
    for message in (task_message(TASK), result_message(RESULT, 10), await dead_letter()):
        assert (message.delivery_mode, message.content_type) == (PERSISTENT, "application/json")


async def test_a_dead_letter_keeps_the_priority_of_its_original():
    """A replay restores the priority the letter carries, so it must be the original's."""
    sent: list[aio_pika.Message] = []

    async def send(exchange: str, routing_key: str, message: aio_pika.Message) -> None:
        sent.append(message)

    publisher = Publisher(None, NAMES, 1.0)  # type: ignore[arg-type]
    publisher.send = send  # type: ignore[method-assign]
    await publisher.dead_letter(b"{}", {}, "poison", "q", priority=8)
    assert sent[0].priority == 8


def test_a_copy_keeps_its_content_type_and_a_replay_defaults_to_json():
    """A re-queued delivery goes out as it came (its own content type, even none); a
    replayed dead letter without one is sent as JSON, as a fresh first attempt, one more
    replay counted."""
    raw = FakeDelivery(b"x", content_type=None, headers={ATTEMPT_HEADER: 3, REASON_HEADER: "r"})
    copy = redelivery_copy(raw)  # type: ignore[arg-type]
    assert (copy.delivery_mode, copy.content_type, copy.headers[ATTEMPT_HEADER]) == (
        PERSISTENT,
        None,
        3,
    )
    replay = replay_copy(raw, 0)  # type: ignore[arg-type]
    assert (replay.delivery_mode, replay.content_type) == (PERSISTENT, "application/json")
    assert replay.headers == {ATTEMPT_HEADER: 1, REPLAYS_HEADER: 1}


def test_a_result_message_carries_the_headers_a_step_added():
    """Headers given with a result (a signature, say) travel with it."""
    assert result_message(RESULT, 0, {"x-signature": "s"}).headers == {"x-signature": "s"}
