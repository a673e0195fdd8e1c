"""Signed tasks and results: what is accepted, and every kind of forgery that is not."""

import base64

import pytest

from shared.errors import MissingCredential
from shared.messages import Result, Task, TaskInput, decode_result, decode_task, encode
from shared.settings import Settings
from shared.signing import (
    TaskKeys,
    _verified,
    aggregator_parking_key,
    new_task_keys,
    origin_of,
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
MEDIA_PRIVATE, MEDIA_PUBLIC = new_task_keys()
KEYS_OF_WORKERS = TaskKeys(public_task_key(PUBLIC), public_task_key(MEDIA_PUBLIC))


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
    assert task_is_authentic(KEYS_OF_WORKERS, received)
    assert task_is_authentic(KEYS_OF_WORKERS, received.model_copy(update={"retry_count": 3}))


@pytest.mark.parametrize(
    "forge",
    [
        lambda t: t.model_copy(update={"plan_type": 6, "priority": 10}),  # priority forging
        lambda t: t.model_copy(update={"input": TaskInput(content="other text")}),
        lambda t: t.model_copy(update={"session_id": "1b7c6a52-3f5e-4c1e-9d7e-2f1a8b9c0d11"}),
        lambda t: t.model_copy(update={"component": "domain"}),
        lambda t: t.model_copy(update={"signature": None}),
        lambda t: t.model_copy(update={"signature": "bm90IGEgc2lnbmF0dXJl"}),
        lambda t: t.model_copy(update={"signature": base64.b64encode(bytes(64)).decode()}),
        lambda t: t.model_copy(update={"signature": "not base64 at all!"}),
        lambda t: sign_task(private_task_key(new_task_keys()[0]), t),  # someone else's key
    ],
)
def test_a_changed_or_unsigned_task_is_not_authentic(forge):
    """Another plan, input, session or component, no signature, a wrong one or another key."""
    signed = sign_task(private_task_key(PRIVATE), task())
    assert not task_is_authentic(KEYS_OF_WORKERS, over_the_wire_task(forge(signed)))


def test_task_keys_and_signatures_are_standard_ed25519():
    """RFC 8032's first test vector: keys made elsewhere (or by an earlier release) sign and
    check here, and signatures made here check anywhere."""
    seed = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"
    public = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"
    signature = (
        "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555"
        "fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"
    )
    private_key = private_task_key(base64.b64encode(bytes.fromhex(seed)).decode())
    assert bytes(private_key.verify_key) == bytes.fromhex(public)
    assert private_key.sign(b"").signature == bytes.fromhex(signature)
    public_key = public_task_key(base64.b64encode(bytes.fromhex(public)).decode())
    encoded = base64.b64encode(bytes.fromhex(signature)).decode()
    assert _verified(public_key, encoded, b"")
    assert not _verified(public_key, encoded, b"x")


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


def media_task() -> Task:
    media = task(
        component="media_preprocess", input=TaskInput(media_path="a.png", input_type="image")
    )
    return sign_task(private_task_key(PRIVATE), media)


def follow_up(origin: Task, **changes) -> Task:
    """What a media worker dispatches: an analysis task with the extracted text, its origin."""
    derived = origin.model_copy(
        update={
            "component": "claims",
            "input": TaskInput(content="extracted"),
            "signature": None,
            "origin": origin_of(origin),
            **changes,
        }
    )
    return sign_task(private_task_key(MEDIA_PRIVATE), derived)


def test_a_follow_up_of_a_signed_media_task_is_authentic_to_analysis_workers():
    """Signed by the media key, for the same session, plan and priority as its origin."""
    received = over_the_wire_task(follow_up(media_task()))
    assert task_is_authentic(KEYS_OF_WORKERS, received)
    # Media workers themselves take no follow-ups.
    assert not task_is_authentic(TaskKeys(public_task_key(PUBLIC)), received)


@pytest.mark.parametrize(
    "forge",
    [
        lambda: follow_up(media_task(), session_id="1b7c6a52-3f5e-4c1e-9d7e-2f1a8b9c0d11"),
        lambda: follow_up(media_task(), plan_type=6, priority=10),
        lambda: follow_up(media_task(), component="media_preprocess"),
        lambda: follow_up(sign_task(private_task_key(PRIVATE), task())),  # origin not media
        lambda: follow_up(sign_task(private_task_key(new_task_keys()[0]), media_task())),
        lambda: sign_task(private_task_key(PRIVATE), follow_up(media_task())),  # API key
    ],
)
def test_a_media_key_cannot_make_a_task_for_another_session_plan_or_origin(forge):
    """Another session or plan than the origin's, a media task for itself, an origin that is
    no media task or not the API's, or a follow-up not signed with the media key."""
    assert not task_is_authentic(KEYS_OF_WORKERS, over_the_wire_task(forge()))


def test_a_follow_up_carries_its_origin_s_content_only_as_a_digest():
    """The origin adds a few hundred bytes, not a second copy of the client's text."""
    big = sign_task(
        private_task_key(PRIVATE),
        media_task().model_copy(
            update={
                "input": TaskInput(content="x" * 50_000, media_path="a.png", input_type="image"),
                "signature": None,
            }
        ),
    )
    assert len(encode(follow_up(big))) < 2_000


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
