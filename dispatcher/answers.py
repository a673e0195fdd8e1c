"""What each route answers, for the OpenAPI document (/docs, /redoc): a body model for every
status code a route can give.

Routes build their answers in dispatcher/views.py and return them as they are; these models
describe those documents for clients and are checked against them by the tests.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send


class Problem(BaseModel):
    """Why a request was refused or failed, in the client's terms."""

    detail: str = Field(description="what was wrong, in the client's terms")


class ValidationProblem(Problem):
    """A request that does not say what it must: at most ten problems, each `field: message`."""

    errors: list[str] = Field(examples=[["content: input_type 'text' needs a non-empty content"]])


class Progress(BaseModel):
    """How far a session is: its status and which components have answered."""

    status: str = Field(
        examples=["processing"], description="processing, completed, partial or failed"
    )
    progress: int = Field(ge=0, le=100, description="share of components answered, 100 once final")
    completed_components: list[str]
    failed_components: list[str] = Field(description="failed or timed out")
    pending_components: list[str]


class SessionProgress(Progress):
    """GET queue-status: the session's progress under its id."""

    session_id: str


class Links(BaseModel):
    """Where to follow a session; `events_url` carries the token that opens its event stream
    without an API key (for a browser's EventSource)."""

    poll_url: str
    result_url: str
    events_url: str = Field(examples=["/api/v3/pipeline/6f1c…/events?token=WyI2ZjFj….c2wZ…"])


class Processing(Links):
    """202: the session is accepted (or still processing); follow it through the links."""

    session_id: str
    status: str = Field(examples=["processing"])


class Result(SessionProgress):
    """The result document: progress, plan, times, each component's result and the verdict
    (null until final)."""

    mode: str = Field(examples=["async"], description="async, or sync when analysed in-process")
    plan_type: int = Field(ge=1, le=6)
    created_at: str | None = None
    finished_at: str | None = None
    components: dict[str, dict[str, Any]]
    verdict: dict[str, Any] | None = Field(
        None, description="score, label, confidence and explanation {ro, en}"
    )
    review: Review | None = Field(None, description="null unless queued for human review")


# Where a queued verdict's review stands (shared/reviews.py): waiting, held by a reviewer, or
# decided as the verdict's own label (confirmed) or another (overridden).
ReviewStatus = Literal["pending", "claimed", "confirmed", "overridden"]


class Review(BaseModel):
    """The human review of a verdict queued for one, as its session's owner sees it."""

    status: ReviewStatus = Field(
        examples=["pending"],
        description="pending, claimed (a reviewer holds it), confirmed or overridden",
    )
    label: str | None = Field(None, description="the reviewer's label once decided")
    note: str | None = None
    reviewed_at: str | None = None


class ResultWithLinks(Result, Links):
    """200 to a POST: the session was analysed in-process, or its Idempotency-Key names one
    already final."""


class ReviewItem(BaseModel):
    """A verdict queued for review, as reviewers see it (shared/reviews.py)."""

    session_id: str
    tenant: str
    plan: int
    label: str
    score: float
    confidence: float
    reasons: list[str]
    queued_at: str
    status: ReviewStatus = Field(
        description="pending, claimed (a reviewer holds it), confirmed or overridden"
    )
    claimed_by: str | None
    claimed_at: str | None
    reviewed_label: str | None
    note: str | None
    reviewed_by: str | None
    reviewed_at: str | None


class ReviewQueue(BaseModel):
    """Verdicts waiting for a reviewer, oldest first."""

    items: list[ReviewItem]


class Worker(BaseModel):
    """One worker or aggregator process as it last announced itself (shared/registry.py)."""

    worker_id: str
    host: str
    pid: int
    components: list[str]
    input_types: list[str]
    version: str
    concurrency: int
    started_at: float
    capabilities: dict[str, bool]
    limits: dict[str, float]
    in_flight: int
    last_seen: float
    stopped_at: float | None
    status: str = Field(
        description="online, stale (silent 60 s) or offline (silent 90 s, or stopped)"
    )


class Workers(BaseModel):
    """The worker registry."""

    workers: list[Worker]


class Health(BaseModel):
    """Whether this API process can serve, and which services it reaches."""

    ok: bool
    postgres: bool
    # Where short-lived shared state is kept (heartbeats, live news, rate-limit windows):
    # `redis`, or `postgres` on the postgres transport with REDIS_URL unset.
    house: str
    # Whether Redis answers (false when the deployment runs without it).
    redis: bool
    # What carries tasks and results (TRANSPORT): `rabbitmq` or `postgres`.
    transport: str
    # Whether sessions go to RabbitMQ now (false on the postgres transport, or while the
    # broker is unreachable: the API then analyses them itself).
    rabbitmq: bool
    # Whether a text session would be taken now: every analysis component has an online
    # worker as this API last read the registry (a POST made after `true` is not refused
    # for want of a worker that was online when this was answered).
    accepts_text: bool


class EventStream(StreamingResponse):
    """A `text/event-stream` response (dispatcher/sse.py); `on_close`, when given, runs once
    the response has ended, however it ended (its stream may never have started)."""

    media_type = "text/event-stream"

    def __init__(
        self,
        content: Any,
        status_code: int = 200,
        headers: Mapping[str, str] | None = None,
        on_close: Callable[[], None] | None = None,
    ) -> None:
        # The signature names status_code: FastAPI's OpenAPI reads its default from it.
        super().__init__(content, status_code, headers)
        self._on_close = on_close

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            if self._on_close is not None:
                self._on_close()


def problem(description: str, model: type[BaseModel] = Problem) -> dict[str, Any]:
    """One documented refusal: what it means and its body."""
    return {"model": model, "description": description}


_EVENTS_EXAMPLE = (
    "retry: 3000\n\n"
    'event: progress\nid: 2\ndata: {"status": "processing", "progress": 50, …}\n\n'
    ": keep-alive\n\n"
    'event: result\nid: result\ndata: {"session_id": "…", "status": "completed", …}\n\n'
)

# Answers any route may give: from the guard (before routing), or an unexpected failure.
ANY_ROUTE: dict[int | str, dict[str, Any]] = {
    400: problem("Content-Length and Transfer-Encoding both sent, or a body that is not JSON"),
    431: problem("request line and headers over API_MAX_HEADER_BYTES"),
    500: problem("an unexpected failure; the detail quotes a reference to the log"),
}
# Answers of every route that wants an API key.
KEYED: dict[int | str, dict[str, Any]] = {
    **ANY_ROUTE,
    401: problem("no API key, or an unknown one"),
    422: problem("a parameter or body that does not say what it must", ValidationProblem),
    429: problem("over a rate limit, or too many unknown keys from this address; see Retry-After"),
}
# Answers of the routes that read one session.
SESSION_READ: dict[int | str, dict[str, Any]] = {
    **KEYED,
    404: problem("no such session: unknown, or another tenant's"),
}

SUBMIT: dict[int | str, dict[str, Any]] = {
    **KEYED,
    200: {
        "model": ResultWithLinks,
        "description": "analysed in-process (broker away), or an Idempotency-Key replay of a "
        "final session",
    },
    202: {"model": Processing, "description": "accepted: every task confirmed by the broker"},
    403: problem("plan_type above this key's plan"),
    408: problem("the body stalled, or did not arrive whole in time"),
    409: problem("this Idempotency-Key was used for a different request"),
    413: problem("content, url or body over the server's limits"),
    422: problem(
        "invalid body, or a media file that cannot be used, or an empty Idempotency-Key",
        ValidationProblem,
    ),
    429: problem(
        "over a rate limit, the tenant's sessions in flight, or the key's requests in "
        "progress; see Retry-After"
    ),
    503: problem(
        "the pipeline is at capacity, or no online worker can serve this input (the detail "
        "says which component or input type); see Retry-After"
    ),
}
QUEUE_STATUS: dict[int | str, dict[str, Any]] = {
    **SESSION_READ,
    200: {"model": SessionProgress, "description": "the session's progress"},
}
RESULT: dict[int | str, dict[str, Any]] = {
    **SESSION_READ,
    200: {"model": Result, "description": "the session is final"},
    202: {"model": Result, "description": "still processing (verdict null)"},
}
EVENTS: dict[int | str, dict[str, Any]] = {
    **SESSION_READ,
    200: {
        "description": "server-sent events: `progress` (id: components answered), then one "
        "`result` (id: result); `end` if the session vanishes",
        "content": {
            "text/event-stream": {"schema": {"type": "string"}, "example": _EVENTS_EXAMPLE}
        },
    },
    204: {"description": "Last-Event-ID says the client had the result: nothing more will come"},
    401: problem("no API key or events token, or a token that is expired or for another session"),
    429: problem(
        "the tenant has API_MAX_STREAMS_PER_TENANT streams open, or too many bad keys or "
        "tokens from this address; see Retry-After"
    ),
}
# Answers of the review routes (admin keys only).
REVIEWING: dict[int | str, dict[str, Any]] = {
    **KEYED,
    403: problem("this API key has no admin scope"),
}
REVIEW_QUEUE: dict[int | str, dict[str, Any]] = {
    **REVIEWING,
    200: {"model": ReviewQueue, "description": "the waiting verdicts, oldest first"},
}
REVIEW_ITEM: dict[int | str, dict[str, Any]] = {
    **REVIEWING,
    200: {"model": ReviewItem, "description": "the queued verdict and what became of it"},
    404: problem("this session's verdict is not queued"),
}
REVIEW_ACTION: dict[int | str, dict[str, Any]] = {
    **REVIEW_ITEM,
    409: problem("another reviewer holds the claim, or the item is already decided"),
}
WORKERS: dict[int | str, dict[str, Any]] = {
    **REVIEWING,
    200: {"model": Workers, "description": "every worker record with its status now"},
}
HEALTH: dict[int | str, dict[str, Any]] = {
    **ANY_ROUTE,
    200: {"model": Health, "description": "PostgreSQL answers: the API serves"},
    503: {"model": Health, "description": "PostgreSQL does not answer"},
}
