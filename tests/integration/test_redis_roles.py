"""Redis ACL users per role on the real server: the code of each role works as that user,
and what the role must not do is refused (NOPERM)."""

from __future__ import annotations

import secrets
import time
import uuid
from collections.abc import AsyncIterator
from urllib.parse import quote, urlsplit, urlunsplit

import pytest
import redis as redis_sync
from redis.asyncio import Redis
from redis.exceptions import NoPermissionError

from dispatcher.quotas import WindowCounts
from dispatcher.ratelimits import parse_limits
from shared import attempts, live
from shared.attempts import Attempt, AttemptLog
from shared.heartbeat import Heartbeat, announcement, unchanged
from shared.house import redis_house
from shared.keys import Keys
from shared.locks import ComponentLock, lock_key
from shared.redis_roles import password_variable, redis_roles, setuser_arguments
from shared.registry import registry
from shared.urgency import UrgentSignals
from tests import services as svc
from tests.cli import verdict
from tests.conftest import make_settings

pytestmark = pytest.mark.integration

urls: dict[str, str] = {}  # role → its Redis URL, for the test running now


def as_user(url: str, user: str, password: str) -> str:
    parts = urlsplit(url)
    netloc = f"{quote(user, safe='')}:{quote(password, safe='')}@{parts.hostname}:{parts.port}"
    return urlunsplit(parts._replace(netloc=netloc))


@pytest.fixture
async def clients(services: svc.Services) -> AsyncIterator[tuple[Keys, dict[str, Redis]]]:
    """A Redis client per role, each logged in as that role's ACL user of a fresh prefix."""
    keys = Keys(svc.unique("acl"))
    urls.clear()
    admin = Redis.from_url(services.redis_url)
    roles = redis_roles(keys)
    opened: dict[str, Redis] = {}
    try:
        for role in roles:
            password = secrets.token_urlsafe(16)
            await admin.execute_command("ACL", "SETUSER", *setuser_arguments(role, password))
            urls[role.role] = as_user(services.redis_url, role.user, password)
            opened[role.role] = Redis.from_url(urls[role.role])
        yield keys, opened
    finally:
        for client in opened.values():
            await client.aclose()
        for role in roles:
            await admin.execute_command("ACL", "DELUSER", role.user)
        await svc.delete_redis_keys(services.redis_url, keys.prefix)
        await admin.aclose()


async def test_each_role_runs_its_own_code_as_its_user(clients) -> None:
    """The API and the aggregator write and read live state and announce it, workers take,
    renew and finish locks and beat, the urgent channel carries signals."""
    keys, redis = clients
    sid = str(uuid.uuid4())
    state = {"status": "processing", "progress": 25}
    await live.publish_state(redis["api"], keys.prefix, sid, state)
    await live.publish_state(redis["aggregator"], keys.prefix, sid, {**state, "progress": 50})
    assert (await live.read_state(redis["api"], keys.prefix, sid))["progress"] == 50
    lock = ComponentLock(redis["worker-claims"], lock_key(keys.prefix, sid, "claims"), 5_000)
    assert await lock.acquire()
    assert await lock.renew() and await lock.still_held()
    await lock.finish()
    other = ComponentLock(redis["worker-domain"], lock_key(keys.prefix, sid, "domain"), 5_000)
    assert await other.acquire()
    await other.release()
    said = announcement("claims", 2, ("text",))
    await Heartbeat(redis_house(redis["worker-claims"]).shelf, keys.prefix, unchanged(said)).beat()
    for reader in ("worker-claims", "aggregator", "api"):  # health checks; the API's registry
        found = await registry(redis_house(redis[reader]).shelf, keys.prefix, time.time())
        assert [(r.worker_id, r.status) for r in found] == [(said.worker_id, "online")]
    await redis["worker-media_preprocess"].set(keys.media_text(sid), "text", ex=60)
    assert await redis["api"].get(keys.media_text(sid)) == b"text"  # the API's sync path
    await redis["api"].set(keys.console_signed_out("n-1"), 1, ex=60)  # console sign-out
    assert await redis["api"].get(keys.console_signed_out("n-1")) == b"1"
    await UrgentSignals(redis_house(redis["api"]).channels, keys.prefix).begin(sid)
    await UrgentSignals(redis_house(redis["aggregator"]).channels, keys.prefix).end([sid])
    tried = Attempt(1, "w-1", 1.0, 2.0, "retry", "next attempt in 200 ms")
    worker_claims = redis_house(redis["worker-claims"])
    AttemptLog(worker_claims.shelf, keys).add(sid, "claims", tried)
    assert worker_claims.batches is not None
    await worker_claims.batches.flush()
    assert await attempts.read(
        redis_house(redis["api"]).shelf, keys, sid, ["claims", "domain"]
    ) == {"claims": [tried]}  # the console's timeline


async def test_the_api_counts_rate_limits_as_its_user(clients, services, database_url) -> None:
    """Rate-limit counters fail open when Redis refuses, so a missing permission would
    silently switch limits off: the API's user must get real counts back."""
    keys, redis = clients
    settings = make_settings(services, database_url, keys.prefix, redis_url=urls["api"])
    counts = WindowCounts(settings, redis_house(redis["api"]))
    first = await counts.charge("submissions", parse_limits("5/minute"), "key-1")
    second = await counts.charge("submissions", parse_limits("5/minute"), "key-1")
    assert first is not None and second is not None
    assert [u.remaining for u in second] == [3]


@pytest.mark.parametrize(
    ("role", "command"),
    [
        ("worker-claims", lambda k, r: r.get(k.session_state("s"))),  # no session state
        ("worker-claims", lambda k, r: r.publish(k.session_events("s"), "forged")),
        ("worker-claims", lambda k, r: r.set(k.lock("s", "domain"), "x")),  # not its lock
        ("worker-domain", lambda k, r: r.set(k.media_text("s"), "planted")),  # media only
        ("worker-claims", lambda k, r: r.rpush(k.attempts("s", "domain"), "{}")),  # not its own
        ("worker-claims", lambda k, r: r.lrange(k.attempts("s", "claims"), 0, -1)),  # write-only
        ("api", lambda k, r: r.rpush(k.attempts("s", "claims"), "{}")),  # read-only
        ("api", lambda k, r: r.set(k.lock("s", "claims"), "mine")),  # the API takes no lock
        ("api", lambda k, r: r.set(k.worker("w-1"), "{}")),  # reads the registry, no more
        ("api", lambda k, r: r.zadd(k.worker_directory.index, {"x": 1})),
        ("api", lambda k, r: r.scan(0)),  # SCAN would show every key name
        ("worker-claims", lambda k, r: r.scan(0)),
        ("aggregator", lambda k, r: r.scan(0)),
        ("aggregator", lambda k, r: r.delete(k.lock("s", "claims"))),
        ("api", lambda k, r: r.get("other-deployment:session:s")),
        ("worker-claims", lambda k, r: r.flushall()),
        ("aggregator", lambda k, r: r.keys("*")),
        ("api", lambda k, r: r.config_get("*")),
        ("worker-media_preprocess", lambda k, r: r.execute_command("ACL", "LIST")),
    ],
)
async def test_what_a_role_must_not_do_is_refused(clients, role, command) -> None:
    """Keys of another role or deployment, admin and dangerous commands: NOPERM."""
    keys, redis = clients
    with pytest.raises(NoPermissionError):
        await command(keys, redis[role])


def test_the_cli_prints_an_acl_file_and_applies_the_roles(services, database_url, tmp_path) -> None:
    """`verdict access redis` prints one ACL line per role with the password's SHA-256 (never
    the password); `--file` writes them after `user default off`; `--apply` creates the
    users, who can then log in."""
    prefix = svc.unique("acl")
    settings = make_settings(services, database_url, prefix)
    roles = [r.role for r in redis_roles(Keys(prefix))]
    passwords = {password_variable(r): secrets.token_urlsafe(12) for r in roles}
    printed = verdict(settings, "access", "redis", **passwords)
    assert printed.returncode == 0, printed.stderr
    lines = printed.stdout.splitlines()
    assert [line.split()[1] for line in lines] == [f"{prefix}-{r}" for r in roles]
    assert not any(pw in printed.stdout for pw in passwords.values())
    acl = tmp_path / "users.acl"
    written = verdict(settings, "access", "redis", "--file", str(acl), **passwords)
    assert written.returncode == 0, written.stderr
    assert acl.read_text().splitlines() == ["user default off", *lines]
    applied = verdict(settings, "access", "redis", "--apply", **passwords)
    try:
        assert applied.returncode == 0, applied.stderr
        password = passwords[password_variable("worker-claims")]
        worker = redis_sync.Redis.from_url(
            as_user(services.redis_url, f"{prefix}-worker-claims", password)
        )
        assert worker.ping()
        worker.close()
    finally:
        admin = redis_sync.Redis.from_url(services.redis_url)
        for role in roles:
            admin.execute_command("ACL", "DELUSER", f"{prefix}-{role}")
        admin.close()
    missing = verdict(settings, "access", "redis")
    assert missing.returncode != 0 and "REDIS_PASSWORD_API" in missing.stderr
