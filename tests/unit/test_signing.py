"""Signed tasks and results: what is accepted, and every kind of forgery that is not."""

import pytest

from shared.errors import MissingCredential
from shared.messages import Result, Task, TaskInput, decode_result, decode_task, encode
from shared.settings import Settings
from shared.signing import (
    aggregator_parking_key,
    new_task_keys,
    private_task_key,
    public_task_key,
    result_is_authentic,
    sign_result,
    sign_task,
    task_is_authentic,
)

SID = "0b7c6a52-3f5e-4c1e-9d7e-2f1a8b9c0d11"
KEYS = {
    c: f"{c}-key-of-at-least-32-bytes-xxxxxxxx".encode()
    for c in ("techniques", "ai_tampered", "claims", "domain", "media_preprocess")
}
PRIVATE, PUBLIC = new_task_keys()


def task(**changes) -> Task:
    base = Task(
        session_id=SID,
        component="claims",
        plan_type=2,
        priority=2,
        input={"content": "some text"},
        timestamp=1,
    )
    return base.model_copy(update=changes)


def result(**changes) -> Result:
    base = Result(
        session_id=SID,
        component="claims",
        success=True,
        score=12.5,
        data={"claims": ["x"], "ro": "ș"},
        timestamp=1,
        attempt=2,
    )
    return base.model_copy(update=changes)


def over_the_wire_task(t: Task) -> Task:
    return decode_task(encode(t))


def over_the_wire_result(r: Result) -> Result:
    return decode_result(encode(r))


def test_a_signed_task_survives_the_wire_and_a_retry():
    """The signature holds after encoding and decoding, and when the retry count grows."""
    signed = sign_task(private_task_key(PRIVATE), task())
    received = over_the_wire_task(signed)
    assert task_is_authentic(public_task_key(PUBLIC), received)
    assert task_is_authentic(
        public_task_key(PUBLIC), received.model_copy(update={"retry_count": 3})
    )


@pytest.mark.parametrize(
    "forge",
    [
        lambda t: t.model_copy(update={"plan_type": 6, "priority": 10}),  # priority forging
        lambda t: t.model_copy(update={"input": TaskInput(content="other text")}),
        lambda t: t.model_copy(update={"session_id": "1b7c6a52-3f5e-4c1e-9d7e-2f1a8b9c0d11"}),
        lambda t: t.model_copy(update={"component": "domain"}),
        lambda t: t.model_copy(update={"signature": None}),
        lambda t: t.model_copy(update={"signature": "bm90IGEgc2lnbmF0dXJl"}),
        lambda t: sign_task(private_task_key(new_task_keys()[0]), t),  # someone else's key
    ],
)
def test_a_changed_or_unsigned_task_is_not_authentic(forge):
    """Another plan, input, session or component, no signature, a wrong one or another key."""
    signed = sign_task(private_task_key(PRIVATE), task())
    assert not task_is_authentic(public_task_key(PUBLIC), over_the_wire_task(forge(signed)))


def test_a_signed_result_survives_the_wire():
    """Signed by the claims workers with the claims key, it is authentic after decoding."""
    signed = sign_result(KEYS["claims"], "claims", result())
    assert result_is_authentic(KEYS, over_the_wire_result(signed))


def test_media_workers_may_report_failures_of_every_component_but_no_success():
    """A media file that cannot be read fails the four components; media cannot score them."""
    failure = result(component="domain", success=False, score=0, error="unreadable")
    assert result_is_authentic(
        KEYS, sign_result(KEYS["media_preprocess"], "media_preprocess", failure)
    )
    success = result(component="domain")
    assert not result_is_authentic(
        KEYS, sign_result(KEYS["media_preprocess"], "media_preprocess", success)
    )


@pytest.mark.parametrize(
    "forge",
    [
        lambda r: r.model_copy(update={"score": 99.0}),
        lambda r: r.model_copy(update={"data": {"claims": []}}),
        lambda r: r.model_copy(update={"attempt": 3}),
        lambda r: r.model_copy(update={"session_id": "1b7c6a52-3f5e-4c1e-9d7e-2f1a8b9c0d11"}),
        lambda r: r.model_copy(update={"signature": None}),
        lambda r: r.model_copy(update={"signed_by": None}),
        lambda r: sign_result(KEYS["domain"], "domain", r),  # another component's workers
        lambda r: sign_result(b"a-guessed-key-of-32-bytes-xxxxxxxxx", "claims", r),
    ],
)
def test_a_changed_or_unsigned_result_is_not_authentic(forge):
    """Another score, data, attempt or session, no signature, another signer or key."""
    signed = sign_result(KEYS["claims"], "claims", result())
    assert not result_is_authentic(KEYS, over_the_wire_result(forge(signed)))


def test_malformed_keys_are_refused():
    """A task key is base64 of 32 bytes."""
    with pytest.raises(ValueError):
        public_task_key("not base64!")
    with pytest.raises(ValueError):
        private_task_key("c2hvcnQ=")


def with_result_keys(keys: dict[str, bytes]) -> Settings:
    return Settings(
        amqp_url="amqp://unused",
        redis_url="redis://unused",
        database_url="postgresql://unused",
        result_keys={c: k.decode() for c, k in keys.items()},
    )


def test_the_aggregators_parking_key_needs_every_result_key_and_is_none_of_them():
    """Aggregators, holding every result key, derive the same key; a worker, holding one,
    cannot: it is none of the result keys, changes with any one of them, and a process
    without them all has none (MissingCredential)."""
    key = aggregator_parking_key(with_result_keys(KEYS))
    assert key == aggregator_parking_key(with_result_keys(dict(KEYS)))
    assert key not in KEYS.values()
    for component in KEYS:
        other = {**KEYS, component: b"another-key-of-at-least-32-bytes-xx"}
        assert aggregator_parking_key(with_result_keys(other)) != key
    with pytest.raises(MissingCredential):
        aggregator_parking_key(with_result_keys({"claims": KEYS["claims"]}))
