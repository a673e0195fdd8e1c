"""Settings from the environment, built once at each entry point and passed down."""

from __future__ import annotations

from functools import cached_property

from pydantic import BaseModel, Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from shared.constants import ANALYSIS_COMPONENTS


class ApiKey(BaseModel):
    """What one API key grants: a tenant and the highest plan it may use."""

    tenant: str = Field(min_length=1, max_length=128)
    plan: int = Field(ge=1, le=6)


class Settings(BaseSettings):
    """All configuration. Connection URLs have no default: credentials come from the environment."""

    model_config = SettingsConfigDict(env_file=None, extra="ignore", frozen=True)

    amqp_url: str
    redis_url: str
    database_url: str
    rabbitmq_management_url: str | None = None

    # Every broker object name derives from this, so test runs are isolated on one broker.
    topology_prefix: str = Field("analysis", pattern=r"^[a-z][a-z0-9_.-]{0,60}$")
    # Redis key namespace; defaults to the topology prefix.
    redis_prefix: str | None = None
    queue_message_ttl_ms: int = Field(86_400_000, ge=1000)
    queue_max_length: int = Field(100_000, ge=1)

    # JSON object: {"<key>": {"tenant": "...", "plan": 1..6}}.
    api_keys: dict[str, ApiKey] = Field(default_factory=dict)
    api_host: str = "127.0.0.1"
    api_port: int = 8000
    max_content_chars: int = Field(100_000, ge=1)
    max_url_chars: int = Field(2048, ge=1)
    sync_timeout_s: float = Field(30.0, gt=0)
    publish_timeout_s: float = Field(5.0, gt=0)

    # Retries: delay for attempt n is base × 2^(n-1) (SPEC §6.4).
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

    # Analysis isolation (workers/isolation.py). CPU-bound analysis runs in this many child
    # processes per worker (and, while the broker is down, in the API), so a timeout can kill
    # it. Analysis is CPU-bound: more processes than cores add no throughput, and each costs
    # its own memory; 2 keeps a second process free while one is stuck on hostile input.
    analysis_processes: int = Field(2, ge=1, le=64)

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

    verdict_weights: dict[str, float] = Field(
        default_factory=lambda: {
            "techniques": 0.3,
            "ai_tampered": 0.2,
            "claims": 0.3,
            "domain": 0.2,
        }
    )

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

    @field_validator("verdict_weights")
    @classmethod
    def _weights_cover_components(cls, value: dict[str, float]) -> dict[str, float]:
        missing = set(ANALYSIS_COMPONENTS) - set(value)
        if missing or any(w < 0 for w in value.values()):
            raise ValueError(f"verdict weights need a non-negative weight for {sorted(missing)}")
        return value

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

    def retry_delays_ms(self) -> tuple[int, ...]:
        """The delay tiers: lock contention first, then the backoff of each retryable attempt."""
        backoff = (self.retry_base_ms * 2 ** (n - 1) for n in range(1, self.max_attempts))
        return tuple(sorted({self.lock_retry_ms, *backoff}))


def load_settings(**overrides: object) -> Settings:
    """Build the settings once, at an entry point."""
    return Settings(**overrides)  # type: ignore[arg-type]
