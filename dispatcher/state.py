"""The API process's connections, opened in the lifespan and shared by every request."""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import asyncpg
import httpx
import structlog
from aio_pika.abc import AbstractRobustConnection
from nacl.signing import SigningKey

from dispatcher import online, review_backlog
from dispatcher.admission import Admission
from dispatcher.event_tokens import token_key
from dispatcher.online import OnlineWorkers
from dispatcher.queue_figures import read_figures
from dispatcher.queue_watch import QueueHistory, broker_readings, table_readings, watch
from dispatcher.quotas import Quotas
from dispatcher.tenancy import SessionTenants
from shared.background import in_background
from shared.broker import Publisher, connect
from shared.errors import BrokerUnavailable
from shared.house import House, open_house
from shared.job_queue import TablePublisher
from shared.live import Live
from shared.names import Names
from shared.resources import Resources
from shared.settings import Settings
from shared.signing import task_signer
from shared.tenant_store import TenantSettingsCache
from shared.transport import Outbox
from topology.spec import from_settings
from workers.isolation import AnalysisPool

log = structlog.get_logger(__name__)

# Without Redis: the connections the API's house (rate-limit windows, the registry, sign-outs)
# holds beside the record's 20.
HOUSE_POOL_SIZE = 10
# While the broker is down at start-up, try again this often in the background.
BROKER_RETRY_S = 2.0
# How long a request waits for a recovering channel before it is analysed synchronously.
API_RECONNECT_WAIT_S = 1.0


@dataclass
class AppState:
    settings: Settings
    pool: asyncpg.Pool
    # Short-lived shared state (shared/house.py): Redis, or PostgreSQL without it. With
    # Redis, event streams subscribe on a pool of their own, bounded (API_MAX_EVENT_STREAMS).
    house: House
    http: httpx.AsyncClient
    quotas: Quotas = field(init=False)
    # Sessions processing across the pipeline, and whether a new one may start (503 beyond).
    admission: Admission = field(init=False)
    # Live states and news of sessions (the cache in Redis, if there is one).
    live: Live = field(init=False)
    publisher: Outbox | None = None
    connection: AbstractRobustConnection | None = None
    tenants: SessionTenants = field(init=False)
    # Each tenant's settings, cached until PostgreSQL notifies a change (shared/tenant_store.py).
    tenant_settings: TenantSettingsCache = field(init=False)
    # The worker registry, read at most every API_WORKERS_TTL_S (dispatcher/online.py).
    workers: OnlineWorkers = field(init=False)
    # Event streams open now, by tenant (API_MAX_STREAMS_PER_TENANT), and those an events
    # token opened, by session (TOKEN_STREAMS_PER_SESSION).
    streams: Counter[str] = field(default_factory=Counter)
    token_streams: Counter[str] = field(default_factory=Counter)
    # Set as the server begins to stop (dispatcher/serving.py): open event streams end then,
    # and their clients reconnect, rather than holding the stop for uvicorn's graceful timeout.
    stopping: asyncio.Event = field(default_factory=asyncio.Event)
    # The last hour of queue readings, for the console's charts.
    queue_history: QueueHistory = field(default_factory=QueueHistory)
    task_signer: SigningKey = field(init=False, repr=False)
    # Signs the tokens of the events links it hands out (dispatcher/event_tokens.py).
    events_key: bytes = field(init=False, repr=False)
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
        # Every task the API publishes is signed (shared/signing.py); no key, no start.
        self.task_signer = task_signer(self.settings)
        self.events_key = token_key(self.settings)
        self.live = Live(self.house, self.settings.key_prefix)
        self.tenant_settings = TenantSettingsCache(self.pool, self.settings.tenant_settings_ttl_s)
        self.quotas = Quotas(self.settings, self.house, self.pool, self.tenant_settings)
        self.admission = Admission(
            self.pool,
            self.settings.admission_limit,
            self.settings.admission_wait_s,
            self.settings.admission_recheck_s,
            self.settings.admission_target_s,
        )
        self.tenants = SessionTenants(self.pool, self.settings.api_tenant_cache_size)
        self.workers = OnlineWorkers(
            self.house.shelf, self.settings.key_prefix, self.settings.api_workers_ttl_s
        )

    @classmethod
    @contextlib.asynccontextmanager
    async def opened(cls, settings: Settings) -> AsyncIterator[AppState]:
        """The API's connections for the length of the block: Postgres, Redis (if any) and
        HTTP at once, the broker in the background (until it is up the API analyses synchronously);
        all closed in reverse on exit (shared.resources)."""
        async with Resources() as opened:
            pool = await opened.pool(settings.database_url, max_size=20)
            if settings.redis_url:
                streams = opened.redis(
                    settings.redis_url, max_connections=settings.api_max_event_streams
                )
                house = await open_house(opened, settings, pool, subscriber=streams)
            else:
                # Without Redis, rate-limit windows and the registry get connections of their
                # own: a flood that holds every record connection must not switch the rate
                # limits off (they fail open when their store does not answer in time).
                own = await opened.pool(settings.database_url, max_size=HOUSE_POOL_SIZE)
                house = await open_house(opened, settings, own)
            state = cls(settings=settings, pool=pool, house=house, http=opened.http())
            opened.closes(state, lambda s: s._close_broker_and_analysis())
            if settings.transport == "postgres":  # tasks are rows of the database it holds
                names = Names(settings.topology_prefix)
                state.publisher = TablePublisher(state.pool, names, task_signer=state.task_signer)
            else:
                await opened.enter(in_background(state._connect_until_up(), "broker connection"))
            topology = from_settings(settings)
            depths = watch(
                table_readings(state.pool, Names(settings.topology_prefix), topology)
                if settings.transport == "postgres"
                else broker_readings(lambda: state.connection, topology),
                state.queue_history,
                lambda: read_figures(state.pool, state.http, settings),
            )
            await opened.enter(in_background(depths, "queue depths"))
            await opened.enter(in_background(online.watch(state.workers), "worker registry"))
            await opened.enter(in_background(review_backlog.watch(state.pool), "review backlog"))
            await opened.enter(
                in_background(
                    state.tenant_settings.listen(opened.listener(settings.database_url)),
                    "tenant settings listener",
                )
            )
            yield state

    @property
    def broker_up(self) -> bool:
        """Whether sessions go to the broker now (otherwise the API analyses them itself).
        On the table transport they always go to the table: PostgreSQL holds the session too."""
        if self.settings.transport == "postgres":
            return self.publisher is not None
        connection = self.connection
        return self.publisher is not None and connection is not None and not connection.is_closed

    @property
    def checks_workers(self) -> bool:
        """Whether a submission is judged by the worker registry: only sessions bound for the
        broker are (with the broker away the API analyses the session itself)."""
        return self.settings.api_check_workers and self.broker_up

    async def _connect_until_up(self) -> None:
        names = Names(self.settings.topology_prefix)
        while True:
            try:
                self.connection = await connect(self.settings.amqp_urls(), "api")
                # A short wait for a recovering channel: past it the API analyses in-process.
                self.publisher = await Publisher(
                    self.connection,
                    names,
                    self.settings.publish_timeout_s,
                    API_RECONNECT_WAIT_S,
                    task_signer=self.task_signer,
                ).open()
                log.info("api connected to rabbitmq")
                return
            except BrokerUnavailable as exc:
                log.warning("rabbitmq unreachable, retrying", error=str(exc))
                await asyncio.sleep(BROKER_RETRY_S)

    async def _close_broker_and_analysis(self) -> None:
        """What the API opened after start-up: the broker connection, the analysis pool."""
        if self.connection is not None:
            await self.connection.close()
        if self._analysis is not None:
            await self._analysis.close()
