"""Wire messages (JSON, camelCase as the original Node.js services spoke it) and their pure
(de)serialization."""

from __future__ import annotations

import time
import uuid
from typing import Annotated, Any, Literal, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from shared.constants import ANALYSIS_COMPONENTS, MEDIA_PREPROCESS, PLAN_PRIORITY
from shared.errors import InvalidMessage

Component = Literal["media_preprocess", "techniques", "ai_tampered", "claims", "domain"]
AnalysisComponent = Literal["techniques", "ai_tampered", "claims", "domain"]
InputType = Literal["text", "url", "image", "audio", "video"]


def _canonical_uuid(value: str) -> str:
    """Session ids are UUIDs; anything else is poison, caught before any I/O."""
    return str(uuid.UUID(value))


SessionId = Annotated[str, Field(max_length=64), AfterValidator(_canonical_uuid)]

# A message larger than this is poison: the API bounds content far below it.
MAX_MESSAGE_BYTES = 1_048_576


class _Wire(BaseModel):
    model_config = ConfigDict(populate_by_name=True, frozen=True, extra="ignore")


class TaskInput(_Wire):
    """The content a component analyses."""

    content: str | None = None
    url: str | None = None
    media_path: str | None = Field(None, alias="mediaPath")
    input_type: InputType = Field("text", alias="inputType")


class TaskOrigin(_Wire):
    """The API-signed media task a follow-up task comes from: its signed fields (the content
    as its SHA-256, so the follow-up stays small) and the API's signature of them."""

    task: dict[str, Any]
    signature: str = Field(max_length=128)


class TenantTuning(_Wire):
    """The tenant's settings a session runs with (shared/tenant_settings.py): their version,
    the components the session runs, and what the workers apply. Signed with the task."""

    settings_version: int = Field(alias="settingsVersion", ge=1)
    components: tuple[AnalysisComponent, ...] = Field(min_length=1)
    lexicon_terms: dict[str, tuple[str, ...]] = Field(default_factory=dict, alias="lexiconTerms")
    protected_brands: tuple[str, ...] = Field((), alias="protectedBrands")
    blocked_hosts: tuple[str, ...] = Field((), alias="blockedHosts")


class Task(_Wire):
    """One component's share of a session, routed to `{prefix}.{component}.{plan}`."""

    session_id: SessionId = Field(alias="sessionId")
    component: Component
    plan_type: int = Field(alias="planType", ge=1, le=6)
    priority: int = Field(ge=0, le=10)
    input: TaskInput
    user_id: str | None = Field(None, alias="userId")
    timestamp: int
    retry_count: int = Field(0, alias="retryCount", ge=0)
    # Ed25519 by the API or a media worker (shared/signing.py), base64.
    signature: str | None = Field(None, max_length=128)
    # On a task a media worker dispatched: the media task it comes from (shared/signing.py).
    origin: TaskOrigin | None = None
    # The tenant's settings (None: the tenant has none, the deployment's apply).
    tenant: TenantTuning | None = None

    @property
    def settings_version(self) -> int | None:
        return self.tenant.settings_version if self.tenant else None


class Result(_Wire):
    """What a worker reports for one component, routed to `{prefix}.results.{component}`."""

    session_id: SessionId = Field(alias="sessionId")
    component: AnalysisComponent
    success: bool
    score: float = Field(ge=0, le=100)
    data: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None
    processing_time: int = Field(0, alias="processingTime", ge=0)
    timestamp: int
    attempt: int = Field(1, ge=1)
    worker_id: str = Field("", alias="workerId")
    # The tenant settings version its task ran with (None: the deployment's settings).
    settings_version: int | None = Field(None, alias="settingsVersion", ge=1)
    # The component whose workers vouch for it and their HMAC (shared/signing.py), hex.
    signed_by: Component | None = Field(None, alias="signedBy")
    signature: str | None = Field(None, max_length=128)


_M = TypeVar("_M", bound=_Wire)


def now_ms() -> int:
    """Wall-clock milliseconds, the timestamp unit on the wire."""
    return int(time.time() * 1000)


def priority_of(plan: int) -> int:
    """Message priority of a plan tier (docs/architecture.md §3.2)."""
    return PLAN_PRIORITY[plan]


def encode(message: _Wire) -> bytes:
    """Serialize with the wire (camelCase) names."""
    return message.model_dump_json(by_alias=True, exclude_none=True).encode()


def decode_task(body: bytes) -> Task:
    """Parse a task, or raise InvalidMessage saying why."""
    return _decode(Task, body)


def decode_result(body: bytes) -> Result:
    """Parse a result, or raise InvalidMessage saying why."""
    return _decode(Result, body)


def _decode(model: type[_M], body: bytes) -> _M:
    if len(body) > MAX_MESSAGE_BYTES:
        raise InvalidMessage(f"message of {len(body)} bytes exceeds {MAX_MESSAGE_BYTES}")
    try:
        return model.model_validate_json(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "body"
        raise InvalidMessage(f"invalid {model.__name__.lower()}: {where}: {first['msg']}") from exc


def success_result(
    task: Task, score: float, data: dict[str, Any], attempt: int, worker_id: str, elapsed_ms: int
) -> Result:
    """What a task that ran reports: its score and evidence."""
    return Result(
        session_id=task.session_id,
        component=task.component,
        success=True,
        score=score,
        data=data,
        processing_time=elapsed_ms,
        timestamp=now_ms(),
        attempt=attempt,
        worker_id=worker_id,
        settings_version=task.settings_version,
    )


def failure_results(task: Task, reason: str, attempt: int, worker_id: str) -> list[Result]:
    """What a failed task reports: for media, a failure of each component of the session."""
    components: tuple[str, ...] = (task.component,)
    if task.component == MEDIA_PREPROCESS:
        components = task.tenant.components if task.tenant else ANALYSIS_COMPONENTS
    return [
        Result(
            session_id=task.session_id,
            component=c,
            success=False,
            score=0,
            error=reason,
            timestamp=now_ms(),
            attempt=attempt,
            worker_id=worker_id,
            settings_version=task.settings_version,
        )
        for c in components
    ]
