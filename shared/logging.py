"""Structured JSON logs (structlog) carrying session_id, component and attempt."""

from __future__ import annotations

import logging
import sys
from typing import TextIO, cast

import structlog


def configure(level: str = "INFO", json: bool = True) -> None:
    """Configure structlog and the standard library once per process."""
    logging.basicConfig(format="%(message)s", stream=sys.stderr, level=level.upper())
    for noisy in ("aio_pika", "aiormq", "uvicorn.access"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    renderer = structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer()
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level.upper())),
        logger_factory=structlog.PrintLoggerFactory(cast(TextIO, _CurrentStderr())),
        cache_logger_on_first_use=True,
    )


class _CurrentStderr:
    """Whatever `sys.stderr` is when a line is written, not when logging was configured: a
    stream swapped in for a while (click's test runner, pytest's capture) and dropped again
    would otherwise take every later log line with it."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()
