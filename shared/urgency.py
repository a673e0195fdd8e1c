"""Urgent (top-tier) work holds lower tiers back; shared by workers and aggregators.

On a saturated machine the order in which a process starts work is not enough: the
lower-tier work already running, in this process and in every other one, shares the CPU
(and RabbitMQ and Postgres) with the urgent session. So while urgent work is in flight
and the CPUs are saturated, lower tiers wait a little before they start:

- locally, while an urgent task or result is being handled in this process;
- cluster-wide, from the moment the API accepts an urgent session until the aggregator
  finalizes it, for at most `max_hold_s` (`UrgentSignals`: Redis pub/sub, or NOTIFY).

With CPU to spare nothing is held (`shared/cpu.py`): the urgent work would gain nothing
and the lower tiers would lose throughput. Every wait is capped (`max_hold_s` per start,
and per urgent session), so lower tiers keep moving whatever the top-tier load: at 5 urgent
sessions a second and a 30 ms cap they are held at most 15 % of the time, and never starve.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Iterable

import structlog

from shared.background import in_background, raise_if_cancelled, stop_if_cancelled
from shared.constants import MAX_PRIORITY
from shared.cpu import CpuLoad
from shared.house import PubSub
from shared.keys import Keys
from shared.settings import Settings

log = structlog.get_logger(__name__)

# Back-off before re-subscribing after Redis went away.
RESUBSCRIBE_S = 1.0
# The longest a follower waits for a signal before it checks whether it was asked to stop.
LISTEN_POLL_S = 1.0


class Holds:
    """Urgent sessions in flight elsewhere, each until its end or its expiry. Pure."""

    def __init__(self) -> None:
        self._until: dict[str, float] = {}

    def add(self, key: str, now: float, ttl_s: float) -> None:
        self._until[key] = now + ttl_s

    def remove(self, key: str) -> None:
        self._until.pop(key, None)

    def active(self, now: float) -> bool:
        """Whether any hold is still in force at `now`; expired ones are forgotten."""
        for key in [k for k, until in self._until.items() if until <= now]:
            del self._until[key]
        return bool(self._until)

    def __len__(self) -> int:
        return len(self._until)


class UrgentGate:
    """While urgent work is in flight, lower tiers wait (at most `max_hold_s`) to start."""

    def __init__(
        self,
        threshold: int,
        max_hold_s: float,
        clock: Callable[[], float] = time.monotonic,
        busy_threshold: float = 0.0,
    ) -> None:
        self.threshold = threshold
        self.max_hold_s = max_hold_s
        self.busy_threshold = busy_threshold
        self._clock = clock
        self._saturated = True  # until the CPU load is known
        self._running = 0
        self._holds = Holds()
        self._wake = asyncio.Event()

    def urgent(self, priority: int) -> bool:
        return priority >= self.threshold

    def is_clear(self) -> bool:
        """The CPUs have room to spare, or nothing urgent runs here and no urgent session is
        in flight elsewhere."""
        if not self._saturated:
            return True
        return not self._running and not self._holds.active(self._clock())

    def cpu_measured(self, busy: float | None) -> None:
        """The CPUs' busy share (0..1; None: unknown, taken as saturated). Below
        `busy_threshold` there is spare CPU: holding lower tiers back would cost them their
        throughput and give the urgent work nothing, so nothing is held."""
        saturated = busy is None or busy >= self.busy_threshold
        if self._saturated and not saturated:
            self._notify()
        self._saturated = saturated

    def started(self, priority: int) -> None:
        """Work of `priority` started here (urgent work holds lower tiers back until done)."""
        if self.urgent(priority):
            self._running += 1

    def finished(self, priority: int) -> None:
        if self.urgent(priority):
            self._running = max(0, self._running - 1)
            self._notify()

    def hold(self, key: str, ttl_s: float | None = None) -> None:
        """An urgent session is in flight somewhere in the cluster: hold lower tiers back
        until it ends, for at most `ttl_s` (default `max_hold_s`; a lost end lapses too)."""
        now = self._clock()
        self._holds.active(now)  # forget expired holds, even while nothing is held back
        self._holds.add(key, now, self.max_hold_s if ttl_s is None else ttl_s)

    def release(self, key: str) -> None:
        self._holds.remove(key)
        self._notify()

    def arrived(self, priority: int) -> None:
        """New work is waiting: an urgent arrival lets a waiting start take it at once."""
        if self.urgent(priority):
            self._notify()

    async def admit(self, next_priority: Callable[[], int]) -> None:
        """Return when the next work in line may start: at once if it is urgent or the gate
        is clear; else as soon as either becomes true, or after `max_hold_s` (the urgent
        work's head start, so it can never starve the lower tiers).

        `next_priority` is asked again after every wake-up: an urgent arrival overtakes."""
        deadline: float | None = None
        while not self.urgent(next_priority()) and not self.is_clear():
            now = self._clock()
            deadline = now + self.max_hold_s if deadline is None else deadline
            if now >= deadline:
                return
            wake = self._wake
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(deadline - now):
                    await wake.wait()

    def release_all(self) -> None:
        """Let everything through from now on, without any hold (a stopping process)."""
        self._running = 0
        self._holds = Holds()
        self.max_hold_s = 0.0
        self._notify()

    def _notify(self) -> None:
        self._wake.set()
        self._wake = asyncio.Event()


def encode_signal(begin: bool, session_id: str) -> str:
    return f"{'+' if begin else '-'}{session_id}"


def decode_signal(data: bytes | str) -> tuple[bool, str] | None:
    """`+id` → (True, id): an urgent session began; `-id` → (False, id): it ended."""
    text = data.decode(errors="replace") if isinstance(data, bytes) else data
    if len(text) < 2 or text[0] not in "+-":
        return None
    return text[0] == "+", text[1:]


class UrgentSignals:
    """Urgent sessions in flight, announced to every worker and aggregator over the house's
    channels (Redis pub/sub, or NOTIFY without Redis)."""

    def __init__(self, channels: PubSub, key_prefix: str) -> None:
        self.channels = channels
        self.channel = Keys(key_prefix).urgent

    async def begin(self, session_id: str) -> None:
        await self.channels.publish_many([(self.channel, encode_signal(True, session_id))])

    async def end(self, session_ids: Iterable[str]) -> None:
        ended = [(self.channel, encode_signal(False, sid)) for sid in session_ids]
        if ended:
            await self.channels.publish_many(ended)

    async def follow(self, gate: UrgentGate) -> None:
        """Feed the gate with begins and ends until cancelled; Redis outages only pause it
        (a lost end lapses with the hold)."""
        while True:
            pubsub = self.channels.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(self.channel)
                while True:
                    # Polled, not `listen()`: each turn checks this task's stop request.
                    message = await pubsub.get_message(timeout=LISTEN_POLL_S)
                    stop_if_cancelled()
                    if message is None:
                        continue
                    signal = decode_signal(message.get("data", b""))
                    if signal is None:
                        continue
                    begin, session_id = signal
                    if begin:
                        gate.hold(session_id)
                    else:
                        gate.release(session_id)
            except Exception as exc:
                raise_if_cancelled(exc)
                log.warning("urgent signals interrupted", error=repr(exc))
                await asyncio.sleep(RESUBSCRIBE_S)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()


def gate_for(settings: Settings) -> UrgentGate:
    """The gate of a worker or aggregator; with the scheduler off nothing is urgent."""
    threshold = settings.urgent_threshold
    return UrgentGate(
        MAX_PRIORITY + 1 if threshold is None else threshold,
        settings.urgent_hold_ms / 1000,
        busy_threshold=settings.urgent_cpu_busy,
    )


@contextlib.asynccontextmanager
async def precedence_followed(gate: UrgentGate, signals: UrgentSignals) -> AsyncIterator[None]:
    """While the block runs, feed the gate: urgent sessions cluster-wide, and the CPU load."""
    async with (
        in_background(signals.follow(gate), "urgent signals"),
        in_background(CpuLoad().follow(gate.cpu_measured), "cpu load"),
    ):
        yield
