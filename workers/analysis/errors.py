"""Errors of the analysis package, each a branch of the project's root in shared.errors."""

from shared.errors import AnalysisError, MediaUnavailable


class UnreadableMedia(AnalysisError):
    """Raised when a media file is missing, too large, or not in a format we can read."""


class MediaPathRefused(MediaUnavailable):
    """Raised when a media path is absent or resolves outside the configured media root."""


class FactCheckStoreMissing(AnalysisError):
    """Raised when the fact_checks table does not exist (migration 002 not applied)."""


class FactCheckFileInvalid(AnalysisError):
    """Raised when a fact-check file has a line that does not parse as a fact check."""
