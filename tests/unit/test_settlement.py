"""An aggregator's acknowledgements: a failed one hands the batch back, never dead-letters it."""

import asyncpg
import pytest

from aggregator.applier import ack_all
from shared.errors import SettlementFailed


class Acked:
    def __init__(self) -> None:
        self.acked = False

    async def ack(self, multiple: bool = False) -> None:
        self.acked = True


class CutOff:
    """A row of the postgres transport whose ack met a server shutting down."""

    async def ack(self, multiple: bool = False) -> None:
        raise asyncpg.exceptions.AdminShutdownError("terminating connection")


async def test_a_failed_ack_is_a_settlement_failure_not_a_refusal_of_the_results():
    """apply_safely dead-letters a result when PostgreSQL refuses it (a PostgresError); an
    ack that fails after the results were recorded must not read as one."""
    fine = Acked()
    with pytest.raises(SettlementFailed) as failed:
        await ack_all([fine, CutOff()])  # type: ignore[list-item]
    assert fine.acked
    assert not isinstance(failed.value, asyncpg.PostgresError)
    assert isinstance(failed.value.__cause__, asyncpg.PostgresError)
