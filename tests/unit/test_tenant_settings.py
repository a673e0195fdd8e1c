"""Settings per tenant as pure policy: validation in words, changes, and what each stage of
the pipeline takes from them (components, tuning carried by tasks, verdict weights, review)."""

import pytest

from aggregator.fanin import _settle
from aggregator.verdict import ComponentOutcome, compute
from dispatcher.submit import first_tasks
from shared.constants import ANALYSIS_COMPONENTS
from shared.errors import TenantSettingsError
from shared.messages import TaskInput, TenantTuning, decode_task, encode, failure_results
from shared.registry import WorkerRecord, unserved
from shared.review_policy import NO_REVIEW, ReviewPolicy
from shared.sessions import NewSession
from shared.signing import (
    TaskKeys,
    origin_of,
    private_task_key,
    public_task_key,
    sign_task,
    task_is_authentic,
)
from shared.tenant_settings import (
    assignments,
    components_of,
    review_for,
    session_policy,
    tuning_of,
    validated,
    weights_for,
    with_changes,
    without,
)
from tests.unit.test_signing import MEDIA_PRIVATE, MEDIA_PUBLIC, PRIVATE, PUBLIC, task

SID = "0b7c6a52-3f5e-4c1e-9d7e-2f1a8b9c0d11"


@pytest.mark.parametrize(
    ("changes", "says"),
    [
        ({"components": ""}, "at least one component must run"),
        ({"components": "techniques,bogus"}, "components.1"),
        ({"verdict_weights": {"claims": 11}}, "weights are numbers from 0 to 10"),
        ({"review": {"confidence_below": 2}}, "review.confidence_below"),
        ({"review": {"plans": [7]}}, "plans are numbers from 1 to 6"),
        ({"rate_limit": "lots"}, "not a rate limit such as"),
        ({"blocked_hosts": "not a host"}, "is not a host name"),
        ({"lexicon_terms": {"Bad Name": ["x"]}}, "is not a technique name"),
        ({"lexicon_terms": {"fear_appeal": ["x" * 81]}}, "at most 80 characters"),
        ({"colour": "blue"}, "colour: Extra inputs are not permitted"),
    ],
)
def test_bad_values_are_refused_naming_the_value_and_why(changes, says):
    """Each refusal names the setting and the rule it breaks, in a user's terms."""
    with pytest.raises(TenantSettingsError, match=says.replace(".", r"\.")):
        with_changes({}, changes)


def test_changes_and_removals_reach_into_sections_and_keep_the_rest():
    """Dotted keys set or remove one value of a section; the rest stays; lists may be written
    as comma-separated text (as `verdict tenants set` passes them)."""
    first = with_changes({}, assignments(["components=claims,techniques", "review.plans=5,6"]))
    assert first.components == ("techniques", "claims")  # in the pipeline's order
    stored = first.model_dump(mode="json", exclude_none=True)
    second = with_changes(stored, {"review.confidence_below": 0.5, "verdict_weights.claims": 2})
    assert second.review.plans == (5, 6) and second.review.confidence_below == 0.5
    third = without(second.model_dump(mode="json", exclude_none=True), ["review.plans"])
    assert third.review.plans == () and third.components == ("techniques", "claims")
    with pytest.raises(TenantSettingsError, match="rate_limit: not set for this tenant"):
        without({}, ["rate_limit"])
    with pytest.raises(TenantSettingsError, match="write KEY=VALUE"):
        assignments(["components"])


def test_command_line_values_are_numbers_only_where_the_setting_is_one():
    """One plan, a number-like term, a limit and a weight each mean what they look like:
    a lone value is a list of one, a term stays text, a weight is a number."""
    settings = with_changes(
        {},
        assignments(
            [
                "review.plans=5",
                "lexicon_terms.fear_appeal=2020",
                "rate_limit=10/minute",
                "verdict_weights.claims=2",
            ]
        ),
    )
    assert settings.review.plans == (5,)
    assert settings.lexicon_terms == {"fear_appeal": ("2020",)}
    assert settings.rate_limit == "10/minute" and settings.verdict_weights == {"claims": 2}
    assert assignments(["review.plans=[5, 6]"]) == {"review.plans": [5, 6]}


def test_a_tenant_without_settings_runs_as_the_deployment_is_configured():
    """All four components, no tuning on its tasks, the deployment's weights and review."""
    deployment = {"techniques": 1.0, "claims": 1.0}
    review = ReviewPolicy(confidence_below=0.3)
    assert components_of(None) == ANALYSIS_COMPONENTS
    assert tuning_of(None, None) is None and session_policy(None) is None
    assert weights_for(None, deployment) == deployment
    assert review_for(None, review) is review


def test_a_tenant_s_choices_become_the_session_s_components_tuning_and_policy():
    """Its components, its terms and lists in the tasks with its version, and its weights
    over the deployment's, its review rules instead of the deployment's."""
    chosen = validated(
        {
            "components": ["techniques", "domain"],
            "verdict_weights": {"techniques": 0},
            "review": {"label_at_least": "high_risk", "plans": [3]},
            "lexicon_terms": {"fear_appeal": ["zorblax"]},
            "blocked_hosts": ["Evil.Example."],
        }
    )
    tuning = tuning_of(chosen, 7)
    assert tuning.settings_version == 7 and tuning.components == ("techniques", "domain")
    assert tuning.blocked_hosts == ("evil.example",)
    policy = session_policy(chosen)
    assert weights_for(policy, {"techniques": 1, "domain": 1}) == {"techniques": 0, "domain": 1}
    assert review_for(policy, NO_REVIEW) == ReviewPolicy(None, "high_risk", frozenset({3}))


def session(input_type="text", tuning=None, components=ANALYSIS_COMPONENTS):
    return NewSession(
        SID, "acme", 3, input_type, {"content": "x"}, 60, None, tuning=tuning, components=components
    )


def test_the_dispatcher_publishes_only_the_tenant_s_components_each_carrying_its_settings():
    """A text session's tasks are the tenant's components, with its tuning (and version)."""
    tuning = TenantTuning(settings_version=3, components=("claims",))
    tasks = first_tasks(session(tuning=tuning, components=("claims",)), None)
    assert [(t.component, t.settings_version) for t in tasks] == [("claims", 3)]
    assert [t.component for t in first_tasks(session(), None)] == list(ANALYSIS_COMPONENTS)


def test_a_media_session_fails_only_the_tenant_s_components():
    """A media task that fails for good reports a failure for each component the session
    runs, with the settings version it ran with."""
    tuning = TenantTuning(settings_version=2, components=("domain", "claims"))
    [media] = first_tasks(session("image", tuning, ("claims", "domain")), None)
    failed = failure_results(media, "unreadable", 1, "w")
    assert [(r.component, r.settings_version) for r in failed] == [("domain", 2), ("claims", 2)]


def test_the_tenant_settings_of_a_task_are_covered_by_its_signature():
    """Changing a signed task's settings (version, components, lists) breaks its signature;
    a follow-up must keep its media task's settings and one of its components."""
    keys = TaskKeys(public_task_key(PUBLIC), public_task_key(MEDIA_PUBLIC))
    tuning = TenantTuning(settings_version=1, components=("claims",), blocked_hosts=("a.ro",))
    signed = sign_task(private_task_key(PRIVATE), task(tenant=tuning))
    assert task_is_authentic(keys, decode_task(encode(signed)))
    for forged in (
        tuning.model_copy(update={"settings_version": 2}),
        tuning.model_copy(update={"blocked_hosts": ()}),
        None,
    ):
        assert not task_is_authentic(
            keys, decode_task(encode(signed.model_copy(update={"tenant": forged})))
        )
    media = sign_task(
        private_task_key(PRIVATE),
        task(
            component="media_preprocess",
            input=TaskInput(media_path="a.png", input_type="image"),
            tenant=tuning,
        ),
    )

    def follow_up(component, tenant):
        derived = media.model_copy(
            update={
                "component": component,
                "signature": None,
                "origin": origin_of(media),
                "tenant": tenant,
            }
        )
        return decode_task(encode(sign_task(private_task_key(MEDIA_PRIVATE), derived)))

    assert task_is_authentic(keys, follow_up("claims", tuning))
    assert not task_is_authentic(keys, follow_up("domain", tuning))  # not the tenant's
    assert not task_is_authentic(keys, follow_up("claims", None))  # settings dropped


def row(policy, results):
    return {
        "session_id": SID,
        "tenant": "acme",
        "plan": 3,
        "status": "processing",
        "components": list(results),
        "results": results,
        "fresh": True,
        "policy": policy,
    }


def test_the_aggregator_finalizes_with_the_session_s_weights_and_review_rules():
    """The policy kept with the session decides its verdict and its review, over the
    deployment's; a session without one gets the deployment's."""
    results = {
        "techniques": {"status": "ok", "score": 90.0, "data": {}},
        "domain": {"status": "ok", "score": 10.0, "data": {}},
    }
    deployment = {"techniques": 1.0, "domain": 1.0}
    policy = {"verdict_weights": {"techniques": 0.0}, "review": {"confidence_below": 1.0}}

    def explain(verdict, results):
        return {}

    [own] = _settle([row(policy, results)], deployment, explain, NO_REVIEW)
    [plain] = _settle([row(None, results)], deployment, explain, NO_REVIEW)
    outcomes = {c: ComponentOutcome("ok", r["score"]) for c, r in results.items()}
    assert own.verdict == compute(outcomes, {"techniques": 0.0, "domain": 1.0})
    assert plain.verdict == compute(outcomes, deployment)
    assert own.verdict.score < plain.verdict.score
    assert own.review == ("low_confidence",) and plain.review == ()


def test_only_the_tenant_s_components_need_an_online_worker():
    """A tenant running claims alone is served while only claims workers are online."""
    claims = WorkerRecord("w", "h", 1, ("claims",), ("text", "url"), "1", 1, 0.0, status="online")
    assert unserved([claims], "text", ("claims",)) is None
    assert unserved([claims], "text") == "no techniques worker is online"
