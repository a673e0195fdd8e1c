"""Admission's policy (who may start with how many processing) and its counting: one reading
shared by every request that asks at once, and each admission counted until the next."""

import asyncio

import pytest
from pydantic import ValidationError

from dispatcher.admission import PLAN_TENTHS, Admission, AtCapacity, bound_for, has_room
from shared.constants import PLANS
from shared.settings import Settings


@pytest.mark.parametrize("plan", PLANS)
def test_every_plan_has_room_below_its_bound_and_none_at_it(plan):
    bound = bound_for(plan, 100)
    assert has_room(plan, bound - 1, 100)
    assert not has_room(plan, bound, 100)


def test_higher_plans_may_fill_more_of_the_limit_and_enterprise_all_of_it():
    bounds = [bound_for(plan, 64) for plan in sorted(PLANS)]
    assert bounds == sorted(bounds) and len(set(bounds)) == len(bounds)
    assert bound_for(max(PLANS), 64) == 64
    assert bound_for(min(PLANS), 64) == 32
    assert set(PLAN_TENTHS) == set(PLANS)


def test_shares_are_counted_in_whole_sessions_without_float_rounding():
    assert bound_for(3, 90) == 63  # 0.7 * 90 is 62.99999… in floating point
    assert [bound_for(plan, 10) for plan in sorted(PLANS)] == [5, 6, 7, 8, 9, 10]


def test_a_tiny_limit_still_admits_one_session_of_every_plan():
    assert all(has_room(plan, 0, 1) for plan in PLANS)
    assert not any(has_room(plan, 1, 1) for plan in PLANS)


def test_a_limit_of_zero_admits_everything():
    assert all(has_room(plan, 10**9, 0) for plan in PLANS)


class CountingPool:
    """Answers the processing count as PostgreSQL would, and counts the queries."""

    def __init__(self, processing: int, delay_s: float = 0.01) -> None:
        self.processing = processing
        self.delay_s = delay_s
        self.queries = 0

    async def fetchval(self, _sql: str, limit: int) -> int:
        self.queries += 1
        await asyncio.sleep(self.delay_s)  # a round trip, so callers overlap it
        return min(self.processing, limit)


class BlockedPool(CountingPool):
    """A reading that does not come back until let go."""

    def __init__(self, processing: int) -> None:
        super().__init__(processing)
        self.go = asyncio.Event()

    async def fetchval(self, _sql: str, limit: int) -> int:
        self.queries += 1
        await self.go.wait()
        return min(self.processing, limit)


async def never_a_replay() -> bool:
    return False


async def always_a_replay() -> bool:
    return True


def admission(pool, limit, wait_s=0.0, recheck_s=60.0) -> Admission:
    return Admission(pool, limit=limit, wait_s=wait_s, recheck_s=recheck_s)  # type: ignore[arg-type]


async def enter(gate: Admission, plan: int = 6, replay=never_a_replay, hold=None):
    """Take a slot and hold it until `hold` is set (or give it back at once, recorded)."""
    async with gate.slot(plan, replay):
        if hold is not None:
            await hold.wait()


async def test_requests_at_once_share_one_reading_and_each_admission_counts():
    pool = CountingPool(processing=5)
    gate = admission(pool, limit=8)
    outcomes = await asyncio.gather(*(enter(gate) for _ in range(5)), return_exceptions=True)
    admitted = [o for o in outcomes if o is None]
    refused = [o for o in outcomes if isinstance(o, AtCapacity)]
    assert pool.queries == 1
    assert (len(admitted), len(refused)) == (3, 2)  # 5 processing, room for 3 more
    assert await gate.processing() == 8


async def test_a_waiting_request_reads_again_and_gets_in_when_sessions_finish():
    pool = CountingPool(processing=8)
    gate = admission(pool, limit=8, wait_s=5.0, recheck_s=0.02)
    waiting = asyncio.ensure_future(enter(gate))
    await asyncio.sleep(0.1)
    assert not waiting.done()
    pool.processing = 7
    await asyncio.wait_for(waiting, 1.0)
    assert pool.queries > 2


async def test_a_replay_passes_without_room_and_a_refusal_says_how_full_it_is():
    pool = CountingPool(processing=100)
    gate = admission(pool, limit=10, recheck_s=1.0)
    await enter(gate, plan=1, replay=always_a_replay)
    with pytest.raises(AtCapacity, match=r"10 sessions processing, 5 allowed for this plan"):
        await enter(gate, plan=1)


async def test_far_below_the_limit_a_request_does_not_wait_for_a_new_reading():
    pool = BlockedPool(processing=0)
    gate = admission(pool, limit=100, wait_s=1.0, recheck_s=0.001)
    pool.go.set()
    await enter(gate)  # the first reading is waited for
    pool.go.clear()
    await asyncio.sleep(0.01)  # stale now
    await asyncio.wait_for(enter(gate), 0.5)  # read in the background
    assert (pool.queries, await gate.processing()) == (2, 2)
    pool.processing = 2  # both recorded by the time the reading counts
    pool.go.set()
    await asyncio.sleep(0.01)
    # The session recorded after the reading began stays counted besides it: twice at worst.
    assert await gate.processing() == 3


async def test_a_session_admitted_but_not_yet_recorded_is_never_lost_from_the_estimate():
    """Its row may be written after a reading counted: it stays counted until recorded."""
    pool = CountingPool(processing=0, delay_s=0.0)
    gate = admission(pool, limit=2, recheck_s=0.001)
    hold = asyncio.Event()
    recording = asyncio.ensure_future(enter(gate, hold=hold))
    await asyncio.sleep(0.01)  # admitted, its row not written: readings still count 0
    with pytest.raises(AtCapacity):
        await enter(gate)  # 0 read + 1 pending: the second slot of 2 is free …
        await enter(gate)  # … and a third request finds none
    hold.set()
    await recording


async def test_a_block_that_fails_gives_its_room_back():
    pool = CountingPool(processing=0)
    gate = admission(pool, limit=1)
    with pytest.raises(RuntimeError):
        async with gate.slot(6, never_a_replay):
            raise RuntimeError("the broker refused the session")
    await enter(gate)  # the room is free again


async def test_no_request_waits_longer_than_the_wait_even_on_a_reading_that_hangs():
    """Near the limit a request waits for a new reading; one that hangs is given up at the
    wait's end and the request decided on the estimate it had."""
    pool = BlockedPool(processing=0)
    gate = admission(pool, limit=2, wait_s=0.2, recheck_s=0.01)
    pool.go.set()
    hold = asyncio.Event()
    holding = asyncio.ensure_future(enter(gate, hold=hold))  # 1 of 2: near the limit now
    await asyncio.sleep(0.05)
    pool.go.clear()  # every reading from now on hangs
    began = asyncio.get_running_loop().time()
    with pytest.raises(AtCapacity, match="1 sessions processing, 1 allowed"):
        await enter(gate, plan=1)
    await enter(gate, plan=6)  # 1 processing by the estimate: enterprise has room
    assert asyncio.get_running_loop().time() - began < 0.2 + 0.2 + 0.3
    hold.set()
    await holding


async def test_nothing_is_admitted_before_the_first_reading():
    pool = BlockedPool(processing=0)
    gate = admission(pool, limit=4, wait_s=0.1)
    with pytest.raises(AtCapacity, match="could not be counted in time"):
        await asyncio.wait_for(enter(gate), 5.0)


async def test_past_limit_waiting_requests_the_next_is_refused_without_waiting():
    pool = CountingPool(processing=1, delay_s=0.0)
    gate = admission(pool, limit=1, wait_s=5.0, recheck_s=0.05)
    waiters = [asyncio.ensure_future(enter(gate)) for _ in range(1)]
    await asyncio.sleep(0.02)
    began = asyncio.get_running_loop().time()
    with pytest.raises(AtCapacity):
        await enter(gate)
    assert asyncio.get_running_loop().time() - began < 0.5
    pool.processing = 0
    await asyncio.gather(*waiters)


async def test_room_goes_to_the_request_that_came_first():
    """The first request, still deciding (looking up its Idempotency-Key) when room comes,
    gets it before a later one that read the room first."""
    pool = CountingPool(processing=2, delay_s=0.0)
    gate = admission(pool, limit=2, wait_s=2.0, recheck_s=0.01)
    asked, answered = asyncio.Event(), asyncio.Event()
    order: list[str] = []

    async def slow_lookup() -> bool:
        asked.set()
        await answered.wait()
        return False

    async def enter_as(name: str, replay) -> None:
        async with gate.slot(6, replay):
            order.append(name)
            await asyncio.sleep(0.05)

    first = asyncio.ensure_future(enter_as("first", slow_lookup))
    await asked.wait()  # no room: the first request looks up its key
    pool.processing = 1  # room for one
    await asyncio.sleep(0.03)  # the reading is stale: the next request reads the room
    second = asyncio.ensure_future(enter_as("second", never_a_replay))
    await asyncio.sleep(0.05)
    assert order == []  # the second waits behind the first
    answered.set()
    await asyncio.gather(first, second)
    assert order == ["first", "second"]


async def test_a_lower_plan_held_at_its_share_holds_no_higher_plan_back():
    pool = CountingPool(processing=5, delay_s=0.0)
    gate = admission(pool, limit=10, wait_s=2.0, recheck_s=0.01)
    freemium = asyncio.ensure_future(enter(gate, plan=1))  # 5 of its 5: waits
    await asyncio.sleep(0.05)
    await asyncio.wait_for(enter(gate, plan=6), 0.5)  # room below 10: in at once
    assert not freemium.done()
    pool.processing = 4
    await asyncio.wait_for(freemium, 1.0)


def test_settings_refuse_a_recheck_no_shorter_than_the_wait():
    """A waiting request would be refused without a second look at the count."""
    base = {"amqp_url": "amqp://x", "redis_url": "redis://x", "database_url": "postgresql://x"}
    with pytest.raises(ValidationError, match="ADMISSION_RECHECK_S must be shorter"):
        Settings(**base, admission_wait_s=0.5, admission_recheck_s=0.5)
    assert Settings(**base, admission_wait_s=0, admission_recheck_s=0.5).admission_wait_s == 0
    assert Settings(**base).admission_limit == 64
