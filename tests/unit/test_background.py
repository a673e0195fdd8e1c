"""Background loops end when cancelled, even when a library turns the cancellation into its
own error (what kept stopped workers from exiting)."""

import asyncio
import contextlib

from shared.urgency import UrgentGate, UrgentSignals


class CancelToConnectionError:
    """A pubsub whose read answers a cancellation with ConnectionError, as redis-py's can."""

    async def subscribe(self, channel: str) -> None:
        return None

    async def listen(self):
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            raise ConnectionError("Connection closed by server.") from None
        yield {}  # pragma: no cover - never reached

    async def aclose(self) -> None:
        return None


class FakeRedis:
    def pubsub(self, **kwargs: object) -> CancelToConnectionError:
        return CancelToConnectionError()


async def test_the_urgent_signal_follower_ends_when_cancelled_mid_read():
    """Cancelled while reading, the follower stops instead of logging an outage and
    subscribing again (which left `_cancel_all_tasks` waiting for it forever)."""
    follower = asyncio.create_task(UrgentSignals(FakeRedis(), "p").follow(UrgentGate(8, 0.03)))
    await asyncio.sleep(0.05)  # reading
    follower.cancel()
    done, _ = await asyncio.wait({follower}, timeout=5)
    assert follower in done and follower.cancelled()


async def test_a_stopped_process_cancels_what_its_main_left_running(monkeypatch):
    """Tasks left running when a process's main returns are cancelled and awaited; one that
    will not end makes the process exit 1 at once instead of hanging in the loop's clean-up."""
    from ops import cli

    exits: list[int] = []
    monkeypatch.setattr(cli.os, "_exit", exits.append)
    polite = asyncio.create_task(asyncio.Event().wait())
    await cli.end_leftover_tasks(1.0, {polite})
    assert polite.cancelled() and exits == []

    released = asyncio.Event()

    async def stubborn():
        while not released.is_set():
            try:
                await released.wait()
            except asyncio.CancelledError:
                continue

    task = asyncio.create_task(stubborn())
    await asyncio.sleep(0)
    await cli.end_leftover_tasks(0.2, {task})
    assert exits == [1]
    released.set()
    await task


async def test_a_process_still_stopping_after_the_limit_logs_where_each_task_hangs(
    monkeypatch, capfd
):
    """Past STUCK_STOPPING_S after SIGTERM, a process that has not ended logs every task's
    stack (and the threads'), so a stop that ends in the supervisor's SIGKILL says where."""
    from shared import background

    logged: list[dict] = []
    monkeypatch.setattr(
        background.log, "error", lambda event, **kw: logged.append({"event": event, **kw})
    )

    async def hanging_in_shutdown():
        await asyncio.Event().wait()

    hung = asyncio.create_task(hanging_in_shutdown())
    stop = asyncio.Event()
    watchdog = asyncio.create_task(background.report_if_stuck(stop, 0.05))
    await asyncio.sleep(0.1)
    assert logged == []  # nothing before the stop
    stop.set()
    await asyncio.wait_for(watchdog, 5)
    stacks = [entry["stack"] for entry in logged if entry["event"] == "still stopping"]
    assert any("hanging_in_shutdown" in stack for stack in stacks)
    assert "report_if_stuck" in capfd.readouterr().err  # the threads, by faulthandler
    hung.cancel()


async def test_following_urgent_signals_stops_even_if_the_redis_client_swallows_the_cancel():
    """A pubsub read that catches the cancellation and carries on (as redis-py's retrying
    reads can) must not keep the follower, and so the process, alive after its stop."""

    class SwallowingPubSub:
        async def subscribe(self, channel):
            return None

        async def get_message(self, timeout):
            with contextlib.suppress(asyncio.CancelledError):  # as a retrying read would
                await asyncio.sleep(timeout)
            return None

        async def listen(self):
            while True:
                message = await self.get_message(1.0)
                if message is not None:
                    yield message

        async def aclose(self):
            return None

    class FakeRedis:
        def pubsub(self, **_):
            return SwallowingPubSub()

    gate = UrgentGate(5, 1.0)
    follower = asyncio.create_task(UrgentSignals(FakeRedis(), "p").follow(gate))  # type: ignore[arg-type]
    await asyncio.sleep(0.05)
    follower.cancel()
    done, _ = await asyncio.wait({follower}, timeout=5)
    assert follower in done and follower.cancelled()
