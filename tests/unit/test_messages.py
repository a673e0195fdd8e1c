"""Wire messages: camelCase round trips, clear errors, bounded size, plan priorities."""

import pytest

from shared.constants import PLAN_PRIORITY
from shared.errors import InvalidMessage
from shared.messages import (
    MAX_MESSAGE_BYTES,
    Result,
    Task,
    TaskInput,
    decode_result,
    decode_task,
    encode,
    priority_of,
)

SID = "5f0c6b1e-2a51-4c39-9d0e-3f0b8f7a2c11"


def a_task(**changes) -> Task:
    base = dict(
        session_id=SID,
        component="claims",
        plan_type=4,
        priority=6,
        input=TaskInput(content="hello", input_type="text"),
        timestamp=1,
    )
    base.update(changes)
    return Task(**base)


def test_task_round_trips_with_the_seed_field_names():
    """Encoded tasks use sessionId/planType/inputType and decode to the same task."""
    body = encode(a_task())
    assert (
        f'"sessionId":"{SID}"'.encode() in body
        and b'"planType":4' in body
        and b'"inputType":"text"' in body
    )
    assert decode_task(body) == a_task()


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (b"not json", "invalid task"),
        (b'{"sessionId": "s"}', "sessionId"),
        (
            b'{"sessionId":"%s","component":"astrology","planType":1,"priority":1,"input":{},"timestamp":1}'
            % SID.encode(),
            "component",
        ),
        (
            b'{"sessionId":"%s","component":"claims","planType":9,"priority":1,"input":{},"timestamp":1}'
            % SID.encode(),
            "planType",
        ),
    ],
)
def test_malformed_tasks_raise_invalid_message_naming_the_problem(body, says):
    """Poison is recognised, with a reason fit for a DLQ header."""
    with pytest.raises(InvalidMessage, match=says):
        decode_task(body)


def test_oversized_messages_are_refused_before_parsing():
    """A huge body is poison, not something to parse."""
    with pytest.raises(InvalidMessage, match="exceeds"):
        decode_task(b" " * (MAX_MESSAGE_BYTES + 1))


def test_results_bound_the_score_and_name_only_analysis_components():
    """Scores are 0-100 and media_preprocess never reports a result of its own."""
    ok = Result(session_id=SID, component="domain", success=True, score=12.5, timestamp=1)
    assert decode_result(encode(ok)) == ok
    with pytest.raises(InvalidMessage):
        decode_result(
            b'{"sessionId":"%s","component":"domain","success":true,"score":101,"timestamp":1}'
            % SID.encode()
        )
    with pytest.raises(InvalidMessage):
        decode_result(
            b'{"sessionId":"%s","component":"media_preprocess","success":true,"score":1,"timestamp":1}'
            % SID.encode()
        )


def test_plan_priorities_follow_the_spec():
    """1→1, 2→2, 3→4, 4→6, 5→8, 6→10."""
    assert [priority_of(p) for p in range(1, 7)] == [1, 2, 4, 6, 8, 10]
    assert PLAN_PRIORITY[6] == 10


def test_session_ids_must_be_uuids():
    """A task naming a session that cannot exist is poison, recognised without any I/O."""
    body = encode(a_task()).replace(SID.encode(), b"not-a-uuid")
    with pytest.raises(InvalidMessage, match="sessionId"):
        decode_task(body)
