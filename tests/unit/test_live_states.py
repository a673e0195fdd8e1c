"""Which recorded sessions get a new live state after a batch of results."""

from aggregator.fanin import Recorded, live_states
from aggregator.verdict import Verdict


def recorded(sid: str, duplicate: bool, final: bool) -> Recorded:
    verdict = Verdict(80.0, "critical_risk", 1.0, "completed") if final else None
    progress = {"status": "completed" if final else "processing", "progress": 100 if final else 50}
    return Recorded(sid, "t", progress, verdict, duplicate, {})


def test_new_results_are_announced_and_pure_duplicates_are_not():
    """A redelivered result that changed nothing does not rewrite the live state."""
    states = live_states([recorded("a", False, False), recorded("b", True, False)])
    assert [sid for sid, _ in states] == ["a"]
    assert states[0][1] == {"status": "processing", "progress": 50, "tenant": "t"}


def test_the_batch_that_finalizes_is_announced_even_when_its_results_were_recorded_before():
    """After a crash between recording results and writing the verdict, the retry finds only
    duplicates but finalizes the session: its final state must reach Redis, or pollers read
    "processing" for a day."""
    states = live_states([recorded("s", True, True)])
    assert states == [("s", {"status": "completed", "progress": 100, "tenant": "t"})]
