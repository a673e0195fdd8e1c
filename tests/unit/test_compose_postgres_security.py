"""compose.postgres.yaml (PostgreSQL alone) gives each service only its role's credentials:
every worker service its component's own database role, no broker or cache credential
anywhere, every published port on loopback, no secret on a command line. Checked on the
file as written (before interpolation)."""

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from shared.constants import ANALYSIS_COMPONENTS

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((ROOT / "compose.postgres.yaml").read_text())
SERVICES: dict[str, dict[str, Any]] = COMPOSE["services"]
WORKERS = {
    "worker-media-preprocess": "media_preprocess",
    **{f"worker-{c.replace('_', '-')}": c for c in ANALYSIS_COMPONENTS},
}
PROVISIONING = {"db-access", "db-grants"}


def env(service: str) -> dict[str, str]:
    return {k: str(v) for k, v in (SERVICES[service].get("environment") or {}).items()}


def services_mentioning(variable: str) -> set[str]:
    pattern = re.compile(r"\$\{" + variable + r"\b")
    return {name for name in SERVICES if any(pattern.search(v) for v in env(name).values())}


def test_the_same_application_services_as_compose_yaml_and_nothing_of_a_broker():
    """One service per component with compose.yaml's replica counts; no RabbitMQ, Redis or
    topology job, and no process given a broker or cache URL."""
    on_broker = yaml.safe_load((ROOT / "compose.yaml").read_text())["services"]
    replicas = {n: s["deploy"]["replicas"] for n, s in SERVICES.items() if "deploy" in s}
    assert replicas == {n: s["deploy"]["replicas"] for n, s in on_broker.items() if "deploy" in s}
    assert not set(SERVICES) & {"rabbitmq", "redis", "redis-acl", "topology", "broker-access"}
    for name in SERVICES:
        assert not {"AMQP_URL", "REDIS_URL", "OPERATOR_AMQP_URL"} & set(env(name)), name
    for name in replicas:
        assert env(name)["TRANSPORT"] == "postgres", name


def test_every_published_port_is_bound_to_loopback_and_no_secret_is_on_a_command_line():
    ports = [p for spec in SERVICES.values() for p in spec.get("ports") or []]
    assert ports and all(str(p).startswith("127.0.0.1:") for p in ports)
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
        ("TASK_VERIFY_KEY", set(WORKERS)),
        ("POSTGRES_ADMIN_PASSWORD", {"postgres", *PROVISIONING}),
        ("POSTGRES_OWNER_PASSWORD", {*PROVISIONING, "migrate"}),
        ("POSTGRES_APP_PASSWORD", {*PROVISIONING, "factchecks", "api", "aggregator"}),
        # The shared worker role exists (provisioning makes it) but no container uses it.
        ("POSTGRES_WORKER_PASSWORD", PROVISIONING),
        *[
            (f"POSTGRES_PASSWORD_WORKER_{component.upper()}", {*PROVISIONING, service})
            for service, component in WORKERS.items()
        ],
    ],
)
def test_each_secret_reaches_only_the_services_of_its_role(variable, holders):
    assert services_mentioning(variable) == holders


@pytest.mark.parametrize("service", sorted(WORKERS))
def test_a_worker_connects_as_its_own_component_s_role_with_its_own_result_key(service):
    component = WORKERS[service]
    variables = env(service)
    assert (
        f"_worker_{component}:${{POSTGRES_PASSWORD_WORKER_{component.upper()}:"
        in (variables["DATABASE_URL"])
    )
    assert re.findall(r'"([a-z_]+)":', variables["RESULT_KEYS"]) == [component]
    others = {c for c in WORKERS.values() if c != component}
    assert not any(c.upper() in " ".join(variables.values()) for c in others)


def test_provisioning_names_a_role_for_every_component():
    named = re.findall(r'"([a-z_]+)":', env("db-access")["POSTGRES_COMPONENT_PASSWORDS"])
    assert sorted(named) == sorted(WORKERS.values())


def test_the_example_environment_has_a_placeholder_for_every_secret():
    example = (ROOT / ".env.example").read_text()
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
