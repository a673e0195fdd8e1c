"""Every Redis key and channel of one deployment, in one place.

All of them live under the deployment's prefix (`Settings.key_prefix`), so two deployments
can share a Redis and removing `{prefix}:*` removes everything one of them wrote.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Directory:
    """Keys read back together: every one starts with `prefix`. With Redis, `index` (a sorted
    set of those keys by expiry, under the same prefix) lists them, so reading them costs one
    sorted set of their size, not a SCAN of the whole keyspace, which grows with every session
    in it (shared/house.py)."""

    prefix: str
    index: str


@dataclass(frozen=True)
class Keys:
    """The key and channel names under `prefix`."""

    prefix: str

    def session_state(self, session_id: str) -> str:
        """A session's live state (JSON), read by the API before Postgres."""
        return f"{self.prefix}:session:{session_id}"

    def session_events(self, session_id: str) -> str:
        """Pub/sub channel announcing each change of a session's live state and the review
        of its verdict (SSE)."""
        return f"{self.prefix}:events:{session_id}"

    def lock(self, session_id: str, component: str) -> str:
        """The lock a worker holds while it analyses one component of a session."""
        return f"{self.prefix}:lock:{session_id}:{component}"

    def attempts(self, session_id: str, component: str) -> str:
        """The attempts workers made at one component of a session (a list, for the console's
        timeline); each component's workers may only append to their own."""
        return f"{self.prefix}:attempts:{session_id}:{component}"

    def worker(self, worker_id: str) -> str:
        """A worker process's heartbeat (a hash with a TTL)."""
        return f"{self.prefix}:workers:{worker_id}"

    @property
    def workers(self) -> str:
        """Pattern matching every worker heartbeat and their index (ACLs)."""
        return self.worker("*")

    @property
    def worker_directory(self) -> Directory:
        """The worker heartbeats, read back together (the registry); `#` is in no host name,
        so the index is no worker's key."""
        return Directory(prefix=self.worker(""), index=self.worker("#index"))

    def media_text(self, session_id: str) -> str:
        """Text extracted from a session's media, cached for retries of media_preprocess."""
        return f"{self.prefix}:media:{session_id}:transcript"

    @property
    def urgent(self) -> str:
        """Pub/sub channel of urgent sessions beginning and ending."""
        return f"{self.prefix}:urgent"

    def console_signed_out(self, nonce: str) -> str:
        """Marks a console session signed out (its cookie's nonce), until the cookie expires."""
        return f"{self.prefix}:console:signed-out:{nonce}"

    @property
    def rate_limits(self) -> str:
        """Prefix of the `limits` library's rate-limit counters."""
        return f"{self.prefix}:ratelimit"

    @property
    def everything(self) -> str:
        """SCAN pattern matching every key of the deployment."""
        return f"{self.prefix}:*"
