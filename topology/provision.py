"""Provision a deployment's vhost, users and permissions through the management API, check
them for drift, and write them into a definitions document.

Every call is idempotent (HTTP PUT of the whole object). Creating users and reading their
permissions takes an administrator: the operator's own credentials, used for this and
nothing else; no process of the pipeline holds them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote, unquote, urlsplit, urlunsplit

import httpx

from shared.errors import ManagementUnreachable, TopologyError
from shared.settings import is_placeholder
from topology.access import Role, password_hash


def vhost_of(amqp_url: str) -> str:
    """The vhost an AMQP URL names (`/` when it names none)."""
    path = urlsplit(amqp_url).path
    return unquote(path[1:]) if len(path) > 1 else "/"


def with_credentials(amqp_url: str, user: str, password: str) -> str:
    """`amqp_url` with its user and password replaced."""
    parts = urlsplit(amqp_url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{quote(user, safe='')}:{quote(password, safe='')}@{host}"
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit(parts._replace(netloc=netloc))


def missing_passwords(roles: Sequence[Role], passwords: Mapping[str, str]) -> list[str]:
    """Roles that have no password to provision them with (or only a placeholder)."""
    return [r.role for r in roles if not passwords.get(r.role) or is_placeholder(passwords[r.role])]


def password_variable(role: str) -> str:
    """Environment variable holding a role's password: `worker-claims` →
    `RABBITMQ_PASSWORD_WORKER_CLAIMS`."""
    return "RABBITMQ_PASSWORD_" + role.upper().replace("-", "_")


def passwords_from(environ: Mapping[str, str], roles: Sequence[Role]) -> dict[str, str]:
    """Each role's password from the environment (roles without one are left out)."""
    found = {r.role: environ.get(password_variable(r.role), "") for r in roles}
    return {role: password for role, password in found.items() if password}


class Management:
    """The few management API calls provisioning needs, as an administrator."""

    def __init__(self, base: str, auth: tuple[str, str]) -> None:
        self._http = httpx.AsyncClient(base_url=f"{base}/api", auth=auth, timeout=10)

    async def __aenter__(self) -> Management:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._http.aclose()

    async def put(self, path: str, body: Mapping[str, Any]) -> None:
        response = await self._call("PUT", path, body)
        if response.status_code not in (200, 201, 204):
            raise TopologyError(f"PUT {path}: {response.status_code} {response.text[:200]}")

    async def get(self, path: str) -> Any | None:
        """The document at `path`, or None when it does not exist."""
        response = await self._call("GET", path)
        if response.status_code == 404:
            return None
        if response.status_code != 200:
            raise TopologyError(f"GET {path}: {response.status_code} {response.text[:200]}")
        return response.json()

    async def delete(self, path: str) -> None:
        response = await self._call("DELETE", path)
        if response.status_code not in (200, 204, 404):
            raise TopologyError(f"DELETE {path}: {response.status_code} {response.text[:200]}")

    async def _call(
        self, method: str, path: str, body: Mapping[str, Any] | None = None
    ) -> httpx.Response:
        try:
            return await self._http.request(method, path, json=body)
        except httpx.HTTPError as exc:
            raise ManagementUnreachable(f"management API unreachable: {exc}") from exc


def _q(name: str) -> str:
    return quote(name, safe="")


async def provision(
    api: Management, vhost: str, roles: Sequence[Role], passwords: Mapping[str, str]
) -> None:
    """Create the vhost, and each role's user with its tags, permissions and topic permission."""
    missing = missing_passwords(roles, passwords)
    if missing:
        raise TopologyError(f"no password for roles {missing}")
    v = _q(vhost)
    await api.put(f"/vhosts/{v}", {})
    for role in roles:
        user = _q(role.user)
        await api.put(f"/users/{user}", {"password": passwords[role.role], "tags": _tags(role)})
        await api.put(f"/permissions/{v}/{user}", _permission(role))
        await api.delete(f"/topic-permissions/{v}/{user}")
        if role.topic:
            await api.put(f"/topic-permissions/{v}/{user}", _topic(role))


async def access_drift(api: Management, vhost: str, roles: Sequence[Role]) -> list[str]:
    """Differences between the roles and the users and permissions on the broker."""
    v = _q(vhost)
    if await api.get(f"/vhosts/{v}") is None:
        return [f"vhost {vhost}: missing"]
    drift = []
    for role in roles:
        user = await api.get(f"/users/{_q(role.user)}")
        if user is None:
            drift.append(f"user {role.user}: missing")
            continue
        if sorted(_tag_list(user.get("tags"))) != sorted(role.tags):
            drift.append(f"user {role.user}: tags {user.get('tags')}, want {list(role.tags)}")
        drift += await _permission_drift(api, v, role)
    return drift


async def _permission_drift(api: Management, v: str, role: Role) -> list[str]:
    drift = []
    want = _permission(role)
    got = await api.get(f"/permissions/{v}/{_q(role.user)}")
    got_perm = {k: (got or {}).get(k) for k in want}
    if got_perm != want:
        drift.append(f"permissions of {role.user}: {got_perm}, want {want}")
    topics = await api.get(f"/topic-permissions/{v}/{_q(role.user)}") or []
    got_topics = [{k: t.get(k) for k in ("exchange", "write", "read")} for t in topics]
    want_topics = [_topic(role)] if role.topic else []
    if got_topics != want_topics:
        drift.append(f"topic permissions of {role.user}: {got_topics}, want {want_topics}")
    return drift


def _tags(role: Role) -> str:
    return ",".join(role.tags)


def _tag_list(tags: Any) -> list[str]:
    """Tags as the API returns them: a list (3.11+) or a comma-separated string (3.10)."""
    if isinstance(tags, list):
        return [str(t) for t in tags if t]
    return [t for t in str(tags or "").split(",") if t]


def _permission(role: Role) -> dict[str, str]:
    return {"configure": role.configure, "write": role.write, "read": role.read}


def _topic(role: Role) -> dict[str, str]:
    assert role.topic is not None
    return {"exchange": role.topic.exchange, "write": role.topic.write, "read": role.topic.read}


def access_definitions(
    vhost: str, roles: Sequence[Role], passwords: Mapping[str, str]
) -> dict[str, Any]:
    """The vhost, users (password hashes, never passwords), permissions and topic permissions
    as a definitions document's sections."""
    missing = missing_passwords(roles, passwords)
    if missing:
        raise TopologyError(f"no password for roles {missing}")
    return {
        "vhosts": [{"name": vhost}],
        "users": [
            {
                "name": r.user,
                "password_hash": password_hash(passwords[r.role]),
                "hashing_algorithm": "rabbit_password_hashing_sha256",
                "tags": _tags(r),
            }
            for r in roles
        ],
        "permissions": [{"user": r.user, "vhost": vhost, **_permission(r)} for r in roles],
        "topic_permissions": [
            {"user": r.user, "vhost": vhost, **_topic(r)} for r in roles if r.topic
        ],
    }
