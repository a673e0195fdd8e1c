"""The HTTP API: accept content, publish tasks, report status and results."""
