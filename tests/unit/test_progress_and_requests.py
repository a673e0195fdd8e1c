"""Progress views, request validation, API-key plans and the compose process plan."""

import pytest
from fastapi import HTTPException
from pydantic import ValidationError

from dispatcher.auth import Caller, authenticate, effective_plan
from dispatcher.schemas import AnalyzeRequest
from ops.supervisor import plan_from_document
from shared.api_keys import hashed
from shared.sessions import progress_of
from shared.settings import ApiKey, Settings

COMPONENTS = ("techniques", "ai_tampered", "claims", "domain")


def test_progress_counts_each_component_once_and_separates_failures():
    """Three of four recorded (one failed) is 75 %, whatever the delivery count was."""
    results = {
        "techniques": {"status": "ok"},
        "claims": {"status": "failed"},
        "domain": {"status": "ok"},
    }
    view = progress_of("processing", COMPONENTS, results)
    assert view["progress"] == 75
    assert view["completed_components"] == ["techniques", "domain"]
    assert view["failed_components"] == ["claims"]
    assert view["pending_components"] == ["ai_tampered"]


def test_final_sessions_report_full_progress():
    """A session finalized at its deadline is 100 % done even with components missing."""
    assert (
        progress_of("partial", COMPONENTS, {"techniques": {"status": "timeout"}})["progress"] == 100
    )


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"input_type": "text"}, "needs a non-empty content"),
        ({"input_type": "url", "content": "x"}, "needs a url"),
        ({"input_type": "video", "content": "x"}, "needs a media_path"),
        ({"content": "x", "plan_type": 7}, "less than or equal to 6"),
        ({"content": "x", "url": "javascript:alert(1)"}, "must be an http:// or https://"),
        ({"content": "x", "colour": "red"}, "Extra inputs"),
    ],
)
def test_bad_requests_are_refused_with_a_readable_reason(body, says):
    """Each malformed body names what is wrong."""
    with pytest.raises(ValidationError, match=says):
        AnalyzeRequest(**body)


def test_text_is_accepted_as_an_alias_of_content():
    """`text` (the seed's field) works like `content`."""
    assert AnalyzeRequest(text="hello").task_input()["content"] == "hello"


def test_a_body_plan_may_lower_but_never_raise_the_keys_plan():
    """Plan 4 key: plan_type 2 is honoured, plan_type 6 is refused with 403."""
    caller = Caller("t", 4)
    assert effective_plan(caller, None) == 4
    assert effective_plan(caller, 2) == 2
    with pytest.raises(HTTPException) as refused:
        effective_plan(caller, 6)
    assert refused.value.status_code == 403


def test_unknown_or_missing_keys_are_unauthorised():
    """Only configured keys map to a tenant."""
    settings = Settings(
        amqp_url="a",
        redis_url="r",
        database_url="d",
        api_keys=hashed({"good": ApiKey(tenant="acme", plan=3)}),
    )
    assert authenticate(settings, "good") == Caller("acme", 3)
    for key in (None, "", "bad"):
        with pytest.raises(HTTPException) as refused:
            authenticate(settings, key)
        assert refused.value.status_code == 401


def test_compose_plan_takes_verdict_services_with_their_replicas():
    """Infrastructure is skipped, one-shots run first, replicas come from deploy.replicas."""
    plan = plan_from_document(
        {
            "services": {
                "rabbitmq": {"image": "rabbitmq"},
                "migrate": {"command": ["verdict", "db", "migrate"], "restart": "no"},
                "worker-claims": {
                    "command": ["verdict", "worker", "claims", "--prefetch", "3"],
                    "deploy": {"replicas": 3},
                },
                "api": {"command": ["verdict", "api"]},
            }
        }
    )
    assert [s.name for s in plan.one_shots] == ["migrate"]
    assert {s.name: s.replicas for s in plan.services} == {"worker-claims": 3, "api": 1}
    assert plan.services[0].argv[-4:] == ("worker", "claims", "--prefetch", "3")


@pytest.mark.parametrize(
    ("missing", "says"),
    [
        ("AMQP_URL", "AMQP_URL is required"),
        ("REDIS_URL", "REDIS_URL is required"),
        ("DATABASE_URL", "database_url"),
    ],
)
def test_settings_have_no_credential_defaults(monkeypatch, missing, says):
    """Connection URLs must come from the environment (the broker's on its transport)."""
    for name in ("AMQP_URL", "REDIS_URL", "DATABASE_URL"):
        monkeypatch.setenv(name, f"{name.lower()}-given")
    monkeypatch.delenv(missing)
    monkeypatch.delenv("TRANSPORT", raising=False)
    with pytest.raises(ValidationError, match=says):
        Settings()


def test_only_the_postgres_transport_runs_without_redis(monkeypatch):
    """With TRANSPORT=postgres, REDIS_URL may be unset (the house is PostgreSQL then)."""
    for name in ("AMQP_URL", "REDIS_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DATABASE_URL", "postgresql://db/verdict")
    monkeypatch.setenv("TRANSPORT", "postgres")
    assert Settings().redis_url == ""
    # One house per deployment: no component's Redis beside a deployment without it.
    monkeypatch.setenv("COMPONENT_REDIS_URLS", '{"claims": "redis://r/0"}')
    with pytest.raises(ValidationError, match="COMPONENT_REDIS_URLS needs REDIS_URL"):
        Settings()
    monkeypatch.delenv("COMPONENT_REDIS_URLS")
    monkeypatch.setenv("TRANSPORT", "rabbitmq")
    monkeypatch.setenv("AMQP_URL", "amqp://broker/")
    with pytest.raises(ValidationError, match="only TRANSPORT=postgres runs without Redis"):
        Settings()


def test_deadlines_can_differ_per_plan():
    """A per-plan deadline overrides the default for that plan only."""
    settings = Settings(
        amqp_url="a",
        redis_url="r",
        database_url="d",
        session_deadline_s=900,
        session_deadline_by_plan={6: 120},
    )
    assert (settings.deadline_s(6), settings.deadline_s(1)) == (120, 900)


def test_api_keys_are_configured_as_hashes_only():
    """A plain key in API_KEYS is refused at start-up with what to do instead; a hash of the
    key authenticates it."""
    from shared.api_keys import key_hash, new_key

    base = {"amqp_url": "amqp://h/", "redis_url": "redis://h/", "database_url": "postgresql://h/d"}
    with pytest.raises(ValidationError, match="verdict keys hash"):
        Settings(**base, api_keys={"plain-key": {"tenant": "t", "plan": 1}})
    key = new_key()
    settings = Settings(**base, api_keys=hashed({key: {"tenant": "t", "plan": 2}}))
    assert authenticate(settings, key) == Caller("t", 2)
    assert key not in settings.model_dump_json() and key_hash(key) in settings.api_keys
    with pytest.raises(HTTPException):
        authenticate(settings, key_hash(key))  # the hash is no key
