"""Fixtures shared by integration and e2e tests: one isolated world per test run."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator

import pytest

from shared.api_keys import hashed
from shared.settings import Settings
from tests import services as svc

# Signing keys of this test run, the same for every process of it.
TEST_SIGNING = svc.signing_env()

TEST_API_KEYS = {
    "test-enterprise": {"tenant": "tenant-a", "plan": 6},
    "test-pro": {"tenant": "tenant-a", "plan": 4},
    "test-freemium": {"tenant": "tenant-b", "plan": 1},
}


@pytest.fixture(scope="session")
def services() -> Iterator[svc.Services]:
    """The real RabbitMQ, Redis and PostgreSQL of this run (fails, never skips, when absent)."""
    try:
        with svc.discover() as found:
            yield found
    except RuntimeError as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture(scope="session")
async def database_url(services: svc.Services) -> AsyncIterator[str]:
    """A fresh, migrated database for this run, dropped at the end."""
    from shared.db import migrate

    name = svc.unique("verdict_test_")
    url = await svc.create_database(services.database_admin_url, name)
    await migrate(url)
    yield url
    await svc.drop_database(services.database_admin_url, name)


@pytest.fixture(scope="session")
def run_prefix() -> str:
    """This run's topology prefix: isolates its queues on a shared broker."""
    return svc.unique("t")


def make_settings(
    services: svc.Services, database_url: str, prefix: str, **overrides: object
) -> Settings:
    """Settings for a test world; overrides shrink delays and limits as tests need."""
    values: dict[str, object] = {
        "amqp_url": services.amqp_url,
        "redis_url": services.redis_url,
        "database_url": database_url,
        "rabbitmq_management_url": services.management_url,
        "topology_prefix": prefix,
        "api_keys": hashed(TEST_API_KEYS),
        "task_signing_key": TEST_SIGNING["TASK_SIGNING_KEY"],
        "task_verify_key": TEST_SIGNING["TASK_VERIFY_KEY"],
        "media_signing_key": TEST_SIGNING["MEDIA_SIGNING_KEY"],
        "media_verify_key": TEST_SIGNING["MEDIA_VERIFY_KEY"],
        "result_keys": json.loads(TEST_SIGNING["RESULT_KEYS"]),
        "events_token_key": TEST_SIGNING["EVENTS_TOKEN_KEY"],
        "retry_base_ms": 200,
        "lock_retry_ms": 100,
        "janitor_interval_s": 0.5,
        "shutdown_grace_s": 5,
        "log_json": False,
        # Most worlds run no workers, or start them after the POST: the registry check is
        # turned on by the tests of it (tests/integration/test_worker_registry.py).
        "api_check_workers": False,
        # Their sessions stay processing in the run's shared database, which admission would
        # count against every later world: it is turned on by its own tests
        # (tests/integration/test_admission.py).
        "admission_limit": 0,
    }
    values.update(overrides)
    return Settings(**values)  # type: ignore[arg-type]
