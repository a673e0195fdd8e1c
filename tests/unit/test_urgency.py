"""Urgent work holds lower tiers back: locally while it runs, cluster-wide while in flight."""

import asyncio
from collections.abc import Callable

from shared.urgency import Holds, UrgentGate, decode_signal, encode_signal


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def fixed(priority: int) -> Callable[[], int]:
    """What is next in line, as the worker's buffer would answer."""
    return lambda: priority


async def test_urgent_work_holds_lower_tiers_back_until_it_finishes():
    """While an enterprise task runs, a freemium start waits; business and up pass at once."""
    gate = UrgentGate(threshold=8, max_hold_s=5)
    gate.started(10)
    await asyncio.wait_for(gate.admit(fixed(8)), 0.1)  # urgent work is never held back
    waiting = asyncio.ensure_future(gate.admit(fixed(1)))
    await asyncio.sleep(0.01)
    assert not waiting.done()
    gate.finished(10)
    await asyncio.wait_for(waiting, 0.1)


async def test_a_gate_with_nothing_urgent_in_flight_admits_everyone():
    """No urgent work anywhere: every tier starts at once; shutdown opens the gate."""
    gate = UrgentGate(threshold=8, max_hold_s=5)
    await asyncio.wait_for(gate.admit(fixed(1)), 0.1)
    gate.started(9)
    gate.hold("s1")
    gate.release_all()
    await asyncio.wait_for(gate.admit(fixed(1)), 0.1)


async def test_the_hold_is_capped_so_long_urgent_work_cannot_starve_lower_tiers():
    """A low tier waits at most the head start, even while the urgent work goes on."""
    gate = UrgentGate(threshold=8, max_hold_s=0.02)
    gate.started(10)
    gate.hold("elsewhere")
    started = asyncio.get_running_loop().time()
    # Admitted at all proves the cap (without it the wait never ends); a generous bound, so a
    # loaded machine does not fail it, and the head start was really waited.
    await asyncio.wait_for(gate.admit(fixed(1)), 5)
    assert asyncio.get_running_loop().time() - started >= 0.015


async def test_an_urgent_session_elsewhere_holds_lower_tiers_until_its_end():
    """The API's begin closes the gate in every process; the aggregator's end reopens it."""
    gate = UrgentGate(threshold=8, max_hold_s=5)
    gate.hold("session-a")
    gate.hold("session-b")
    waiting = asyncio.ensure_future(gate.admit(fixed(1)))
    await asyncio.sleep(0.01)
    gate.release("session-a")
    await asyncio.sleep(0.01)
    assert not waiting.done()  # session-b is still in flight
    gate.release("session-b")
    await asyncio.wait_for(waiting, 0.1)


async def test_an_urgent_arrival_overtakes_a_held_start():
    """A slot held back on a freemium delivery takes an enterprise one as soon as it arrives."""
    gate = UrgentGate(threshold=8, max_hold_s=5)
    gate.hold("in-flight")
    next_in_line = [1]
    waiting = asyncio.ensure_future(gate.admit(lambda: next_in_line[0]))
    await asyncio.sleep(0.01)
    gate.arrived(1)  # another freemium delivery changes nothing
    await asyncio.sleep(0.01)
    assert not waiting.done()
    next_in_line[0] = 10
    gate.arrived(10)
    await asyncio.wait_for(waiting, 0.1)


def test_a_hold_whose_end_was_never_announced_lapses():
    """A crashed aggregator never announces the end: the hold expires by its TTL."""
    clock = Clock()
    gate = UrgentGate(threshold=8, max_hold_s=5, clock=clock)
    gate.hold("lost", ttl_s=2)
    assert not gate.is_clear()
    clock.now = 1.9
    assert not gate.is_clear()
    clock.now = 2.0
    assert gate.is_clear()


def test_an_urgent_session_holds_others_for_at_most_the_head_start():
    """However long the urgent session runs, the cluster-wide hold ends after max_hold_s."""
    clock = Clock()
    gate = UrgentGate(threshold=8, max_hold_s=0.03, clock=clock)
    gate.hold("long-session")
    clock.now = 0.029
    assert not gate.is_clear()
    clock.now = 0.03
    assert gate.is_clear()


def test_holds_expire_one_by_one():
    holds = Holds()
    holds.add("a", now=0, ttl_s=1)
    holds.add("b", now=0, ttl_s=3)
    assert holds.active(0.5) and len(holds) == 2
    assert holds.active(1.5) and len(holds) == 1
    holds.remove("b")
    holds.remove("never-added")
    assert not holds.active(1.5)


def test_signals_round_trip_and_garbage_is_ignored():
    sid = "0b7e9a4c-8f43-4c8e-9d6a-5b3f1f2a7c10"
    assert decode_signal(encode_signal(True, sid).encode()) == (True, sid)
    assert decode_signal(encode_signal(False, sid)) == (False, sid)
    for garbage in (b"", b"+", b"x123", "?id"):
        assert decode_signal(garbage) is None


async def test_with_spare_cpu_nothing_is_held_back():
    """Below the busy threshold, holding freemium back would only cost it throughput."""
    gate = UrgentGate(threshold=8, max_hold_s=5, busy_threshold=0.9)
    gate.started(10)
    gate.hold("in-flight")
    gate.cpu_measured(0.6)
    await asyncio.wait_for(gate.admit(fixed(1)), 0.1)
    gate.cpu_measured(0.95)
    assert not gate.is_clear()


async def test_a_start_held_on_a_saturated_machine_goes_once_cpu_frees_up():
    """The load falling below the threshold wakes a start held back by an urgent session."""
    gate = UrgentGate(threshold=8, max_hold_s=5, busy_threshold=0.9)
    gate.hold("in-flight")
    gate.cpu_measured(0.97)
    waiting = asyncio.ensure_future(gate.admit(fixed(1)))
    await asyncio.sleep(0.01)
    assert not waiting.done()
    gate.cpu_measured(0.5)
    await asyncio.wait_for(waiting, 0.1)


def test_an_unknown_load_counts_as_saturated():
    """Where /proc/stat cannot be read, urgent work is held for as before: always."""
    gate = UrgentGate(threshold=8, max_hold_s=5, busy_threshold=0.9)
    gate.hold("in-flight")
    assert not gate.is_clear()  # no reading yet
    gate.cpu_measured(0.1)
    assert gate.is_clear()
    gate.cpu_measured(None)
    assert not gate.is_clear()
