"""Idempotency-Key: one key names one request; its fingerprint tells a retry from a reuse."""

from __future__ import annotations

import hashlib
import json
from typing import Annotated

from fastapi import Header
from pydantic import AfterValidator, StringConstraints

from dispatcher.schemas import AnalyzeRequest, PlainText


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


IdempotencyKey = Annotated[
    PlainText, StringConstraints(min_length=1, max_length=200), AfterValidator(_not_blank)
]
# The header as a route parameter: absent is fine, present must be a usable key.
IdempotencyHeader = Annotated[IdempotencyKey | None, Header()]


def request_fingerprint(body: AnalyzeRequest, plan: int) -> str:
    """SHA-256 of the request as the pipeline understands it (canonical JSON).

    `text` and `content` are one field, and the plan is the one the session runs on, so two
    spellings of the same request share a fingerprint.
    """
    canonical = {
        "content": body.body,
        "url": body.url,
        "media_path": body.media_path,
        "input_type": body.input_type,
        "plan_type": plan,
        "user_id": body.user_id,
    }
    text = json.dumps(canonical, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()
