"""compose.yaml gives each service only its role's credentials, binds every port to loopback
and keeps secrets off command lines. Checked on the file as written (before interpolation)."""

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from ops.supervisor import plan_from_document
from shared.constants import ANALYSIS_COMPONENTS

COMPOSE = yaml.safe_load((Path(__file__).resolve().parents[2] / "compose.yaml").read_text())
SERVICES: dict[str, dict[str, Any]] = COMPOSE["services"]
WORKERS = {
    "worker-media-preprocess": "media_preprocess",
    **{f"worker-{c.replace('_', '-')}": c for c in ANALYSIS_COMPONENTS},
}

# The optional three-node cluster (profile `cluster`): brokers, created with the administrator.
CLUSTER_NODES = ("rabbitmq-1", "rabbitmq-2", "rabbitmq-3")


def env(service: str) -> dict[str, str]:
    return {k: str(v) for k, v in (SERVICES[service].get("environment") or {}).items()}


def services_mentioning(variable: str) -> set[str]:
    """Services whose environment interpolates `${variable…}` anywhere."""
    pattern = re.compile(r"\$\{" + variable + r"\b")
    return {name for name in SERVICES if any(pattern.search(v) for v in env(name).values())}


def test_every_published_port_is_bound_to_loopback():
    """The management UI included: nothing listens on all interfaces of the host."""
    ports = [p for spec in SERVICES.values() for p in spec.get("ports") or []]
    assert ports and all(str(p).startswith("127.0.0.1:") for p in ports)


def test_no_secret_on_a_command_line():
    """Passwords and keys reach processes through the environment (or an ACL file)."""
    for name, spec in SERVICES.items():
        command = " ".join(map(str, spec.get("command") or []))
        assert "PASSWORD" not in command and "KEY" not in command, name


@pytest.mark.parametrize(
    ("variable", "holders"),
    [
        ("DEPLOY_API_KEYS", {"api"}),
        ("ADMIN_SESSION_KEY", {"api"}),
        ("TASK_SIGNING_KEY", {"api"}),
        ("EVENTS_TOKEN_KEY", {"api"}),
        ("MEDIA_SIGNING_KEY", {"worker-media-preprocess"}),
        ("MEDIA_VERIFY_KEY", set(WORKERS) - {"worker-media-preprocess"}),
        ("TASK_VERIFY_KEY", set(WORKERS)),
        ("RABBITMQ_ADMIN_PASSWORD", {"rabbitmq", *CLUSTER_NODES, "broker-access"}),
        ("RABBITMQ_ERLANG_COOKIE", set(CLUSTER_NODES)),
        ("POSTGRES_ADMIN_PASSWORD", {"postgres", "db-access", "db-grants"}),
        ("POSTGRES_OWNER_PASSWORD", {"db-access", "db-grants", "migrate"}),
        ("POSTGRES_WORKER_PASSWORD", {"db-access", "db-grants", *WORKERS}),
        ("RABBITMQ_PASSWORD_API", {"broker-access", "api"}),
        ("RABBITMQ_PASSWORD_AGGREGATOR", {"broker-access", "aggregator"}),
        ("RABBITMQ_PASSWORD_OPERATOR", {"broker-access", "api"}),
        ("REDIS_PASSWORD_AGGREGATOR", {"redis-acl", "aggregator"}),
        ("REDIS_PASSWORD_WORKER_CLAIMS", {"redis-acl", "worker-claims"}),
    ],
)
def test_each_secret_reaches_only_the_services_of_its_role(variable, holders):
    """API keys to the API; signing keys to their signers; administrators' passwords to the
    jobs that provision; each role's password to its provisioning job and its own service."""
    assert services_mentioning(variable) == holders


@pytest.mark.parametrize("service", sorted(WORKERS))
def test_a_worker_holds_its_own_component_s_credentials_only(service):
    """Its own RabbitMQ user and result key; no other component's."""
    component = WORKERS[service]
    variables = env(service)
    assert f"-worker-{component}:" in variables["AMQP_URL"]
    assert f"-worker-{component}:" in variables["REDIS_URL"]
    assert re.findall(r'"([a-z_]+)":', variables["RESULT_KEYS"]) == [component]
    others = {c for c in WORKERS.values() if c != component}
    assert not any(c.upper() in " ".join(variables.values()) for c in others)


def test_application_services_use_their_database_roles():
    """Never the superuser; the owner only where migrations run; workers the worker role."""
    app_services = [
        n
        for n, s in SERVICES.items()
        if str(s.get("restart")) != "no"
        and n not in {"rabbitmq", "redis", "postgres", *CLUSTER_NODES}
    ]
    assert app_services
    for name in app_services:
        role = "_worker:" if name in WORKERS else "_app:"
        assert role in env(name)["DATABASE_URL"], name


def test_verdict_up_leaves_the_provisioning_jobs_out():
    """A development machine's `verdict up` runs migrations, fact checks and the topology
    declaration, not the jobs that create roles with administrators' credentials."""
    plan = plan_from_document(COMPOSE)
    assert [s.name for s in plan.one_shots] == ["migrate", "factchecks", "topology"]
    assert not {s.name for s in plan.services} & set(CLUSTER_NODES)


def test_the_cluster_nodes_run_only_in_their_profile():
    """A plain `docker compose up` starts one broker; the three nodes only with
    `--profile cluster`, all of them naming the same peers."""
    assert all(SERVICES[n]["profiles"] == ["cluster"] for n in CLUSTER_NODES)
    assert "profiles" not in SERVICES["rabbitmq"]
    peers = {env(n)["RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS"] for n in CLUSTER_NODES}
    assert len(peers) == 1
    assert all(f"rabbit@{n}" in next(iter(peers)) for n in CLUSTER_NODES)


def test_the_example_environment_shares_no_real_secret_with_a_deployment():
    """What compose reads from a copied .env.example is a `change-me` placeholder (refused by
    every process), never the development keys of the local section."""
    example = (Path(__file__).resolve().parents[2] / ".env.example").read_text()
    values = dict(
        line.split("=", 1)
        for line in example.splitlines()
        if "=" in line and not line.startswith("#")
    )
    used = {
        m
        for spec in SERVICES.values()
        for v in (spec.get("environment") or {}).values()
        for m in re.findall(r"\$\{([A-Z0-9_]+)", str(v))
    }
    secrets = {name for name in used if re.search("PASSWORD|KEY", name)}
    assert secrets and all(values.get(name, "").startswith("change-me") for name in secrets)
