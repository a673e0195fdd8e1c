"""Failure reasons in user terms: no exception class, setting or path reaches a client."""

import pytest

from shared.errors import (
    AnalysisCrashed,
    AnalysisError,
    AnalysisTimeout,
    MediaUnavailable,
    RetryableAnalysisError,
)
from workers.analysis.errors import FactCheckStoreMissing, MediaPathRefused, UnreadableMedia
from workers.reasons import INTERNAL_ERROR, user_reason

INTERNAL_WORDS = ("Error", "Exception", "media_root", "transcription_url", "/", "Refused")


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (AnalysisTimeout(120), "timeout: analysis took longer than 120 s"),
        (AnalysisTimeout(1.5), "timeout: analysis took longer than 1.5 s"),
        (TimeoutError(), "timeout: a step of the analysis took too long"),
        (
            MediaPathRefused("media_root is not configured: media files cannot be read"),
            "the media file could not be read",
        ),
        (
            MediaPathRefused("media path '../../etc/passwd' is outside the media root"),
            "the media file could not be read",
        ),
        (
            UnreadableMedia("media file '/srv/media/a.png' does not exist"),
            "the media file could not be read",
        ),
        (
            MediaUnavailable("no transcription service configured (transcription_url)"),
            "this kind of media cannot be analysed: a service it needs is unavailable",
        ),
        (
            AnalysisCrashed("analysis process died with exit code -9"),
            "the analysis stopped unexpectedly",
        ),
        (
            RetryableAnalysisError("fact-check store unavailable: [Errno 111]"),
            "a service the analysis needs is unavailable",
        ),
        (
            FactCheckStoreMissing("fact_checks is missing: apply migration 002"),
            "a service the analysis needs is unavailable",
        ),
        (
            AnalysisError("cannot identify image file <_io.BytesIO>"),
            "the input could not be analysed",
        ),
        (KeyError("DATABASE_URL"), INTERNAL_ERROR),
    ],
)
def test_each_error_is_told_as_the_problem_it_is(error, reason):
    """The reason names the problem; the internal detail (class, setting, path) stays out."""
    told = user_reason(error)
    assert told == reason
    assert not any(word in told for word in INTERNAL_WORDS)
    if not isinstance(error, AnalysisTimeout):  # its message is already in user terms
        assert not str(error) or str(error) not in told
