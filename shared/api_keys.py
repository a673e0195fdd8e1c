"""API keys are kept as SHA-256 hashes: the configuration holds `sha256:<hex>` → grant, the
API hashes the key a caller presents and looks the hash up. Keys made by `new_key` carry 256
random bits, so a fast hash is enough (a slow one is for passwords people choose); a leaked
configuration gives no usable key."""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Mapping
from typing import TypeVar

HASH = re.compile(r"^sha256:[0-9a-f]{64}$")

V = TypeVar("V")


def key_hash(key: str) -> str:
    """How a key is stored: `sha256:` and the hex digest of its UTF-8 bytes."""
    return "sha256:" + hashlib.sha256(key.encode()).hexdigest()


# How many hex digits of a key's hash name it in records (`key_label`): 32 bits, plenty to tell
# one tenant's few keys apart, far too few to help anyone guess a key.
LABEL_HEX = 8


def key_label(tenant: str, hashed_key: str) -> str:
    """A key's stable, non-secret name in records of who did what (the reviewer of a verdict):
    its tenant and the start of its hash, `acme/ab12cd34`. Two keys of one tenant have two
    names; the same key keeps its name across restarts and processes."""
    return f"{tenant}/{hashed_key.removeprefix('sha256:')[:LABEL_HEX]}"


def is_key_hash(text: str) -> bool:
    return HASH.match(text) is not None


def new_key() -> str:
    """A fresh key: 32 random bytes, URL-safe base64 (43 characters)."""
    return secrets.token_urlsafe(32)


def hashed(grants: Mapping[str, V]) -> dict[str, V]:
    """`grants` keyed by plain keys, re-keyed by their hashes (for tests and tools)."""
    return {key_hash(key): grant for key, grant in grants.items()}
