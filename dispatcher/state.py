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

from dispatcher.queue_watch import ConsumerCounts, watch
from dispatcher.quotas import Quotas
from dispatcher.tenancy import SessionTenants
from shared.broker import Publisher, connect
from shared.errors import BrokerUnavailable
from shared.names import Names
from shared.settings import Settings
from topology.spec import from_settings
from workers.isolation import AnalysisPool

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
    quotas: Quotas = field(init=False)
    publisher: Publisher | None = None
    connection: AbstractRobustConnection | None = None
    tenants: SessionTenants = field(init=False)
    media_readers: ConsumerCounts = field(init=False)
    _connector: asyncio.Task[None] | None = field(default=None, repr=False)
    _watcher: asyncio.Task[None] | None = field(default=None, repr=False)
    _analysis: AnalysisPool | None = field(default=None, repr=False)

    @property
    def analysis(self) -> AnalysisPool:
        """The processes of synchronous analysis, made on first use: the API analyses only
        while the broker is down, and then the first session pays their start (about 1 s)."""
        if self._analysis is None:
            # The sync path analyses a session's four components at once.
            self._analysis = AnalysisPool(self.settings.analysis_processes_for(4))
        return self._analysis

    def __post_init__(self) -> None:
        self.quotas = Quotas(self.settings, self.redis, self.pool)
        self.tenants = SessionTenants(self.pool, self.settings.api_tenant_cache_size)
        self.media_readers = ConsumerCounts(self.settings.api_media_readers_ttl_s)

    def start_broker(self) -> None:
        """Connect in the background; until then the API analyses synchronously."""
        self._connector = asyncio.create_task(self._connect_until_up())
        self._watcher = asyncio.create_task(
            watch(lambda: self.connection, from_settings(self.settings))
        )

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
        for task in (self._connector, self._watcher):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        if self.connection is not None:
            await self.connection.close()
        if self._analysis is not None:
            await self._analysis.close()
        await self.http.aclose()
        await self.redis.aclose()
        await self.pool.close()
