"""One exception root; each subsystem has its branch. Control flow lives apart from errors."""


class VerdictError(Exception):
    """Raised when anything in verdict-pipeline fails; the root of every project error."""


class TopologyError(VerdictError):
    """Raised when the broker's objects are missing or differ from the declared spec."""


class ManagementUnreachable(TopologyError):
    """Raised when RabbitMQ's management API cannot be reached at all."""


class PublishError(VerdictError):
    """Raised when the broker does not confirm a published message."""


class BrokerUnavailable(PublishError):
    """Raised when the broker cannot be reached at all."""


class QueueFull(PublishError):
    """Raised when the broker refuses (nacks) a message: its queue hit the length cap, or a
    quorum queue could not commit it on a majority (its leader lost, an election running)."""


class SettlementFailed(VerdictError):
    """A delivery could not be acknowledged (its channel or the job table away): it returns
    to its queue by itself, and its result is applied again, harmlessly."""


class DeadLetterQueueError(VerdictError):
    """Raised when the DLQ cannot be browsed, replayed or purged: missing, or not allowed."""


class MissingCredential(VerdictError):
    """Raised at start-up when a process lacks a key or secret its role needs."""


class InvalidWorkerOptions(VerdictError):
    """Raised when `verdict worker` is asked for unknown, repeated or no components."""


class TenantSettingsError(VerdictError):
    """Raised when tenant settings are refused (invalid values) or a tenant has none."""


class PruneError(VerdictError):
    """Raised when the session record cannot be pruned (Postgres refused or is away)."""


class DataFileError(VerdictError):
    """Raised at start-up when a shipped data file (lexicon, source list) is malformed."""


class EvaluationSetChanged(VerdictError):
    """Raised when the frozen test part of the evaluation set no longer matches its hash."""


class InvalidMessage(VerdictError):
    """Raised when a message body does not parse as the expected schema."""


class AnalysisError(VerdictError):
    """Raised when an executor cannot analyse its input."""

    retryable = False


class RetryableAnalysisError(AnalysisError):
    """Raised when an executor failed for a reason that may pass (a timeout, a 5xx)."""

    retryable = True


class MediaUnavailable(AnalysisError):
    """Raised when media input needs a service (transcription, OCR) that is not configured."""


class AnalysisTimeout(AnalysisError):
    """Raised when an analysis ran past its time limit and was stopped.

    Final, not retried: CPU-bound analysis of the same input takes as long the next time.
    """

    def __init__(self, limit_s: float) -> None:
        super().__init__(f"analysis took longer than {limit_s:g} s")
        self.limit_s = limit_s


class AnalysisCrashed(AnalysisError):
    """Raised when the process running an analysis died (a crash, or killed for its memory)."""


class AnalyserFailed(AnalysisError):
    """Raised when an analyser raised an error of its own on this input.

    Final, not retried: the same pure function fails on the same input the next time; the
    failure result says so and the log keeps the original error."""


# Control flow, not failures: the worker runtime turns these into broker actions.


class Retry(Exception):
    """Raised to re-queue the current task after `delay_ms` without counting an attempt."""

    def __init__(self, delay_ms: int, reason: str) -> None:
        super().__init__(reason)
        self.delay_ms = delay_ms
        self.reason = reason


class Reject(Exception):
    """Raised to dead-letter the current message at once with `reason`."""

    def __init__(self, reason: str, kind: str = "poison") -> None:
        super().__init__(reason)
        self.reason = reason
        self.kind = kind  # a shared.deadletters.DeadLetterKind
