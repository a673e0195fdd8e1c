"""Prometheus metrics shared by every process (docs/architecture.md §1.3)."""

from wsgiref.simple_server import WSGIServer

from prometheus_client import Counter, Gauge, Histogram, start_http_server

JOBS = Counter(
    "verdict_jobs_total", "Tasks handled, by component and outcome", ["component", "outcome"]
)
JOB_SECONDS = Histogram("verdict_job_seconds", "Executor run time", ["component"])
RETRIES = Counter(
    "verdict_retries_total", "Tasks re-queued through a retry tier", ["component", "reason"]
)
# reason: one of shared.deadletters.KINDS (poison, oversize, failed, refused, …).
# Deliveries the broker marks redelivered: handed back unacked (a worker killed, a channel
# lost, a task re-queued at shutdown) and delivered again.
REDELIVERIES = Counter(
    "verdict_redeliveries_total", "Task deliveries that arrived redelivered", ["component"]
)
DEAD_LETTERS = Counter(
    "verdict_dead_letters_total",
    "Messages sent to the DLQ, by source and reason",
    ["source", "reason"],
)
DLQ_FULL = Counter(
    "verdict_dlq_full_total",
    "Dead letters the full DLQ refused; parked in a retry tier",
    ["source"],
)
JANITOR_ERRORS = Counter(
    "verdict_janitor_errors_total", "Janitor passes that failed with an unexpected error"
)
LOCK_CONTENTION = Counter(
    "verdict_lock_contention_total", "Tasks whose lock was held elsewhere", ["component"]
)
# outcome: applied, or unknown_session (dead-lettered: no session recorded under its id).
RESULTS = Counter("verdict_results_total", "Results applied by the aggregator", ["outcome"])
SESSIONS = Counter("verdict_sessions_total", "Sessions accepted by the API", ["mode"])
# outcome: at_once, waited (admitted after waiting for room), replay (an Idempotency-Key
# replay, passed without room), refused (503: no room within the wait, or too many waiting).
ADMISSIONS = Counter(
    "verdict_admissions_total", "Submissions the API's admission decided on", ["plan", "outcome"]
)
# ADMISSION_LIMIT, or what the pipeline's measured pace made of it (ADMISSION_TARGET_S).
ADMISSION_LIMIT = Gauge(
    "verdict_admission_limit", "Sessions processing past which the API holds new ones back"
)


def serve(port: int | None, host: str = "127.0.0.1") -> WSGIServer | None:
    """Expose /metrics on `host`:`port` when a port is configured (loopback unless the
    deployment says otherwise: a container publishes 0.0.0.0 to its scraper); the server."""
    if not port:
        return None
    server, _ = start_http_server(port, addr=host)
    return server


QUEUE_DEPTH = Gauge(
    "verdict_queue_depth", "Messages ready in each queue of the topology", ["queue"]
)
# Set by the API from the worker registry every few seconds (0 for a component with none);
# "aggregator" counts the aggregators.
WORKERS_ONLINE = Gauge(
    "verdict_workers_online", "Worker processes online, by component", ["component"]
)
# Observed by the aggregator as it finalizes a session: from the POST that created it to its
# verdict (sessions the janitor finalizes as overdue included).
SESSION_SECONDS = Histogram(
    "verdict_session_seconds",
    "Seconds from a session's POST to its verdict",
    buckets=(0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800),
)

# Set by the API every few seconds (dispatcher/review_backlog.py); the alert on the review
# objective reads the age.
REVIEW_PENDING = Gauge(
    "verdict_review_pending", "Verdicts queued for human review and not decided yet"
)
REVIEW_OLDEST_AGE = Gauge(
    "verdict_review_oldest_age_seconds", "Age of the oldest item waiting in the review queue"
)
