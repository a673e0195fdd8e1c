"""A RabbitMQ node booted from `verdict topology export --access` has the deployment's vhost,
objects, users and permissions: each role logs in with its password and is held to its role."""

from __future__ import annotations

import json
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from rabbit_node import RabbitNode, free_node_port

from shared.names import Names
from tests import services as svc
from tests.cli import verdict
from tests.conftest import make_settings
from tests.integration.test_access_live import attempt, consume, publish, refused
from topology.access import password_hash, roles
from topology.provision import password_variable, with_credentials

pytestmark = pytest.mark.e2e


@pytest.fixture
def folder() -> Iterator[Path]:
    """A folder the broker (running as its own user) can read."""
    path = Path(tempfile.mkdtemp(prefix="verdict-defs-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.timeout(300)
async def test_a_node_booted_from_the_export_holds_every_role_to_its_permissions(
    services, database_url, folder
):
    """Objects exist, the API may publish a task but not read it, a worker may read its own
    queue but not another's: users (from password hashes) and permissions came from the file."""
    prefix, vhost, port = svc.unique("defs"), "verdict", free_node_port()
    base = f"amqp://guest:guest@127.0.0.1:{port}/{vhost}"
    settings = make_settings(services, database_url, prefix, amqp_url=base)
    all_roles = roles(Names(prefix), settings.retry_delays_ms())
    passwords = {r.role: secrets.token_urlsafe(12) for r in all_roles}
    env = {password_variable(role): pw for role, pw in passwords.items()}
    exported = verdict(settings, "topology", "export", "--access", **env)
    assert exported.returncode == 0, exported.stderr
    document = json.loads(exported.stdout)
    # The node's own administrator for the test's boot checks: not part of the export.
    document["vhosts"].append({"name": "/"})
    document["users"].append(
        {
            "name": "guest",
            "password_hash": password_hash("guest"),
            "hashing_algorithm": "rabbit_password_hashing_sha256",
            "tags": "administrator",
        }
    )
    document["permissions"].append(
        {"user": "guest", "vhost": "/", "configure": ".*", "write": ".*", "read": ".*"}
    )
    (folder / "definitions.json").write_text(json.dumps(document))
    (folder / "definitions.json").chmod(0o644)
    node = RabbitNode(f"vdefs{port}", port, definitions=str(folder / "definitions.json"))
    node.start()
    try:
        names = Names(prefix)

        def url(role: str) -> str:
            user = next(r.user for r in all_roles if r.role == role)
            return with_credentials(base, user, passwords[role])

        await attempt(url("api"), publish(names.exchange, names.task_queue("claims", 3)))
        await refused(url("api"), consume(names.task_queue("claims", 3)))
        await attempt(url("worker-claims"), consume(names.task_queue("claims", 3)))
        await refused(url("worker-claims"), consume(names.task_queue("domain", 3)))
        await attempt(url("aggregator"), consume(names.results))
    finally:
        node.stop()
