"""Who said so: tasks are signed by the API, results by the workers of their component.

- A **task** carries an Ed25519 signature over everything but its retry count (its content
  as a SHA-256). The API holds the private key; every worker holds only the public key, so a
  worker can check a task but not make one. A task whose plan, input or session differs from
  what the API signed fails the check: nobody can run a session at a plan it was not given,
  or slip a task into another tenant's session.
- A **follow-up** task (media workers dispatch the four analysis tasks with the extracted
  text) is signed with the media workers' own key and carries its origin: the API-signed
  media task. It is believed only for an analysis component of that same session, plan and
  priority, so a media worker's key cannot make a task for any other session.
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
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from nacl.exceptions import CryptoError
from nacl.signing import SigningKey, VerifyKey

from shared.constants import ANALYSIS_COMPONENTS, MEDIA_PREPROCESS, QUEUE_COMPONENTS
from shared.errors import MissingCredential
from shared.messages import Result, Task, TaskOrigin
from shared.settings import Settings, is_placeholder


def _canonical(document: Mapping[str, Any]) -> bytes:
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def signed_fields(task: Task) -> dict[str, Any]:
    """What a task's signature covers: all of it but the signature and the retry count, its
    content as a SHA-256 (and a follow-up's origin as it came)."""
    document = task.model_dump(
        mode="json", by_alias=True, exclude={"signature", "retry_count", "origin"}
    )
    if document.get("tenant") is None:  # as signed before tasks carried tenant settings
        document.pop("tenant", None)
    content = document["input"].pop("content", None) or ""
    document["input"]["contentSha256"] = hashlib.sha256(content.encode()).hexdigest()
    if task.origin is not None:
        document["origin"] = task.origin.model_dump(mode="json", by_alias=True)
    return document


def task_payload(task: Task) -> bytes:
    """The bytes a task's signature is made over."""
    return _canonical(signed_fields(task))


def result_payload(result: Result) -> bytes:
    """What a result's signature covers: all of it but the signature itself (a settings
    version only when there is one, as results were signed before they carried it)."""
    document = result.model_dump(mode="json", by_alias=True, exclude={"signature"})
    if document.get("settingsVersion") is None:
        document.pop("settingsVersion", None)
    return _canonical(document)


# --- tasks: Ed25519 -------------------------------------------------------------------------


def new_signing_set() -> dict[str, str]:
    """A fresh set of every signing key, as the environment variables that carry them:
    TASK_SIGNING_KEY/TASK_VERIFY_KEY, MEDIA_SIGNING_KEY/MEDIA_VERIFY_KEY, RESULT_KEYS (JSON)
    and the API's EVENTS_TOKEN_KEY (the HMAC key of its events links)."""
    private, public = new_task_keys()
    media_private, media_public = new_task_keys()
    result_keys = {c: secrets.token_urlsafe(32) for c in QUEUE_COMPONENTS}
    return {
        "TASK_SIGNING_KEY": private,
        "TASK_VERIFY_KEY": public,
        "MEDIA_SIGNING_KEY": media_private,
        "MEDIA_VERIFY_KEY": media_public,
        "RESULT_KEYS": json.dumps(result_keys),
        "EVENTS_TOKEN_KEY": secrets.token_urlsafe(32),
    }


def new_task_keys() -> tuple[str, str]:
    """A fresh (private, public) pair, each as base64 of its 32 raw bytes."""
    private = SigningKey.generate()
    raw_private, raw_public = bytes(private), bytes(private.verify_key)
    return base64.b64encode(raw_private).decode(), base64.b64encode(raw_public).decode()


def private_task_key(encoded: str) -> SigningKey:
    """The signing key from its base64 form (its 32-byte seed); ValueError when it is not one."""
    return SigningKey(_raw32(encoded))


def public_task_key(encoded: str) -> VerifyKey:
    """The verifying key from its base64 form; ValueError when it is not one."""
    return VerifyKey(_raw32(encoded))


def _raw32(encoded: str) -> bytes:
    try:
        raw = base64.b64decode(encoded, validate=True)
    except binascii.Error as exc:
        raise ValueError("not base64") from exc
    if len(raw) != 32:
        raise ValueError("an Ed25519 key is 32 bytes")
    return raw


def sign_task(key: SigningKey, task: Task) -> Task:
    """`task` with its signature."""
    signature = key.sign(task_payload(task)).signature
    return task.model_copy(update={"signature": base64.b64encode(signature).decode()})


@dataclass(frozen=True)
class TaskKeys:
    """What a worker checks tasks with: the API's public key and the media workers' (None on
    the media workers themselves, which receive no follow-ups)."""

    api: VerifyKey
    media: VerifyKey | None = None


def _verified(key: VerifyKey, signature: str | None, payload: bytes) -> bool:
    if not signature:
        return False
    try:
        key.verify(payload, base64.b64decode(signature, validate=True))
    except (CryptoError, binascii.Error, ValueError):  # a bad signature, or not one at all
        return False
    return True


def origin_of(task: Task) -> TaskOrigin | None:
    """The origin a follow-up of `task` (a media task the API signed) carries."""
    if not task.signature:
        return None  # analysed in the API's own process: nothing is published
    return TaskOrigin(task=signed_fields(task), signature=task.signature)


def task_is_authentic(keys: TaskKeys, task: Task) -> bool:
    """True for a task the API signed, or a follow-up a media worker signed for an analysis
    component of the very session, plan and priority of an API-signed media task."""
    if task.origin is None:
        return _verified(keys.api, task.signature, task_payload(task))
    origin = task.origin.task
    return (
        keys.media is not None
        and _verified(keys.media, task.signature, task_payload(task))
        and _verified(keys.api, task.origin.signature, _canonical(origin))
        and origin.get("component") == MEDIA_PREPROCESS
        and task.component in ANALYSIS_COMPONENTS
        and _same_tenant_settings(origin, task)
        and origin.get("sessionId") == task.session_id
        and origin.get("planType") == task.plan_type
        and origin.get("priority") == task.priority
    )


def _same_tenant_settings(origin: Mapping[str, Any], task: Task) -> bool:
    """A follow-up runs with its media task's tenant settings, for one of its components."""
    tenant = task.tenant.model_dump(mode="json", by_alias=True) if task.tenant else None
    if origin.get("tenant") != tenant:
        return False
    return task.tenant is None or task.component in task.tenant.components


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


def task_signer(settings: Settings) -> SigningKey:
    """The API's (and media workers') key for signing tasks."""
    if settings.task_signing_key is None or is_placeholder(
        settings.task_signing_key.get_secret_value()
    ):
        raise MissingCredential("TASK_SIGNING_KEY is not set (`verdict keys signing` makes one)")
    try:
        return private_task_key(settings.task_signing_key.get_secret_value())
    except ValueError as exc:
        raise MissingCredential(f"TASK_SIGNING_KEY is not an Ed25519 key: {exc}") from exc


def media_signer(settings: Settings) -> SigningKey:
    """Media workers' key for signing the follow-up tasks they dispatch."""
    key = settings.media_signing_key
    if key is None or is_placeholder(key.get_secret_value()):
        raise MissingCredential("MEDIA_SIGNING_KEY is not set (`verdict keys signing` makes one)")
    try:
        return private_task_key(key.get_secret_value())
    except ValueError as exc:
        raise MissingCredential(f"MEDIA_SIGNING_KEY is not an Ed25519 key: {exc}") from exc


def task_keys(settings: Settings, component: str) -> TaskKeys:
    """What the workers of `component` check tasks with: analysis workers also accept the
    follow-ups media workers sign."""
    if component == MEDIA_PREPROCESS:
        return TaskKeys(task_verifier(settings), None)
    key = settings.media_verify_key
    if key is None or is_placeholder(key):
        raise MissingCredential("MEDIA_VERIFY_KEY is not set (`verdict keys signing` makes one)")
    try:
        return TaskKeys(task_verifier(settings), public_task_key(key))
    except ValueError as exc:
        raise MissingCredential(f"MEDIA_VERIFY_KEY is not an Ed25519 key: {exc}") from exc


def task_verifier(settings: Settings) -> VerifyKey:
    """A worker's key for checking the API's tasks."""
    if settings.task_verify_key is None or is_placeholder(settings.task_verify_key):
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
