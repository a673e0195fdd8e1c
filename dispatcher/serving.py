"""How `verdict api` serves the app: uvicorn's limits and the metrics port, from settings."""

from __future__ import annotations

import asyncio
from types import FrameType
from typing import Any
from wsgiref.simple_server import WSGIServer

import uvicorn
from prometheus_client import start_http_server
from uvicorn.protocols.http.h11_impl import H11Protocol

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
        http=h11_with_header_deadline(settings.api_header_timeout_s),
        ws="none",  # the API has no WebSocket routes
        h11_max_incomplete_event_size=settings.api_max_header_bytes,
        timeout_keep_alive=settings.api_keep_alive_s,
        limit_concurrency=settings.api_max_connections,
        log_level=settings.log_level.lower(),
        access_log=False,
        timeout_graceful_shutdown=10,
        # The client's address (the unknown-key throttle counts by it) comes from
        # X-Forwarded-For only when a proxy of ours is named: uvicorn would otherwise trust it
        # from any loopback client, which could then pick the address it is counted under.
        proxy_headers=settings.api_forwarded_allow_ips is not None,
        forwarded_allow_ips=settings.api_forwarded_allow_ips,
    )


class HeaderDeadline(H11Protocol):
    """uvicorn's h11 protocol with a deadline for each request's head.

    uvicorn times out only idle keep-alive connections, and any byte received cancels that:
    a client trickling header bytes would hold its connection (and a `limit_concurrency`
    slot) forever. Here the head must be complete `header_timeout_s` after the connection
    opened or the previous answer was sent, or the connection is closed.
    """

    header_timeout_s = 10.0
    _deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[arg-type]
        self._arm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        super().connection_lost(exc)

    def _arm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        waiting_for = self.scope  # a new request replaces the scope once its head is read
        self._deadline = self.loop.call_later(self.header_timeout_s, self._expire, waiting_for)

    def _expire(self, waiting_for: object) -> None:
        no_new_head = self.scope is waiting_for
        idle = self.cycle is None or self.cycle.response_complete  # not serving a request
        if no_new_head and idle and not self.transport.is_closing():
            self.transport.close()


def h11_with_header_deadline(timeout_s: float) -> type[H11Protocol]:
    """`HeaderDeadline` with its timeout (uvicorn takes a protocol class, not an instance)."""
    return type("ApiHttpProtocol", (HeaderDeadline,), {"header_timeout_s": timeout_s})


def serve_metrics(settings: Settings) -> WSGIServer | None:
    """The API's Prometheus metrics on a port of their own (loopback unless configured).

    Not a route of the API: metrics are for operators, and a separate listener keeps them
    off the port clients reach.
    """
    if settings.api_metrics_port is None:
        return None
    server, _ = start_http_server(settings.api_metrics_port, settings.api_metrics_host)
    return server


class ApiServer(uvicorn.Server):
    """uvicorn's server, which tells the app it is stopping as the signal arrives.

    uvicorn closes its listeners, then waits for open connections to finish (at most
    `timeout_graceful_shutdown`) before it runs the lifespan's shutdown, so the app learns of
    the stop only after that wait: an event stream open at the time would hold the stop for
    the whole timeout and then be cut off with an error. Here the app's `stopping` event is
    set at once; each stream ends cleanly and its client reconnects.
    """

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        super().handle_exit(sig, frame)
        announce_stop(self.config.app)


def announce_stop(app: Any) -> None:
    """Set the served app's `stopping` event, from a signal handler or from the loop."""
    state = getattr(getattr(app, "state", None), "pipeline", None)
    if state is None:  # not started yet: nothing is streaming
        return
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    loop.call_soon_threadsafe(state.stopping.set)
