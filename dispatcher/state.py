"""The API process's connections, opened in the lifespan and shared by every request."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field

import asyncpg
import httpx
import structlog
from aio_pika.abc import AbstractRobustConnection
from redis.asyncio import Redis

from shared.broker import Publisher, connect
from shared.errors import BrokerUnavailable
from shared.settings import Settings
from topology.spec import Names

log = structlog.get_logger(__name__)

# While the broker is down at start-up, try again this often in the background.
BROKER_RETRY_S = 2.0
# How long a request waits for a recovering channel before it is analysed synchronously.
API_RECONNECT_WAIT_S = 1.0


@dataclass
class AppState:
    settings: Settings
    pool: asyncpg.Pool
    redis: Redis
    http: httpx.AsyncClient
    publisher: Publisher | None = None
    connection: AbstractRobustConnection | None = None
    _connector: asyncio.Task[None] | None = field(default=None, repr=False)

    def start_broker(self) -> None:
        """Connect in the background; until then the API analyses synchronously."""
        self._connector = asyncio.create_task(self._connect_until_up())

    async def _connect_until_up(self) -> None:
        names = Names(self.settings.topology_prefix)
        while True:
            try:
                self.connection = await connect(self.settings.amqp_url, "api")
                # A short wait for a recovering channel: past it the API analyses in-process.
                self.publisher = await Publisher(
                    self.connection, names, self.settings.publish_timeout_s, API_RECONNECT_WAIT_S
                ).open()
                log.info("api connected to rabbitmq")
                return
            except BrokerUnavailable as exc:
                log.warning("rabbitmq unreachable, retrying", error=str(exc))
                await asyncio.sleep(BROKER_RETRY_S)

    async def close(self) -> None:
        if self._connector is not None:
            self._connector.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._connector
        if self.connection is not None:
            await self.connection.close()
        await self.http.aclose()
        await self.redis.aclose()
        await self.pool.close()
