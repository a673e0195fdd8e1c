"""What a client reads when a component fails: the problem in user terms.

Failure results go to clients; exception class names, setting names and file paths stay in
the logs, which keep the full detail (workers.retry.describe).
"""

from __future__ import annotations

from shared.errors import (
    AnalyserFailed,
    AnalysisCrashed,
    AnalysisError,
    AnalysisTimeout,
    MediaUnavailable,
    RetryableAnalysisError,
)
from workers.analysis.errors import FactCheckStoreMissing, MediaPathRefused, UnreadableMedia

SERVICE_UNAVAILABLE = "a service the analysis needs is unavailable"
# First match wins: a subclass comes before its base.
USER_REASONS: tuple[tuple[type[BaseException], str], ...] = (
    (MediaPathRefused, "the media file could not be read"),
    (UnreadableMedia, "the media file could not be read"),
    (MediaUnavailable, "this kind of media cannot be analysed: a service it needs is unavailable"),
    (AnalysisCrashed, "the analysis stopped unexpectedly"),
    (AnalyserFailed, "the analysis could not process this input"),
    (RetryableAnalysisError, SERVICE_UNAVAILABLE),
    (FactCheckStoreMissing, SERVICE_UNAVAILABLE),
    (AnalysisError, "the input could not be analysed"),
)
INTERNAL_ERROR = "an internal error stopped the analysis"


def user_reason(error: BaseException) -> str:
    """A short reason naming the problem, never an exception class, setting or path."""
    if isinstance(error, AnalysisTimeout):
        return f"timeout: analysis took longer than {error.limit_s:g} s"
    if isinstance(error, TimeoutError):
        return "timeout: a step of the analysis took too long"
    for kind, reason in USER_REASONS:
        if isinstance(error, kind):
            return reason
    return INTERNAL_ERROR
