"""How many analysis processes a worker runs, and the content bound a task must fit."""

from shared.api_keys import hashed
from shared.settings import Settings
from tests.conftest import TEST_API_KEYS


def test_a_process_per_task_slot_unless_set():
    """ANALYSIS_PROCESSES=0 gives one analysis process per task slot; a set value stands."""
    base = {"amqp_url": "amqp://x", "redis_url": "redis://x", "database_url": "postgresql://x"}
    assert Settings(**base).analysis_processes_for(9) == 9
    assert Settings(**base, analysis_processes=2).analysis_processes_for(9) == 2
    assert (
        Settings(**base, api_keys=hashed(TEST_API_KEYS)).analysis_processes_for(0) == 1
    )  # never none


def test_the_content_limit_cannot_outgrow_the_message_bound():
    """MAX_CONTENT_CHARS above 250,000 is refused at start-up: a task of 4-byte characters
    would pass the 1 MiB bound every worker rejects unread."""
    import pytest
    from pydantic import ValidationError

    base = {"amqp_url": "amqp://x", "redis_url": "redis://x", "database_url": "postgresql://x"}
    assert Settings(**base, max_content_chars=250_000).max_content_chars == 250_000
    with pytest.raises(ValidationError):
        Settings(**base, max_content_chars=250_001)
