"""The benchmarks' pure helpers: percentiles, summaries, ratios, tables, request bodies."""

import pytest

from scripts.benchlib import percentile, ratio, session_body, summarize, table


def test_percentile_interpolates_between_closest_ranks():
    """Linear between ranks like numpy's default: p50 of 1..4 is 2.5, p0/p100 the ends."""
    assert percentile([4, 1, 3, 2], 50) == 2.5
    assert percentile([4, 1, 3, 2], 0) == 1
    assert percentile([4, 1, 3, 2], 100) == 4
    assert percentile(list(range(1, 101)), 95) == pytest.approx(95.05)


def test_percentile_of_one_value_is_that_value():
    """A single sample is every percentile."""
    assert percentile([7.5], 99) == 7.5


@pytest.mark.parametrize(("values", "q"), [([], 50), ([1.0], -1), ([1.0], 101)])
def test_percentile_rejects_no_values_and_out_of_range_q(values, q):
    """No samples, or q outside 0..100, is an error rather than a made-up figure."""
    with pytest.raises(ValueError):
        percentile(values, q)


def test_summarize_reports_count_percentiles_and_max_in_tenths():
    """Latencies are summarized to 0.1 ms; an empty list says n=0 and nothing else."""
    summary = summarize([10.0, 20.0, 30.0, 40.0])
    assert summary == {"n": 4, "p50_ms": 25.0, "p95_ms": 38.5, "p99_ms": 39.7, "max_ms": 40.0}
    assert summarize([]) == {"n": 0}


def test_ratio_is_none_when_a_side_is_missing_or_zero():
    """A ratio against nothing is no ratio, not a crash or an infinity."""
    assert ratio(3.0, 2.0) == 1.5
    assert ratio(None, 2.0) is None
    assert ratio(3.0, 0) is None


def test_table_pads_columns_and_prints_none_as_a_dash():
    """Columns line up under their headers; missing figures show as '-'."""
    text = table(["name", "p50"], [["ours", 9.5], ["chord", None]])
    assert text.splitlines() == ["name   p50", "-----  ---", "ours   9.5", "chord  -"]


def test_session_body_asks_for_a_text_session_on_the_plan():
    """The benchmark's body is one the API accepts, and asks for the plan given (lowering the
    enterprise key's plan)."""
    from dispatcher.schemas import AnalyzeRequest

    for plan in (1, 6):
        request = AnalyzeRequest.model_validate(session_body(plan))
        assert (request.plan_type, request.input_type) == (plan, "text")
        assert request.body
