"""Every fixed name and number of the pipeline, each with the reason for its value."""

from typing import Final, Literal

# The four analysis components every session runs, in the order they are reported.
ANALYSIS_COMPONENTS: Final = ("techniques", "ai_tampered", "claims", "domain")
# The pre-stage for audio, video and image input: it turns media into text first.
MEDIA_PREPROCESS: Final = "media_preprocess"
# Every component that owns a family of plan queues.
QUEUE_COMPONENTS: Final = (MEDIA_PREPROCESS, *ANALYSIS_COMPONENTS)

# Plan tiers 1..6 (freemium .. enterprise) and the message priority of each
# (docs/architecture.md §3.2).
PLAN_PRIORITY: Final = {1: 1, 2: 2, 3: 4, 4: 6, 5: 8, 6: 10}
PLANS: Final = tuple(PLAN_PRIORITY)
# Queues are declared with this ceiling; RabbitMQ allocates one sub-queue per level.
MAX_PRIORITY: Final = 10
# classic: a queue lives on one node's disk; quorum: a Raft log replicated on a majority of a
# cluster's nodes (topology/spec.py derives each queue's arguments from it).
QueueType = Literal["classic", "quorum"]
# What carries tasks and results: RabbitMQ, or a table of PostgreSQL (shared/job_queue.py).
Transport = Literal["rabbitmq", "postgres"]

MEDIA_INPUT_TYPES: Final = ("image", "audio", "video")

# Live state outlives any sane session by far but still cleans itself up.
LIVE_STATE_TTL_S: Final = 24 * 3600
# Media text is needed only while the session's four tasks run.
MEDIA_CACHE_TTL_S: Final = 3600

# Advisory-lock key for migrations: any constant works, it only has to be the same everywhere.
MIGRATION_LOCK_KEY: Final = 0x5645_5244  # "VERD"

# Header names carried on task messages.
ATTEMPT_HEADER: Final = "x-attempt"
REASON_HEADER: Final = "x-verdict-reason"
# The routing key a dead-lettered message arrived with: where a replay sends it back.
ORIGIN_HEADER: Final = "x-verdict-origin"
# How often a dead letter has been sent back to its queue: a letter at DLQ_MAX_REPLAYS is a
# loop, refused by replay unless forced. Kept through retries and dead-lettering again.
REPLAYS_HEADER: Final = "x-verdict-replays"
# When we dead-lettered it (epoch milliseconds): its age in the DLQ, and part of its id.
DEAD_AT_HEADER: Final = "x-verdict-dead-at"
# The tenant whose session a task belongs to, set by the API: operators find a tenant's dead
# letters by it. Display and filtering only; nothing is decided on it (headers are not signed).
TENANT_HEADER: Final = "tenant"
# On a copy parked because the DLQ was full: the reason and kind it is to be dead-lettered
# with when it returns (it is not run or applied again).
PARKED_HEADER: Final = "x-verdict-parked"
PARKED_KIND_HEADER: Final = "x-verdict-parked-kind"
# Their HMAC under the parking process's key: any process that may write to the retry tiers
# could otherwise have any message dead-lettered with a reason and kind of its choosing.
PARKED_MAC_HEADER: Final = "x-verdict-parked-mac"

# Worker defaults per component: (concurrency, prefetch per plan queue). Prefetch from the
# original deployment (docs/architecture.md §1.1); media work is slow and heavy, so it takes
# one at a time.
WORKER_DEFAULTS: Final = {
    "media_preprocess": (2, 1),
    "techniques": (4, 5),
    "ai_tampered": (4, 5),
    "claims": (3, 3),
    "domain": (8, 10),
}
AGGREGATOR_PREFETCH: Final = 10

# A reviewer's claim on a queued verdict lapses after this long (REVIEW_CLAIM_TTL_S): long
# enough to read a session and write a note, short enough that an abandoned item returns
# to the queue within the review objective.
REVIEW_CLAIM_TTL_S: Final = 15 * 60.0
