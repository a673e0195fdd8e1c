"""Redis ACL users, one per role, each limited to the deployment's keys and the commands its
code runs (Lua scripts included: Redis checks the commands and keys a script calls against
the user that runs it).

    role        keys (R read, W write)                          channels
    api         RW session state, RW rate-limit counters        events (subscribe), urgent
    worker      RW locks, RW media text cache, RW heartbeats    urgent (subscribe)
    aggregator  RW session state, RW heartbeats                 events (publish), urgent

No role may run administrative or dangerous commands (FLUSHALL, CONFIG, KEYS, ACL, DEBUG…),
touch another deployment's keys, or read what it does not use: a worker cannot read a
session's state, the API cannot take or break a lock.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from shared.keys import Keys

# What a redis-py client sends on its own: connection set-up, health checks, pub/sub (its
# CLIENT SETINFO, new in Redis 7.2, is left out: redis-py ignores a refusal).
CLIENT = (
    "+ping",
    "+hello",
    "+auth",
    "+select",
    "+client|setname",
    "+subscribe",
    "+unsubscribe",
)
# Scripts run by SHA and loaded once per connection (shared/lua.py, the `limits` library).
SCRIPTS = ("+evalsha", "+eval", "+script|load", "+script|exists")


@dataclass(frozen=True)
class RedisRole:
    """One ACL user: its name and its rules (without the password)."""

    role: str
    user: str
    rules: tuple[str, ...]


def redis_roles(keys: Keys) -> tuple[RedisRole, ...]:
    """The three roles of a deployment under `keys.prefix`."""
    p = keys.prefix
    state, events = keys.session_state("*"), keys.session_events("*")
    api = (
        *("+get", "+set", "+del", "+incr", "+incrby", "+expire", "+ttl", "+publish"),
        f"%RW~{state}",
        f"%RW~{events}",  # the live-state script names the channel among its keys
        f"%RW~{keys.rate_limits}*",
        f"&{events}",
        f"&{keys.urgent}",
    )
    worker = (
        *("+get", "+mget", "+set", "+del", "+pexpire", "+scan"),
        f"%RW~{keys.lock('*', '*')}",
        f"%RW~{keys.media_text('*')}",
        f"%RW~{keys.workers}",
        f"&{keys.urgent}",
    )
    aggregator = (
        *("+get", "+mget", "+set", "+del", "+publish", "+scan"),
        f"%RW~{state}",
        f"%RW~{events}",
        f"%RW~{keys.workers}",
        f"&{events}",
        f"&{keys.urgent}",
    )
    return tuple(
        RedisRole(role, f"{p}-{role}", ("-@all", *CLIENT, *SCRIPTS, *rules))
        for role, rules in (("api", api), ("worker", worker), ("aggregator", aggregator))
    )


def setuser_arguments(role: RedisRole, password: str) -> list[str]:
    """`ACL SETUSER` arguments that make the user exactly this role with this password."""
    return [role.user, "reset", "on", f">{password}", *role.rules]


def acl_file_line(role: RedisRole, password: str) -> str:
    """The role as a line of an ACL file (`aclfile`): the password as its SHA-256, never plain."""
    digest = hashlib.sha256(password.encode()).hexdigest()
    return " ".join(["user", role.user, "on", f"#{digest}", *role.rules])


def password_variable(role: str) -> str:
    """Environment variable holding a Redis role's password: `api` → `REDIS_PASSWORD_API`."""
    return f"REDIS_PASSWORD_{role.upper()}"
