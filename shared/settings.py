"""Settings from the environment, built once at each entry point and passed down."""

from __future__ import annotations

from functools import cached_property
from typing import Any, ClassVar
from urllib.parse import urlsplit, urlunsplit

import limits
from pydantic import (
    BaseModel,
    Field,
    SecretStr,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict

from shared.api_keys import is_key_hash
from shared.constants import (
    ANALYSIS_COMPONENTS,
    PLANS,
    QUEUE_COMPONENTS,
    REVIEW_CLAIM_TTL_S,
    QueueType,
    Transport,
)
from shared.review_policy import RISK_LABELS, ReviewPolicy

# What .env.example puts where a deployment must choose a secret; refused wherever it is read.
PLACEHOLDER = "change-me"


def is_placeholder(secret: str) -> bool:
    """True when `secret` (or a URL carrying one) still holds the .env.example placeholder."""
    return PLACEHOLDER in secret.lower()


# A result key shorter than this is refused: 32 characters of `secrets.token_urlsafe` carry
# about 190 bits.
MIN_SECRET_CHARS = 32


# Scopes a key may carry beyond submitting and reading its tenant's sessions.
ADMIN_SCOPE = "admin"
SCOPES = frozenset({ADMIN_SCOPE})


class ApiKey(BaseModel):
    """What one API key grants: a tenant, the highest plan it may use, and its scopes
    (`admin`: the console under /admin and the operator endpoints)."""

    tenant: str = Field(min_length=1, max_length=128)
    plan: int = Field(ge=1, le=6)
    scopes: frozenset[str] = frozenset()

    @field_validator("scopes", mode="after")
    @classmethod
    def _known_scopes(cls, value: frozenset[str]) -> frozenset[str]:
        unknown = sorted(value - SCOPES)
        if unknown:
            raise ValueError(f"unknown API key scope(s) {unknown}; known: {sorted(SCOPES)}")
        return value


class Settings(BaseSettings):
    """All configuration. Connection URLs have no default: credentials come from the environment."""

    # A refused value is never echoed: URLs carry passwords, and the refusal reaches logs.
    model_config = SettingsConfigDict(
        env_file=None, extra="ignore", frozen=True, hide_input_in_errors=True
    )

    # Required with TRANSPORT=rabbitmq (the default); unused with TRANSPORT=postgres.
    amqp_url: str = ""
    # Other nodes of a RabbitMQ cluster, "host:port,host:port": every process connects with
    # AMQP_URL's credentials and vhost to the first that answers, and on a loss to the next.
    # Empty counts as unset (compose passes `${AMQP_HOSTS:-}`).
    amqp_hosts: str | None = Field(None, pattern=r"^([^,/@\s]+(,[^,/@\s]+)*)?$")
    # Required with TRANSPORT=rabbitmq; with TRANSPORT=postgres, unset keeps what Redis would
    # hold (heartbeats, attempts, live news, rate-limit windows…) in PostgreSQL too.
    redis_url: str = ""
    database_url: str
    rabbitmq_management_url: str | None = None
    # A process serving several components (`verdict worker --components a,b`) connects each
    # component with that component's own credentials: JSON {"claims": "amqp://…", …}; a
    # component not named uses AMQP_URL / REDIS_URL. The process then holds exactly the
    # rights of its components' roles together, and no role has to be provisioned for it.
    component_amqp_urls: dict[str, str] = Field(default_factory=dict)
    component_redis_urls: dict[str, str] = Field(default_factory=dict)
    # The same for PostgreSQL: a component's own worker role (`verdict db provision` with
    # POSTGRES_COMPONENT_PASSWORDS), which on the table transport sees only its task rows.
    component_database_urls: dict[str, str] = Field(default_factory=dict)

    # What carries tasks and results, chosen once per deployment: RabbitMQ, or PostgreSQL's
    # job_queue table (shared/job_queue.py) for installations without a broker.
    transport: Transport = "rabbitmq"
    # PostgreSQL transport: a claimed row returns to its queue this long after its consumer
    # stopped renewing it (crashed); consumers wake on NOTIFY and poll this often besides.
    job_lease_s: float = Field(30.0, ge=1)
    job_poll_s: float = Field(2.0, gt=0)
    # Completed rows stay this long (to look at), then the aggregators delete them.
    job_keep_completed_s: float = Field(3600.0, ge=0)

    # Every broker object name derives from this, so test runs are isolated on one broker.
    topology_prefix: str = Field("analysis", pattern=r"^[a-z][a-z0-9_.-]{0,60}$")
    # Redis key namespace; defaults to the topology prefix.
    redis_prefix: str | None = Field(None, pattern=r"^[a-z][a-z0-9_.-]{0,60}$")
    queue_message_ttl_ms: int = Field(86_400_000, ge=1000)
    queue_max_length: int = Field(100_000, ge=1)
    # classic for one node; quorum replicates every queue on a majority of a cluster's nodes.
    queue_type: QueueType = "classic"
    # Quorum only: a message returned unacked this often (worker crashes, lost connections)
    # is dead-lettered. Each node loss returns what its consumers held once, so it is far
    # above the failovers one task meets, and far below a crash loop's cost.
    queue_delivery_limit: int = Field(10, ge=1, le=1000)
    # Dead letters and message bounds
    # The DLQ holds at most this many messages and bytes; past either cap it refuses new
    # letters (reject-publish) and a worker or aggregator parks the message in a retry tier.
    dlq_max_length: int = Field(100_000, ge=1)
    dlq_max_bytes: int = Field(1_073_741_824, ge=1)
    # A delivery whose header table encodes to more than this is rejected unread to its
    # queue's dead-letter route; far below RabbitMQ's 128 KiB frame_max, which a header frame
    # cannot exceed. (Bodies are bounded by shared.messages.MAX_MESSAGE_BYTES.)
    max_header_bytes: int = Field(16_384, ge=1024, le=65_536)
    # The operator role's broker URL (topology/access.py: read the DLQ, publish replays):
    # `verdict dlq` uses it (falling back to AMQP_URL when unset), the API's console only it.
    operator_amqp_url: str | None = None
    # A dead letter replayed this many times is a loop: replay refuses it unless forced.
    dlq_max_replays: int = Field(3, ge=1)
    # Letters one DLQ operation looks at, from the head, at most: each is one basic.get, held
    # unacked until the operation ends and then put back by the broker, so this bounds its
    # time and memory on a DLQ of 100,000 (README "Dead letters" has the measured cost).
    dlq_scan_limit: int = Field(1_000, ge=1, le=100_000)

    # JSON object: {"sha256:<hex of the key>": {"tenant": "...", "plan": 1..6}}; the keys
    # themselves are never configured (`verdict keys new` makes one and its entry).
    api_keys: dict[str, ApiKey] = Field(default_factory=dict)
    api_host: str = "127.0.0.1"
    api_port: int = 8000
    # Server-sent event streams: Redis connections they may hold in all (their own pool, so
    # streams can never take the connections rate limits are counted on; streams past it
    # follow PostgreSQL instead), and streams one tenant may have open at once (429 beyond).
    api_max_event_streams: int = Field(256, ge=1)
    # Addresses of reverse proxies whose X-Forwarded-For is believed (comma-separated, as
    # uvicorn takes them); unset: the connection's own address counts, the header is ignored.
    api_forwarded_allow_ips: str | None = None
    api_max_streams_per_tenant: int = Field(32, ge=1)

    # The admin console (/admin): the key its session cookies are signed with (at least 32
    # characters; unset: the console answers 503), how long a sign-in lasts, and the sign-in
    # attempts one client address may make (the `limits` notation; every window applies).
    admin_session_key: SecretStr | None = None
    admin_session_ttl_s: int = Field(28_800, ge=60)
    admin_login_limit: str = "5/minute;30/hour"

    # Who said so (shared/signing.py). Each process gets only the keys its role uses: the API
    # the task signing key; a worker the task verify key and its own component's result key
    # (media workers also the signing key, for the tasks they dispatch); an aggregator every
    # result key. `verdict keys signing` makes a fresh set.
    task_signing_key: SecretStr | None = None  # Ed25519 private key, base64 of 32 bytes
    task_verify_key: str | None = None  # its public key, base64 of 32 bytes
    # Media workers sign the follow-up tasks they dispatch with a key of their own.
    media_signing_key: SecretStr | None = None
    media_verify_key: str | None = None
    # JSON {"claims": "<secret>", …}: HMAC keys of results, by the component that signs them.
    result_keys: dict[str, SecretStr] = Field(default_factory=dict)
    # HMAC key of the links to one session's events the API hands out (`events_url`, for
    # browsers, whose EventSource cannot send an API key); the API alone holds it and does
    # not start without it (dispatcher/event_tokens.py). At least MIN_SECRET_CHARS characters.
    events_token_key: SecretStr | None = None
    # Rate limits and quotas (dispatcher/quotas.py). Limits use the `limits` notation, e.g.
    # "10/second;300/minute": every window applies, each a fixed window counted in Redis.
    # Off only for benchmarks and the chaos run, which measure the pipeline, not its quotas.
    quotas_enabled: bool = True
    # Submissions (POST analyze-async) per API key, by the key's plan; JSON {"1": "..."},
    # plans left out keep their default.
    rate_limits_by_plan: dict[int, str] = Field(default_factory=dict, validate_default=True)
    # Reads (queue-status, result, events) per API key, by plan: looser, since a client polls.
    read_rate_limits_by_plan: dict[int, str] = Field(default_factory=dict, validate_default=True)
    # Unknown keys one client address may present within these windows; past them that
    # address is refused everything (429) until the window ends, valid keys included.
    auth_failure_limit: str = "10/minute;100/hour"
    # Sessions a tenant may have processing at once, by the caller key's plan; JSON {"1": 20}.
    max_in_flight_by_plan: dict[int, int] = Field(default_factory=dict, validate_default=True)

    # Freemium may burst 5 and keep up 1 a second; each plan up allows 2-5x more, to
    # enterprise's 200 a second, a little above what the whole pipeline sustains on two cores
    # (155-175 sessions/s, README): the top plan is never the bottleneck, and no key can
    # take much more than everything.
    DEFAULT_RATE_LIMITS: ClassVar[dict[int, str]] = {
        1: "5/second;60/minute",
        2: "10/second;300/minute",
        3: "20/second;1200/minute",
        4: "50/second;3000/minute",
        5: "100/second;6000/minute",
        6: "200/second;12000/minute",
    }
    # About one poll a second for every session the plan may have in flight, and a margin.
    DEFAULT_READ_RATE_LIMITS: ClassVar[dict[int, str]] = {
        1: "20/second;1200/minute",
        2: "50/second;3000/minute",
        3: "100/second;6000/minute",
        4: "200/second;12000/minute",
        5: "400/second;24000/minute",
        6: "800/second;48000/minute",
    }
    # Each open session holds at most one task in each component's plan queue: these stay
    # far below QUEUE_MAX_LENGTH (100,000), so one tenant cannot fill its plan's queues.
    # Freemium at 1 session a second rarely has more than a few open.
    DEFAULT_MAX_IN_FLIGHT: ClassVar[dict[int, int]] = {
        1: 20,
        2: 50,
        3: 200,
        4: 1000,
        5: 5000,
        6: 20000,
    }

    @field_validator(
        "amqp_url",
        "redis_url",
        "database_url",
        "rabbitmq_management_url",
        "operator_amqp_url",
        "llm_api_key",
        "transcription_api_key",
        mode="after",
    )
    @classmethod
    def _no_placeholder(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is not None and is_placeholder(value):
            raise ValueError(f"{(info.field_name or '').upper()} holds a `change-me` placeholder")
        return value

    @model_validator(mode="after")
    def _admission_rechecks_within_its_wait(self) -> Settings:
        # A waiting request re-reads the count every recheck; one no shorter than the wait
        # would refuse it without a second look.
        if self.admission_wait_s > 0 and self.admission_recheck_s >= self.admission_wait_s:
            raise ValueError("ADMISSION_RECHECK_S must be shorter than ADMISSION_WAIT_S")
        return self

    @model_validator(mode="after")
    def _broker_for_its_transport(self) -> Settings:
        if self.transport == "rabbitmq" and not self.amqp_url:
            raise ValueError("AMQP_URL is required with TRANSPORT=rabbitmq (the default)")
        if self.transport == "rabbitmq" and not self.redis_url:
            raise ValueError(
                "REDIS_URL is required with TRANSPORT=rabbitmq (the default); "
                "only TRANSPORT=postgres runs without Redis"
            )
        if self.component_redis_urls and not self.redis_url:
            # Heartbeats would split between Redis and PostgreSQL: one house per deployment.
            raise ValueError(
                "COMPONENT_REDIS_URLS needs REDIS_URL: a deployment keeps its short-lived "
                "state in Redis or, with REDIS_URL unset, in PostgreSQL, not both"
            )
        return self

    @field_validator(
        "component_amqp_urls", "component_redis_urls", "component_database_urls", mode="after"
    )
    @classmethod
    def _urls_of_components(cls, value: dict[str, str], info: ValidationInfo) -> dict[str, str]:
        name = (info.field_name or "").upper()
        unknown = sorted(set(value) - set(QUEUE_COMPONENTS))
        if unknown:
            raise ValueError(f"{name} names unknown component(s) {unknown}")
        if any(is_placeholder(url) for url in value.values()):
            raise ValueError(f"{name} holds a `change-me` placeholder")
        return value

    @field_validator("result_keys", mode="after")
    @classmethod
    def _strong_result_keys(cls, value: dict[str, SecretStr]) -> dict[str, SecretStr]:
        weak = sorted(
            c
            for c, k in value.items()
            if len(k.get_secret_value()) < MIN_SECRET_CHARS or is_placeholder(k.get_secret_value())
        )
        unknown = sorted(set(value) - set(QUEUE_COMPONENTS))
        if weak or unknown:
            raise ValueError(
                f"RESULT_KEYS: keys of at least {MIN_SECRET_CHARS} characters for components "
                f"{list(QUEUE_COMPONENTS)} (weak: {weak}, unknown: {unknown})"
            )
        return value

    @field_validator("api_keys", mode="after")
    @classmethod
    def _hashed_keys_only(cls, value: dict[str, ApiKey]) -> dict[str, ApiKey]:
        plain = [name for name in value if not is_key_hash(name)]
        if plain:
            raise ValueError(
                f"API_KEYS holds {len(plain)} entries that are not 'sha256:<64 hex>' hashes; "
                "store hashes, not keys (`verdict keys hash`, `verdict keys new`)"
            )
        return value

    @field_validator("rate_limits_by_plan", "read_rate_limits_by_plan", mode="after")
    @classmethod
    def _limits_for_every_plan(cls, value: dict[int, str], info: ValidationInfo) -> dict[int, str]:
        defaults = (
            cls.DEFAULT_RATE_LIMITS
            if info.field_name == "rate_limits_by_plan"
            else cls.DEFAULT_READ_RATE_LIMITS
        )
        merged = {**defaults, **_plans_only(value)}
        for text in merged.values():
            _parse_limits(text)
        return merged

    @field_validator("admin_session_key", mode="after")
    @classmethod
    def _strong_session_key(cls, value: SecretStr | None) -> SecretStr | None:
        secret = value.get_secret_value() if value is not None else ""
        if value is not None and (len(secret) < MIN_SECRET_CHARS or is_placeholder(secret)):
            raise ValueError(
                f"ADMIN_SESSION_KEY must hold at least {MIN_SECRET_CHARS} random characters"
            )
        return value

    @field_validator("auth_failure_limit", "admin_login_limit", mode="after")
    @classmethod
    def _auth_failure_limit_parses(cls, value: str) -> str:
        _parse_limits(value)
        return value

    @field_validator("max_in_flight_by_plan", mode="after")
    @classmethod
    def _cap_for_every_plan(cls, value: dict[int, int]) -> dict[int, int]:
        merged = {**cls.DEFAULT_MAX_IN_FLIGHT, **_plans_only(value)}
        if any(cap < 1 for cap in merged.values()):
            raise ValueError("an in-flight cap must be at least 1")
        return merged

    # At most 4 bytes a character in a task's UTF-8 JSON: 250,000 keeps every task, with the
    # text a media transcript adds, under the 1 MiB message bound every worker accepts.
    max_content_chars: int = Field(100_000, ge=1, le=250_000)
    max_url_chars: int = Field(2048, ge=1)
    sync_timeout_s: float = Field(30.0, gt=0)
    publish_timeout_s: float = Field(5.0, gt=0)

    # API input bounds and hardening
    # A request body that stalls longer than this between two reads gets 408 (slow clients).
    api_body_timeout_s: float = Field(10.0, gt=0)
    # A whole body must arrive within this many seconds, however it trickles (1.2 MB at the
    # largest: 20 KB/s suffices), so a slow client cannot hold a connection for hours.
    api_body_deadline_s: float = Field(60.0, gt=0)
    # Requests with a body one API key may have in progress at once (429 beyond): with the
    # deadline above, one key cannot hold every connection the API serves.
    api_max_requests_per_key: int = Field(64, ge=1)
    # Sessions processing across the pipeline at once beyond which a new one waits for room,
    # a lower plan beyond its share (dispatcher/admission.py; 0: no limit). Under a second of
    # the no-op pipeline's throughput on two cores (README "Performance"), a few seconds of
    # the real analysers': the backlog a full pipeline holds stays about that long.
    admission_limit: int = Field(64, ge=0)
    # How long a request over the limit waits for room before its 503, and how often the
    # count is read again (per API process, one query for every request asking meanwhile).
    admission_wait_s: float = Field(2.0, ge=0)
    admission_recheck_s: float = Field(0.02, gt=0)
    # The latency at full load the limit aims for: it follows the sessions the pipeline
    # finishes per second times this, never above ADMISSION_LIMIT (0: the limit stays fixed).
    admission_target_s: float = Field(0.5, ge=0, allow_inf_nan=False)
    # A connection must send a whole request line and headers within this many seconds of
    # opening (or of its previous answer), else it is closed (slow-header clients).
    api_header_timeout_s: float = Field(10.0, gt=0)
    # Most values (commas, arrays and objects outside strings) a JSON body may hold (413
    # beyond, before it is parsed): a request needs a few dozen, while validating hundreds of
    # thousands of tiny ones held the API's one event loop for a second (dispatcher.json_values).
    api_max_json_values: int = Field(1_000, ge=16)
    # Largest request line plus headers: uvicorn refuses a longer head as it arrives (400), the
    # API one that arrived whole (431).
    api_max_header_bytes: int = Field(16_384, ge=1024)
    # Idle keep-alive connections are closed after this many seconds.
    api_keep_alive_s: int = Field(5, ge=1)
    # Connections (and tasks) served at once; past it uvicorn answers 503.
    api_max_connections: int = Field(1_000, ge=1)
    # Port of the API's Prometheus metrics (none: not served), on API_METRICS_HOST.
    api_metrics_port: int | None = None
    api_metrics_host: str = "127.0.0.1"
    # Sessions whose tenant the API remembers (a session's tenant never changes).
    api_tenant_cache_size: int = Field(10_000, ge=1)
    # How long the API trusts its copy of the worker registry before reading it again.
    api_workers_ttl_s: float = Field(3.0, ge=0)
    # How long the API serves a tenant's settings from memory at most: a change is notified
    # at once (NOTIFY), this bounds how stale they get should a notification be missed.
    tenant_settings_ttl_s: float = Field(60.0, ge=0)
    # Refuse (503) a session no online worker can serve; off, it is queued to wait for one
    # (for deployments that start workers when work arrives).
    api_check_workers: bool = True

    # Retries: delay for attempt n is base × 2^(n-1) (docs/architecture.md §3.4).
    retry_base_ms: int = Field(30_000, ge=1)
    max_attempts: int = Field(3, ge=1, le=10)
    # The shortest tier: a task whose lock is held elsewhere waits this long.
    lock_retry_ms: int = Field(1_000, ge=1)

    # The watchdog renews the lock every third of this while a task runs, so the TTL need not
    # cover the longest task; it bounds how long a crashed worker's lock delays a redelivery.
    lock_ttl_ms: int = Field(30_000, ge=100)
    task_timeout_s: float = Field(120.0, gt=0)
    video_timeout_s: float = Field(600.0, gt=0)
    shutdown_grace_s: float = Field(30.0, ge=0)

    # Analysis isolation (workers/isolation.py). CPU-bound analysis runs in child processes,
    # so a timeout can kill it: this many per worker (and, while the broker is down, in the
    # API). 0 = one per task slot of the worker (its concurrency and urgent slots): a task then
    # never waits for a process, so hostile input stuck in one slot cannot make the others'
    # tasks time out. The children are forked from one preloaded process and share its pages.
    analysis_processes: int = Field(0, ge=0, le=64)

    def analysis_processes_for(self, slots: int) -> int:
        """Analysis processes of a process with `slots` tasks at once."""
        return self.analysis_processes or max(1, slots)

    # Worker scheduling across the six plan queues (issue: plan tiers take precedence).
    scheduler_enabled: bool = True
    # Effective priority points gained per second of waiting, so low tiers never starve.
    aging_per_s: float = Field(0.2, ge=0)
    # Sessions, tasks and results at or above this priority are urgent: while one is in
    # flight, lower tiers wait to start (8 = business and enterprise; shared/urgency.py).
    urgent_priority: int = Field(8, ge=1, le=11)
    # The urgent work's head start: the longest a lower-tier start waits for it, and the
    # longest an urgent session holds lower tiers back cluster-wide.
    urgent_hold_ms: float = Field(30.0, ge=0)
    # Lower tiers are held back only while the machine's CPUs are at least this busy (share
    # over the last second, /proc/stat; 0 = always): spare CPU needs no precedence.
    urgent_cpu_busy: float = Field(0.9, ge=0, le=1)
    # Slots a worker keeps beyond its concurrency for urgent tasks only, so an urgent task
    # never waits for a lower-tier one to finish.
    urgent_slots: int = Field(1, ge=0)

    session_deadline_s: float = Field(900.0, gt=0)
    # Per-plan overrides of the deadline, JSON {"6": 300}.
    session_deadline_by_plan: dict[int, float] = Field(default_factory=dict)
    janitor_interval_s: float = Field(5.0, gt=0)
    # Retention of the session record (migration 008): `verdict db prune` drops the day
    # partitions of sessions, results, verdicts and review items older than this many days.
    retention_days: int = Field(30, ge=1)
    # Day partitions kept ready ahead of today (by the aggregators and by prune).
    partition_days_ahead: int = Field(7, ge=1, le=366)

    verdict_weights: dict[str, float] = Field(
        default_factory=lambda: {
            "techniques": 0.3,
            "ai_tampered": 0.2,
            "claims": 0.3,
            "domain": 0.2,
        }
    )

    # Human review (shared/review_policy.py). Off by default: a queue nobody works only grows
    # (and pages, `verdict_review_oldest_age_seconds`). A verdict is queued when its
    # confidence is under REVIEW_CONFIDENCE_BELOW, or when its label is at or above
    # REVIEW_LABEL_AT_LEAST on one of REVIEW_PLANS (JSON list, e.g. [5, 6]; default all).
    review_confidence_below: float | None = Field(None, gt=0, le=1)
    review_label_at_least: str | None = None
    review_plans: frozenset[int] = frozenset(PLANS)
    # A reviewer's claim on an item lapses after this long; the item returns to the queue.
    review_claim_ttl_s: float = Field(REVIEW_CLAIM_TTL_S, gt=0)

    # External services (all optional).
    llm_url: str | None = None
    llm_model: str = "gpt-4o-mini"
    llm_api_key: str | None = None
    transcription_url: str | None = None
    transcription_model: str = "whisper-1"
    transcription_api_key: str | None = None
    ocr_url: str | None = None
    evidence_url: str | None = None
    media_root: str | None = None

    log_level: str = "INFO"
    log_json: bool = True
    metrics_port: int | None = None
    # The address a worker's or aggregator's metrics listen on: loopback unless the deployment
    # says otherwise (compose: 0.0.0.0 inside each container). They listened on every
    # interface: a hostile probe read queue depths and backlogs from another address.
    metrics_host: str = "127.0.0.1"

    @field_validator("verdict_weights")
    @classmethod
    def _weights_cover_components(cls, value: dict[str, float]) -> dict[str, float]:
        missing = set(ANALYSIS_COMPONENTS) - set(value)
        if missing or any(w < 0 for w in value.values()):
            raise ValueError(f"verdict weights need a non-negative weight for {sorted(missing)}")
        return value

    @field_validator("review_label_at_least", mode="after")
    @classmethod
    def _a_risk_label(cls, value: str | None) -> str | None:
        if value is not None and value not in RISK_LABELS:
            raise ValueError(f"REVIEW_LABEL_AT_LEAST must be one of {list(RISK_LABELS)}")
        return value

    @field_validator("review_plans", mode="after")
    @classmethod
    def _known_plans(cls, value: frozenset[int]) -> frozenset[int]:
        _plans_only(dict.fromkeys(value))
        return value

    @property  # not cached: a copy with other REVIEW_* settings must not keep this one's
    def review_policy(self) -> ReviewPolicy:
        """Which verdicts the fan-in queues for a person to review."""
        return ReviewPolicy(
            self.review_confidence_below, self.review_label_at_least, self.review_plans
        )

    @cached_property
    def key_prefix(self) -> str:
        """Namespace of every Redis key of this deployment."""
        return self.redis_prefix or self.topology_prefix

    def deadline_s(self, plan: int) -> float:
        """How long a session on `plan` may stay processing before the janitor ends it."""
        return self.session_deadline_by_plan.get(plan, self.session_deadline_s)

    @property
    def urgent_threshold(self) -> int | None:
        """The urgent priority, or None with the scheduler off (plain consumption)."""
        return self.urgent_priority if self.scheduler_enabled else None

    def for_component(self, component: str) -> Settings:
        """These settings as a worker of `component` uses them: its own broker, Redis and
        PostgreSQL credentials when COMPONENT_AMQP_URLS / COMPONENT_REDIS_URLS /
        COMPONENT_DATABASE_URLS name it."""
        update = {
            "amqp_url": self.component_amqp_urls.get(component, self.amqp_url),
            "redis_url": self.component_redis_urls.get(component, self.redis_url),
            "database_url": self.component_database_urls.get(component, self.database_url),
        }
        return self.model_copy(update=update)

    def operator_url(self) -> str:
        """The operator role's AMQP URL (`verdict dlq`, the management API's figures);
        AMQP_URL when none is set (a development broker's user)."""
        return self.operator_amqp_url or self.amqp_url

    def amqp_urls(self) -> tuple[str, ...]:
        """AMQP_URL, then the same URL on each host of AMQP_HOSTS (failover order)."""
        return broker_urls(self.amqp_url, self.amqp_hosts)

    def retry_delays_ms(self) -> tuple[int, ...]:
        """The delay tiers: lock contention first, then the backoff of each retryable attempt."""
        backoff = (self.retry_base_ms * 2 ** (n - 1) for n in range(1, self.max_attempts))
        return tuple(sorted({self.lock_retry_ms, *backoff}))


def broker_urls(amqp_url: str, hosts: str | None) -> tuple[str, ...]:
    """`amqp_url`, then the same URL (credentials, vhost, query) on each other `host:port`."""
    parts = urlsplit(amqp_url)
    own = parts.netloc.rpartition("@")[2]
    auth = parts.netloc[: len(parts.netloc) - len(own)]
    others = [h.strip() for h in (hosts or "").split(",") if h.strip()]
    netlocs = dict.fromkeys([own, *others])  # ordered, without repeats
    return tuple(urlunsplit(parts._replace(netloc=auth + netloc)) for netloc in netlocs)


def _plans_only(value: dict[int, Any]) -> dict[int, Any]:
    unknown = set(value) - set(PLANS)
    if unknown:
        raise ValueError(f"plans are 1..6, not {sorted(unknown)}")
    return value


def _parse_limits(text: str) -> None:
    try:
        limits.parse_many(text)
    except ValueError as exc:
        raise ValueError(f"{text!r} is not a rate limit like '10/second;300/minute'") from exc


def load_settings(**overrides: object) -> Settings:
    """Build the settings once, at an entry point."""
    return Settings(**overrides)  # type: ignore[arg-type]
