"""Admission's policy (who may start with how many processing) and its counting: one reading
shared by every request that asks at once, and each admission counted until the next."""

import asyncio

import pytest

from dispatcher.admission import PLAN_SHARE, Admission, AtCapacity, bound_for, has_room
from shared.constants import PLANS


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
    assert set(PLAN_SHARE) == set(PLANS)


def test_a_tiny_limit_still_admits_one_session_of_every_plan():
    assert all(has_room(plan, 0, 1) for plan in PLANS)
    assert not any(has_room(plan, 1, 1) for plan in PLANS)


def test_a_limit_of_zero_admits_everything():
    assert all(has_room(plan, 10**9, 0) for plan in PLANS)


class CountingPool:
    """Answers the processing count as PostgreSQL would, and counts the queries."""

    def __init__(self, processing: int) -> None:
        self.processing = processing
        self.queries = 0

    async def fetchval(self, _sql: str, limit: int) -> int:
        self.queries += 1
        await asyncio.sleep(0.01)  # a round trip, so callers overlap it
        return min(self.processing, limit)


async def never_a_replay() -> bool:
    return False


async def test_requests_at_once_share_one_reading_and_each_admission_counts():
    pool = CountingPool(processing=5)
    admission = Admission(pool, limit=8, wait_s=0.0, recheck_s=60.0)  # type: ignore[arg-type]
    outcomes = await asyncio.gather(
        *(admission.admit(6, never_a_replay) for _ in range(5)), return_exceptions=True
    )
    admitted = [o for o in outcomes if o is None]
    refused = [o for o in outcomes if isinstance(o, AtCapacity)]
    assert pool.queries == 1
    assert (len(admitted), len(refused)) == (3, 2)  # 5 processing, room for 3 more
    assert await admission.processing() == 8


async def test_a_waiting_request_reads_again_and_gets_in_when_sessions_finish():
    pool = CountingPool(processing=8)
    admission = Admission(pool, limit=8, wait_s=5.0, recheck_s=0.02)  # type: ignore[arg-type]
    waiting = asyncio.ensure_future(admission.admit(6, never_a_replay))
    await asyncio.sleep(0.1)
    assert not waiting.done()
    pool.processing = 7
    await asyncio.wait_for(waiting, 1.0)
    assert pool.queries > 2


async def test_a_replay_passes_without_room_and_a_refusal_says_how_full_it_is():
    pool = CountingPool(processing=100)
    admission = Admission(pool, limit=10, wait_s=0.0, recheck_s=1.0)  # type: ignore[arg-type]

    async def replay() -> bool:
        return True

    await admission.admit(1, replay)
    with pytest.raises(AtCapacity, match=r"10 sessions processing, 5 allowed for this plan"):
        await admission.admit(1, never_a_replay)


class BlockedPool(CountingPool):
    """A reading that does not come back until let go."""

    def __init__(self, processing: int) -> None:
        super().__init__(processing)
        self.go = asyncio.Event()

    async def fetchval(self, _sql: str, limit: int) -> int:
        self.queries += 1
        await self.go.wait()
        return min(self.processing, limit)


async def test_far_below_the_limit_a_request_does_not_wait_for_a_new_reading():
    pool = BlockedPool(processing=0)
    admission = Admission(pool, limit=100, wait_s=1.0, recheck_s=0.001)  # type: ignore[arg-type]
    pool.go.set()
    await admission.admit(6, never_a_replay)  # the first reading is waited for
    pool.go.clear()
    await asyncio.sleep(0.01)  # stale now
    await asyncio.wait_for(admission.admit(6, never_a_replay), 0.5)  # read in the background
    assert (pool.queries, await admission.processing()) == (2, 2)
    pool.processing = 2  # both recorded by the time the reading counts
    pool.go.set()
    await asyncio.sleep(0.01)
    # The admission made after the reading began stays counted besides it: twice at worst.
    assert await admission.processing() == 3
