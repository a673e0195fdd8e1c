"""How `verdict api` serves the app: uvicorn's limits and the metrics port, from settings."""

from __future__ import annotations

from wsgiref.simple_server import WSGIServer

import uvicorn
from prometheus_client import start_http_server

from dispatcher.app import create_app
from shared.settings import Settings


def server_config(
    settings: Settings, host: str | None = None, port: int | None = None
) -> uvicorn.Config:
    """The API's uvicorn configuration; `verdict api` and the hostile-input tests both use it.

    h11, not httptools: only h11 bounds the request line and headers
    (`h11_max_incomplete_event_size`); uvicorn's httptools protocol buffers any size.
    """
    return uvicorn.Config(
        create_app(settings),
        host=host or settings.api_host,
        port=port or settings.api_port,
        http="h11",
        ws="none",  # the API has no WebSocket routes
        h11_max_incomplete_event_size=settings.api_max_header_bytes,
        timeout_keep_alive=settings.api_keep_alive_s,
        limit_concurrency=settings.api_max_connections,
        log_level=settings.log_level.lower(),
        access_log=False,
        timeout_graceful_shutdown=10,
    )


def serve_metrics(settings: Settings) -> WSGIServer | None:
    """The API's Prometheus metrics on a port of their own (loopback unless configured).

    Not a route of the API: metrics are for operators, and a separate listener keeps them
    off the port clients reach.
    """
    if settings.api_metrics_port is None:
        return None
    server, _ = start_http_server(settings.api_metrics_port, settings.api_metrics_host)
    return server
