"""Redis ACL users, one per role, each limited to the deployment's keys and the commands its
code runs (Lua scripts included: Redis checks the commands and keys a script calls against
the user that runs it).

    role                keys (R read, W write)                       channels
    api                 RW session state, rate-limit counters,        events, urgent
                        media text (analysis while the broker is down),
                        console sign-outs;
                        R worker records (the registry), every component's
                        attempts (the console)
    worker-{component}  RW its own component's locks, heartbeats;     urgent (subscribe)
                        W its own component's attempts;
                        media workers also the media text cache
    aggregator          RW session state, heartbeats                  events, urgent

No role may run administrative or dangerous commands (FLUSHALL, CONFIG, KEYS, ACL, DEBUG…),
touch another deployment's keys, or what it does not use: a worker cannot read a session's
state, take another component's lock or plant a media text; the API cannot take a lock.
No role may SCAN either (it is not limited by key patterns, so it would show every key name):
the worker registry is read from its index (`Keys.worker_directory`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from shared.constants import MEDIA_PREPROCESS, QUEUE_COMPONENTS
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
    """The roles of a deployment under `keys.prefix`: the API, a worker role per component,
    the aggregator."""
    state, events = keys.session_state("*"), keys.session_events("*")
    api = (
        *("+get", "+set", "+del", "+incr", "+incrby", "+expire", "+ttl", "+publish"),
        *("+mget", "+zrangebyscore", "+lrange"),
        f"%RW~{state}",
        f"%RW~{events}",  # the live-state script names the channel among its keys
        f"%RW~{keys.rate_limits}*",
        f"%RW~{keys.media_text('*')}",
        f"%RW~{keys.console_signed_out('*')}",
        f"%R~{keys.workers}",
        f"%R~{keys.attempts('*', '*')}",
        f"&{events}",
        f"&{keys.urgent}",
    )
    aggregator = (
        *("+get", "+mget", "+set", "+del", "+publish"),
        *("+zadd", "+zrangebyscore", "+zremrangebyscore", "+pexpire"),
        f"%RW~{state}",
        f"%RW~{events}",
        f"%RW~{keys.workers}",
        f"&{events}",
        f"&{keys.urgent}",
    )
    rules = {"api": api, **{f"worker-{c}": _worker(keys, c) for c in QUEUE_COMPONENTS}}
    rules["aggregator"] = aggregator
    return tuple(
        RedisRole(role, f"{keys.prefix}-{role}", ("-@all", *CLIENT, *SCRIPTS, *granted))
        for role, granted in rules.items()
    )


def _worker(keys: Keys, component: str) -> tuple[str, ...]:
    media = (f"%RW~{keys.media_text('*')}",) if component == MEDIA_PREPROCESS else ()
    return (
        *("+get", "+mget", "+set", "+del", "+pexpire", "+rpush", "+ltrim"),
        *("+zadd", "+zrangebyscore", "+zremrangebyscore"),
        f"%RW~{keys.lock('*', component)}",
        f"%W~{keys.attempts('*', component)}",
        *media,
        f"%RW~{keys.workers}",
        f"&{keys.urgent}",
    )


def setuser_arguments(role: RedisRole, password: str) -> list[str]:
    """`ACL SETUSER` arguments that make the user exactly this role with this password."""
    return [role.user, "reset", "on", f">{password}", *role.rules]


def acl_file_line(role: RedisRole, password: str) -> str:
    """The role as a line of an ACL file (`aclfile`): the password as its SHA-256, never plain."""
    digest = hashlib.sha256(password.encode()).hexdigest()
    return " ".join(["user", role.user, "on", f"#{digest}", *role.rules])


def password_variable(role: str) -> str:
    """Environment variable holding a Redis role's password: `worker-claims` →
    `REDIS_PASSWORD_WORKER_CLAIMS`."""
    return "REDIS_PASSWORD_" + role.upper().replace("-", "_")
