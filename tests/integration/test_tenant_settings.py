"""Settings per tenant through the whole pipeline: set with `verdict tenants`, read by the API
from its cache, carried by tasks, applied by workers and the aggregator — for that tenant only."""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
from collections.abc import AsyncIterator

import httpx
import pytest

from aggregator.service import Aggregator
from aggregator.verdict import compute, outcome_of
from dispatcher.app import create_app
from shared import sessions
from shared.api_keys import hashed
from shared.constants import ANALYSIS_COMPONENTS
from shared.tenant_settings import weights_for
from tests import services as svc
from tests.cli import verdict
from tests.integration.conftest import eventually, on_both_transports, running
from workers.runtime import Worker, WorkerOptions

pytestmark = pytest.mark.integration

API = "/api/v3/pipeline"
TEXT = "Beware the zorblax, the zorblax is here: read https://evil-site.example/offer today."
# What tenant A sets; tenant B sets nothing.
SETTINGS_A = [
    "components=techniques,domain",
    "verdict_weights.techniques=0",
    "review.confidence_below=1",
    "lexicon_terms.fear_appeal=zorblax",
    "blocked_hosts=evil-site.example",
]


def explain(verdict, results):
    return {"en": verdict.label, "ro": verdict.label}


@pytest.fixture
async def tenants(world, pool):
    """A world whose keys belong to two tenants of this test alone (the database is shared),
    with a TTL so long that only a NOTIFY can make the API see a change."""
    a, b = svc.unique("acme"), svc.unique("other")
    keys = {"key-a": {"tenant": a, "plan": 5}, "key-b": {"tenant": b, "plan": 5}}
    settings = await world(api_keys=hashed(keys), tenant_settings_ttl_s=3600)
    yield settings, a, b
    await pool.execute("DELETE FROM tenant_settings WHERE tenant = ANY($1)", [a, b])


@contextlib.asynccontextmanager
async def api_of(settings) -> AsyncIterator[tuple[httpx.AsyncClient, object]]:
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        state = app.state.pipeline
        await eventually(lambda: _value(state.publisher is not None), 10)
        # The settings listener in place: its first act forgets what the cache holds, which
        # would cost a read the tests count.
        await asyncio.wait_for(state.tenant_settings.listening.wait(), 10)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
            yield client, state


async def _value(value):
    return value


async def submit(api, key: str) -> str:
    response = await api.post(
        f"{API}/analyze-async", json={"content": TEXT}, headers={"X-API-Key": key}
    )
    assert response.status_code == 202, response.text
    return response.json()["session_id"]


async def final(pool, sid):
    async def done():
        view = await sessions.load(pool, sid)
        return view if view and view.final else None

    return await eventually(done, 60)


def set_settings(settings, tenant, *values):
    secret = settings.admin_session_key  # dumped masked: given as it is
    extra = {"ADMIN_SESSION_KEY": secret.get_secret_value()} if secret else {}
    run = verdict(settings, "tenants", "set", tenant, *values, **extra)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


@on_both_transports
async def test_a_tenant_s_settings_change_what_runs_and_the_verdict_for_that_tenant_only(
    tenants, pool
):
    """Tenant A's session runs only its two components, with its extra term and blocked host,
    its verdict weights and review rule, and records the settings version in the session and
    each result; tenant B's identical session runs as the deployment is configured. A later
    change reaches the API at once (NOTIFY) though its cache would keep settings an hour,
    and eleven submissions of two tenants cost one read of each one's settings."""
    settings, a, _ = tenants
    first = set_settings(settings, a, *SETTINGS_A)
    assert first["version"] == 1
    workers = [Worker(settings, WorkerOptions(c, 2, 2)).run for c in ANALYSIS_COMPONENTS]
    async with (
        running(*workers, Aggregator(settings, explain=explain).run),
        api_of(settings) as (api, state),
    ):
        sid_a, sid_b = await submit(api, "key-a"), await submit(api, "key-b")
        view_a, view_b = await final(pool, sid_a), await final(pool, sid_b)
        for _ in range(8):
            await submit(api, "key-a")
        reads_before_change = state.tenant_settings.reads
        second = set_settings(settings, a, "components=techniques,domain,claims")
        sid_changed = await eventually(lambda: _three_components(api, pool), 10)
    # What ran, and with which version.
    assert view_a.components == ("techniques", "domain") and set(view_a.results) == {
        "techniques",
        "domain",
    }
    assert view_b.components == ANALYSIS_COMPONENTS
    versions = await _versions(pool, sid_a)
    assert versions == {"session": 1, "techniques": 1, "domain": 1}
    assert set((await _versions(pool, sid_b)).values()) == {None}
    # How it was analysed: A's term and blocked host count for A only.
    sources = {f["source"] for f in view_a.results["techniques"]["data"]["findings"]}
    assert "tenant" in sources
    assert all(f["source"] != "tenant" for f in view_b.results["techniques"]["data"]["findings"])
    assert view_a.results["domain"]["score"] == 90 and view_b.results["domain"]["score"] < 90
    # How the verdict was computed: A's weights (techniques counts for nothing), B's defaults.
    outcomes_a = {c: outcome_of(r) for c, r in view_a.results.items()}
    tenant_weights = weights_for({"verdict_weights": {"techniques": 0}}, settings.verdict_weights)
    assert view_a.verdict["score"] == pytest.approx(
        compute(outcomes_a, tenant_weights).score, abs=0.01
    )
    assert view_a.verdict["score"] != pytest.approx(
        compute(outcomes_a, settings.verdict_weights).score, abs=0.01
    )
    # A's review rule queues its verdict; B has none (the deployment's review is off).
    assert view_a.review is not None and view_b.review is None
    # The change: version 2, seen at once, for one more read.
    assert second["version"] == 2
    assert reads_before_change == 2  # one per tenant, for eleven submissions
    assert (await _versions(pool, sid_changed))["session"] == 2


async def _three_components(api, pool):
    sid = await submit(api, "key-a")
    view = await sessions.load(pool, sid)
    return sid if len(view.components) == 3 else None


async def _versions(pool, sid) -> dict[str, int | None]:
    session = await pool.fetchval("SELECT settings_version FROM sessions WHERE id = $1::uuid", sid)
    rows = await pool.fetch(
        "SELECT component, settings_version FROM component_results WHERE session_id = $1::uuid",
        sid,
    )
    return {"session": session, **{r["component"]: r["settings_version"] for r in rows}}


@on_both_transports
async def test_a_tenant_s_own_rate_limit_refuses_it_at_its_limit_and_not_another_tenant(
    world, pool
):
    """Two tenants on the same plan (6 a minute): the one whose settings say 2 a minute gets
    429 with Retry-After and RateLimit-* at its third submission, and no session for it; the
    other submits four times, all accepted, under its plan's limit."""
    low, plain = svc.unique("slow"), svc.unique("plain")
    keys = {"key-low": {"tenant": low, "plan": 1}, "key-plain": {"tenant": plain, "plan": 1}}
    settings = await world(api_keys=hashed(keys), rate_limits_by_plan={1: "6/minute"})
    try:
        set_settings(settings, low, "rate_limit=2/minute")
        async with api_of(settings) as (api, _):
            lows = [await _post(api, "key-low") for _ in range(3)]
            plains = [await _post(api, "key-plain") for _ in range(4)]
        counted = await pool.fetch(
            "SELECT tenant, count(*) AS n FROM sessions WHERE tenant = ANY($1) GROUP BY tenant",
            [low, plain],
        )
    finally:
        await pool.execute("DELETE FROM tenant_settings WHERE tenant = $1", low)
    assert [r.status_code for r in lows] == [202, 202, 429]
    refused = lows[2]
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    assert refused.headers["RateLimit-Limit"] == "2"
    assert refused.headers["RateLimit-Policy"] == "2;w=60"
    assert "rate limit" in refused.json()["detail"]
    assert [r.status_code for r in plains] == [202] * 4
    assert plains[0].headers["RateLimit-Limit"] == "6"
    assert {r["tenant"]: r["n"] for r in counted} == {low: 2, plain: 4}


async def _post(api, key: str) -> httpx.Response:
    return await api.post(
        f"{API}/analyze-async", json={"content": "hi"}, headers={"X-API-Key": key}
    )


LOOKALIKE_TEXT = (
    "Your account is locked: sign in at https://acmebnak.ro/login or pay the fee at "
    "https://evil-site.example/pay today."
)


@on_both_transports
async def test_a_tenant_s_brands_and_blocked_hosts_flag_its_sessions_only(tenants, pool):
    """Through the domain worker's executor: tenant A's session of a text with a lookalike of
    A's own brand and a host A blocked has both flagged (score 90, the lookalike imitating
    A's domain); tenant B's session of the same text flags neither."""
    settings, a, _ = tenants
    set_settings(
        settings,
        a,
        "components=domain",
        "protected_brands=acmebank.ro",
        "blocked_hosts=evil-site.example",
    )
    worker = Worker(settings, WorkerOptions("domain", 2, 2)).run
    others = [Worker(settings, WorkerOptions(c, 1, 1)).run for c in ANALYSIS_COMPONENTS[:-1]]
    async with (
        running(worker, *others, Aggregator(settings, explain=explain).run),
        api_of(settings) as (api, _),
    ):
        sids = []
        for key in ("key-a", "key-b"):
            posted = await api.post(
                f"{API}/analyze-async", json={"content": LOOKALIKE_TEXT}, headers={"X-API-Key": key}
            )
            assert posted.status_code == 202, posted.text
            sids.append(posted.json()["session_id"])
        view_a, view_b = await final(pool, sids[0]), await final(pool, sids[1])
    reasons_a = _reasons(view_a.results["domain"])
    reasons_b = _reasons(view_b.results["domain"])
    assert view_a.results["domain"]["score"] == 90
    assert any("imitates acmebank.ro" in r for r in reasons_a["acmebnak.ro"])
    assert reasons_a["evil-site.example"] == ["listed as blocked-by-tenant (evil-site.example)"]
    assert view_b.results["domain"]["score"] < 90
    assert all("acmebank" not in r for r in reasons_b.get("acmebnak.ro", []))
    assert all("blocked" not in r for r in reasons_b.get("evil-site.example", []))


def _reasons(result) -> dict[str, list[str]]:
    return {h["ascii"]: h["reasons"] for h in result["data"]["hosts"]}


async def test_the_tenants_command_lists_shows_unsets_and_refuses_in_words(tenants):
    """`verdict tenants` round trip: set bumps the version, show and list tell it, unset
    returns a value to the deployment's, and a bad value or unknown tenant is exit 1 with
    a message naming the problem (nothing stored)."""
    settings, a, _ = tenants
    set_settings(settings, a, "rate_limit=5/second", "protected_brands=acmebank.ro")
    shown = json.loads(verdict(settings, "tenants", "show", a).stdout)
    assert shown["version"] == 1 and shown["settings"]["rate_limit"] == "5/second"
    unset = verdict(settings, "tenants", "unset", a, "rate_limit")
    assert json.loads(unset.stdout)["version"] == 2
    assert "rate_limit" not in json.loads(unset.stdout)["settings"]
    listed = verdict(settings, "tenants", "list")
    assert any(line.startswith(f"{a}\tversion 2") for line in listed.stdout.splitlines())
    for args, says in [
        (("set", a, "verdict_weights.claims=99"), "weights are numbers from 0 to 10"),
        (("set", a, "lexicon_terms.feer=x"), "unknown technique 'feer'"),
        (("set", a, "components"), "write KEY=VALUE"),
        (("unset", a, "review.plans"), "not set for this tenant"),
        (("show", svc.unique("nobody")), "has no settings of its own"),
        (("set", a, "lexicon_terms.fear_appeal=(a+)+$"), "a term is words of letters"),
        (("set", a, "rate_limit=5/year"), "a window is at most a day long"),
        (("set", a, "protected_brands=" + ",".join(f"b{i}.ro" for i in range(51))), "at most 50"),
        (
            ("set", a, "blocked_hosts=" + ",".join(f"{'h' * 60}{i}.ro" for i in range(200))),
            "bytes in each task; at most 12288",
        ),
    ]:
        run = verdict(settings, "tenants", *args)
        assert run.returncode == 1 and says in run.stderr, (args, run.stderr)
    assert json.loads(verdict(settings, "tenants", "show", a).stdout)["version"] == 2
    assert "warning" not in verdict(settings, "tenants", "set", a, "rate_limit=6/second").stderr


async def test_setting_a_tenant_no_api_key_belongs_to_is_stored_with_a_warning(tenants, pool):
    """A tenant name no key of API_KEYS has (a typo, say) is stored, exit 0, and the
    command says so on stderr."""
    settings, a, _ = tenants
    typo = a + "x"
    try:
        run = verdict(settings, "tenants", "set", typo, "rate_limit=5/second")
        assert run.returncode == 0, run.stderr
        assert f"no API key in API_KEYS belongs to tenant '{typo}'" in run.stderr
        assert json.loads(run.stdout)["version"] == 1
    finally:
        await pool.execute("DELETE FROM tenant_settings WHERE tenant = $1", typo)


async def test_the_console_shows_each_tenant_s_settings_read_only_and_escaped(world, pool):
    """/admin/tenants lists a tenant with its version and settings, a tenant named with markup
    shown as text (settings themselves cannot hold markup: terms are words); without signing
    in it is a redirect to the sign-in page."""
    from tests.integration.test_console import browser, console_world, sign_in

    settings = await console_world(world)
    tenant = svc.unique("shown") + "<b>boo</b>"
    try:
        set_settings(settings, tenant, "components=claims", "lexicon_terms.fear_appeal=boo")
        async with browser(settings) as client:
            anonymous = await client.get("/admin/tenants", follow_redirects=False)
            await sign_in(client)
            page = (await client.get("/admin/tenants")).text
    finally:
        await pool.execute("DELETE FROM tenant_settings WHERE tenant = $1", tenant)
    assert anonymous.status_code == 303
    row = page[page.index(f'id="tenant-{html.escape(tenant)}"') :].split("</tr>")[0]
    assert '<td class="num">1</td>' in row and "components" in row and "claims" in row
    assert "boo" in row and "<b>boo</b>" not in page
