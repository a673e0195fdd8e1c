"""AMQP connections whose frames leave in one write per event-loop turn.

aiormq writes every frame it sends (a publish, an ack, a heartbeat) with its own
`transport.write`, and a transport whose buffer is empty sends at once: one `send` system
call per frame, about a quarter of a busy worker's CPU. Here the connection's writes are
gathered and handed to the socket together once the turn's ready callbacks have run (or as
soon as `FLUSH_BYTES` are waiting), so what a process sends in one turn (acks, heartbeats,
publishes on its several channels) costs one system call. aiormq sends at most one publish
per channel per turn (it waits for each frame to be written before the next), so one
channel's publishes are not joined. Order is kept; nothing waits on a timer, so an idle
message leaves in the same turn as before.

aiormq takes the transport factory as a parameter of its connection (`transport_factory`);
`CoalescingTransportFactory` opens the TCP or TLS stream with its writes going through
`CoalescingTransport`.
"""

from __future__ import annotations

import asyncio
from typing import Any

from aiormq.connection import TransportFactory
from aiormq.exceptions import AMQPConnectionError
from yarl import URL

# Bytes gathered before they are written without waiting for the end of the turn: a bulk
# publish must not hold megabytes in the list, and the transport's own flow control (which
# `drain` waits on) sees them as they go.
FLUSH_BYTES = 64 * 1024


class CoalescingTransport(asyncio.Transport):
    """A write transport that gathers writes and passes them on once per loop turn."""

    def __init__(self, inner: asyncio.WriteTransport, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__()
        self._inner = inner
        self._loop = loop
        self._pending: list[bytes] = []
        self._pending_bytes = 0
        self._scheduled = False

    # -- writing ---------------------------------------------------------------------------

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not data:
            return
        self._pending.append(bytes(data))
        self._pending_bytes += len(data)
        if self._pending_bytes >= FLUSH_BYTES:
            self.flush()
        elif not self._scheduled:
            self._scheduled = True
            self._loop.call_soon(self._flush_scheduled)

    def writelines(self, list_of_data: Any) -> None:
        for data in list_of_data:
            self.write(data)

    def _flush_scheduled(self) -> None:
        self._scheduled = False
        self.flush()

    def flush(self) -> None:
        """Hand what is gathered to the socket's transport now."""
        if not self._pending:
            return
        data = self._pending[0] if len(self._pending) == 1 else b"".join(self._pending)
        self._pending.clear()
        self._pending_bytes = 0
        # On a lost connection it is dropped: no confirm comes back for it, so its publish
        # fails and its sender retries (nothing is resent by aiormq or aio-pika).
        if not self._inner.is_closing():
            self._inner.write(data)

    def write_eof(self) -> None:
        self.flush()
        self._inner.write_eof()

    def can_write_eof(self) -> bool:
        return self._inner.can_write_eof()

    def get_write_buffer_size(self) -> int:
        return self._pending_bytes + self._inner.get_write_buffer_size()

    def get_write_buffer_limits(self) -> tuple[int, int]:
        return self._inner.get_write_buffer_limits()

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        self._inner.set_write_buffer_limits(high, low)

    # -- closing ---------------------------------------------------------------------------

    def close(self) -> None:
        try:
            self.flush()
        finally:  # the socket is closed even if the last write is refused
            self._inner.close()

    def abort(self) -> None:
        self._pending.clear()
        self._pending_bytes = 0
        self._inner.abort()

    def is_closing(self) -> bool:
        return self._inner.is_closing()

    # -- the rest is the socket's ----------------------------------------------------------

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self._inner.get_extra_info(name, default)

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self._inner.get_protocol()

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self._inner.set_protocol(protocol)

    def is_reading(self) -> bool:
        return self._inner.is_reading()  # type: ignore[attr-defined,no-any-return]

    def pause_reading(self) -> None:
        self._inner.pause_reading()  # type: ignore[attr-defined]

    def resume_reading(self) -> None:
        self._inner.resume_reading()  # type: ignore[attr-defined]


class CoalescingTransportFactory(TransportFactory):
    """aiormq's TCP or TLS connection (by the URL's scheme), its writes coalesced.

    The stream is made as `asyncio.open_connection` makes it, with the writer on the
    coalescing transport (a second writer on the socket's own transport would close it when
    collected)."""

    async def create(
        self, url: URL, **kwargs: Any
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        ssl_context_provider = kwargs.pop("ssl_context_provider", None)
        ssl = None
        if url.scheme == "amqps":  # never plaintext for a TLS URL, as aiormq's own factory
            if ssl_context_provider is None:
                raise AMQPConnectionError("no TLS context for an amqps URL")
            ssl = await ssl_context_provider.get_context()
        # aiormq gives the URL its scheme's default port before it gets here.
        if url.host is None or url.port is None:
            raise AMQPConnectionError(f"no host or port in {url.with_password(None)}")
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(loop=loop)
        protocol = asyncio.StreamReaderProtocol(reader, loop=loop)
        try:
            transport, _ = await loop.create_connection(
                lambda: protocol, host=url.host, port=url.port, ssl=ssl, **kwargs
            )
        except OSError as exc:
            raise AMQPConnectionError(*exc.args) from exc
        coalescing = CoalescingTransport(transport, loop)
        return reader, asyncio.StreamWriter(coalescing, protocol, reader, loop)
