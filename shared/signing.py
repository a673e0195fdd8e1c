"""Who said so: tasks are signed by the API, results by the workers of their component.

- A **task** carries an Ed25519 signature over everything but its retry count. The API (and
  media workers, which dispatch follow-up tasks) hold the private key; every worker holds only
  the public key, so a worker can check a task but not make one. A task whose plan, input or
  session differs from what the API signed fails the check: nobody can run a session at a plan
  it was not given, or slip a task into another tenant's session.
- A **result** carries an HMAC-SHA256 under its component's key and names its signer. Each
  worker holds only its own component's key; aggregators hold them all. A result is believed
  only when its signer is its component, or media_preprocess reporting a failure (a media file
  that could not be read fails all four components at once).

Signatures cover the canonical JSON of the message (the wire form, keys sorted), so they hold
across a JSON round trip between processes.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from collections.abc import Mapping
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from shared.constants import MEDIA_PREPROCESS, QUEUE_COMPONENTS
from shared.errors import MissingCredential
from shared.messages import Result, Task
from shared.settings import Settings


def _canonical(document: Mapping[str, Any]) -> bytes:
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def task_payload(task: Task) -> bytes:
    """What a task's signature covers: all of it but the signature and the retry count."""
    return _canonical(
        task.model_dump(mode="json", by_alias=True, exclude={"signature", "retry_count"})
    )


def result_payload(result: Result) -> bytes:
    """What a result's signature covers: all of it but the signature itself."""
    return _canonical(result.model_dump(mode="json", by_alias=True, exclude={"signature"}))


# --- tasks: Ed25519 -------------------------------------------------------------------------


def new_task_keys() -> tuple[str, str]:
    """A fresh (private, public) pair, each as base64 of its 32 raw bytes."""
    private = Ed25519PrivateKey.generate()
    raw_private = private.private_bytes_raw()
    raw_public = private.public_key().public_bytes_raw()
    return base64.b64encode(raw_private).decode(), base64.b64encode(raw_public).decode()


def private_task_key(encoded: str) -> Ed25519PrivateKey:
    """The signing key from its base64 form; ValueError when it is not one."""
    return Ed25519PrivateKey.from_private_bytes(_raw32(encoded))


def public_task_key(encoded: str) -> Ed25519PublicKey:
    """The verifying key from its base64 form; ValueError when it is not one."""
    return Ed25519PublicKey.from_public_bytes(_raw32(encoded))


def _raw32(encoded: str) -> bytes:
    try:
        raw = base64.b64decode(encoded, validate=True)
    except binascii.Error as exc:
        raise ValueError("not base64") from exc
    if len(raw) != 32:
        raise ValueError("an Ed25519 key is 32 bytes")
    return raw


def sign_task(key: Ed25519PrivateKey, task: Task) -> Task:
    """`task` with its signature."""
    signature = key.sign(task_payload(task))
    return task.model_copy(update={"signature": base64.b64encode(signature).decode()})


def task_is_authentic(key: Ed25519PublicKey, task: Task) -> bool:
    """True when the task carries a valid signature of the API (or a media worker)."""
    if not task.signature:
        return False
    try:
        key.verify(base64.b64decode(task.signature, validate=True), task_payload(task))
    except (InvalidSignature, binascii.Error, ValueError):
        return False
    return True


# --- results: HMAC per component --------------------------------------------------------------


def sign_result(key: bytes, signer: str, result: Result) -> Result:
    """`result` signed by the workers of `signer` (a component) with that component's key."""
    named = result.model_copy(update={"signed_by": signer})
    digest = hmac.new(key, result_payload(named), hashlib.sha256).hexdigest()
    return named.model_copy(update={"signature": digest})


def may_report(signer: str, result: Result) -> bool:
    """Whether workers of `signer` may report this result at all."""
    if signer == result.component:
        return True
    return signer == MEDIA_PREPROCESS and not result.success


def result_is_authentic(keys: Mapping[str, bytes], result: Result) -> bool:
    """True when the result's signer may report it and its signature is that signer's."""
    signer, signature = result.signed_by, result.signature
    if not signer or not signature or signer not in keys or not may_report(signer, result):
        return False
    expected = hmac.new(keys[signer], result_payload(result), hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, signature)


# --- the keys a process holds -----------------------------------------------------------------


def task_signer(settings: Settings) -> Ed25519PrivateKey:
    """The API's (and media workers') key for signing tasks."""
    if settings.task_signing_key is None:
        raise MissingCredential("TASK_SIGNING_KEY is not set (`verdict keys signing` makes one)")
    try:
        return private_task_key(settings.task_signing_key.get_secret_value())
    except ValueError as exc:
        raise MissingCredential(f"TASK_SIGNING_KEY is not an Ed25519 key: {exc}") from exc


def task_verifier(settings: Settings) -> Ed25519PublicKey:
    """A worker's key for checking tasks."""
    if settings.task_verify_key is None:
        raise MissingCredential("TASK_VERIFY_KEY is not set (`verdict keys signing` makes one)")
    try:
        return public_task_key(settings.task_verify_key)
    except ValueError as exc:
        raise MissingCredential(f"TASK_VERIFY_KEY is not an Ed25519 key: {exc}") from exc


def result_key(settings: Settings, component: str) -> bytes:
    """The key the workers of `component` sign their results with."""
    key = settings.result_keys.get(component)
    if key is None:
        raise MissingCredential(f"RESULT_KEYS has no key for {component}")
    return key.get_secret_value().encode()


def result_keys(settings: Settings) -> dict[str, bytes]:
    """Every component's result key: what an aggregator checks results with."""
    return {c: result_key(settings, c) for c in QUEUE_COMPONENTS}


def aggregator_parking_key(settings: Settings) -> bytes:
    """The key aggregators authenticate the results they park with (shared.deadletters):
    derived from every component's result key, so no worker, holding only its own, can
    compute it, and distinct from each of them."""
    keys = result_keys(settings)
    material = b"".join(len(keys[c]).to_bytes(4, "big") + keys[c] for c in sorted(keys))
    return hmac.new(b"verdict aggregator parking key", material, hashlib.sha256).digest()
