"""Dead letters always fit a frame: whitelisted headers, header size estimate, size bounds;
and a parked copy's marker is honoured only when its MAC holds."""

from datetime import datetime
from decimal import Decimal

import pytest
from pamqp import encode

from shared.constants import (
    ATTEMPT_HEADER,
    DEAD_AT_HEADER,
    ORIGIN_HEADER,
    PARKED_HEADER,
    PARKED_KIND_HEADER,
    PARKED_MAC_HEADER,
    REASON_HEADER,
    REPLAYS_HEADER,
    TENANT_HEADER,
)
from shared.deadletters import (
    MAX_REASON_CHARS,
    MAX_VALUE_CHARS,
    carried_headers,
    dead_letter_headers,
    header_bytes,
    oversize,
    parked_letter,
    parking_headers,
)

SID = "5f0c6b1e-2a51-4c39-9d0e-3f0b8f7a2c11"
TASK_HEADERS = {"sessionId": SID, "component": "claims", "planType": 4, ATTEMPT_HEADER: 2}
NOW_MS = 1_700_000_000_000


def test_a_130_kb_header_in_gives_a_small_header_table_out():
    """Only the whitelist survives: a huge foreign header is dropped, the letter stays tiny."""
    original = {**TASK_HEADERS, "pad": "x" * 130_000, "x-trace": ["y" * 1000] * 50}
    headers = dead_letter_headers(original, "invalid task: body", "analysis.claims.4", NOW_MS)
    assert headers == {
        **TASK_HEADERS,
        REASON_HEADER: "invalid task: body",
        ORIGIN_HEADER: "analysis.claims.4",
        DEAD_AT_HEADER: NOW_MS,
    }
    assert header_bytes(headers) < 1024


def test_whitelisted_headers_are_type_checked_and_cut_short():
    """A whitelisted name with the wrong type is dropped; long strings and reasons are cut."""
    original = {
        "sessionId": "s" * 100_000,
        "component": {"nested": "table"},
        "planType": "4",
        ATTEMPT_HEADER: True,
    }
    headers = dead_letter_headers(original, "r" * 100_000, "o" * 100_000, NOW_MS)
    assert headers == {
        "sessionId": "s" * MAX_VALUE_CHARS,
        REASON_HEADER: "r" * MAX_REASON_CHARS,
        ORIGIN_HEADER: "o" * MAX_VALUE_CHARS,
        DEAD_AT_HEADER: NOW_MS,
    }


def test_the_replay_count_and_tenant_survive_dead_lettering_and_retries():
    """A replayed letter dead-lettered again keeps its count (else a loop never shows), and
    a retried task carries count and tenant into its next attempt; wrong types are dropped."""
    original = {**TASK_HEADERS, REPLAYS_HEADER: 2, TENANT_HEADER: "acme", "pad": "x"}
    headers = dead_letter_headers(original, "poison", "analysis.claims.4", NOW_MS)
    assert headers[REPLAYS_HEADER] == 2 and headers[TENANT_HEADER] == "acme"
    assert carried_headers(original) == {REPLAYS_HEADER: 2, TENANT_HEADER: "acme"}
    assert carried_headers({REPLAYS_HEADER: "9", TENANT_HEADER: 1}) == {}
    assert carried_headers(None) == {}


@pytest.mark.parametrize(
    "table",
    [
        {},
        TASK_HEADERS,
        {"pad": "é" * 5000, "n": -(2**40), "f": 1.5, "b": False, "none": None},
        {"when": datetime(2026, 1, 1), "d": Decimal("1.5")},
        {"x-death": [{"count": 3, "reason": "expired", "routing-keys": ["a.b.c"]}] * 4},
    ],
)
def test_the_header_estimate_is_an_upper_bound_close_to_the_real_encoding(table):
    """The estimate never undercounts pamqp's encoding of the table, and is within 10 %."""
    real = len(encode.field_table(table))
    assert real <= header_bytes(table) <= real * 1.1 + 16


def test_hostile_nesting_is_measured_without_exhausting_the_stack():
    """A header nested 100,000 levels deep is measured, not a RecursionError."""
    deep: list[object] = []
    for _ in range(100_000):
        deep = [deep]
    assert header_bytes({"deep": deep}) > 100_000


def test_oversize_names_the_bound_a_delivery_breaks_and_passes_the_rest():
    """Body over its bound, headers over theirs: a reason each; within both: None."""
    assert oversize(b"x" * 11, None, 10, 1024) == "body of 11 bytes exceeds 10"
    too_wide = oversize(b"{}", {"pad": "x" * 2000}, 10, 1024)
    assert too_wide is not None and too_wide.startswith("headers of about 20")
    assert oversize(b"{}", TASK_HEADERS, 10, 1024) is None


PARKING_KEY = b"claims-result-key-of-at-least-32-bytes"
BODY = b'{"sessionId": "s"}'


def test_a_parked_copy_says_how_to_dead_letter_it_when_it_returns():
    """Parking keeps the original headers and adds the reason (bounded), kind and MAC; the
    parking process reads them back from the copy as it returns."""
    headers = parking_headers(
        {"sessionId": "s"}, "gave up " + "x" * 900, "failed", BODY, PARKING_KEY
    )
    assert headers["sessionId"] == "s"
    parked = parked_letter(headers, BODY, PARKING_KEY)
    assert parked is not None
    reason, kind = parked
    assert kind == "failed" and reason.startswith("gave up") and len(reason) == 500


GENUINE = parking_headers({}, "gave up", "failed", BODY, PARKING_KEY)


@pytest.mark.parametrize(
    ("headers", "body", "key"),
    [
        ({"sessionId": "s"}, BODY, PARKING_KEY),  # no marker at all
        ({**GENUINE, PARKED_HEADER: "spoofed reason"}, BODY, PARKING_KEY),
        ({**GENUINE, PARKED_KIND_HEADER: "unauthenticated"}, BODY, PARKING_KEY),
        ({**GENUINE, PARKED_KIND_HEADER: "made-up"}, BODY, PARKING_KEY),
        (GENUINE, b'{"sessionId": "another"}', PARKING_KEY),  # the marker moved to another body
        ({k: v for k, v in GENUINE.items() if k != PARKED_MAC_HEADER}, BODY, PARKING_KEY),
        ({**GENUINE, PARKED_MAC_HEADER: "0" * 64}, BODY, PARKING_KEY),
        (GENUINE, BODY, b"domain-result-key-of-at-least-32-bytes"),  # parked by another role
    ],
    ids=["none", "reason", "kind", "unknown-kind", "body", "no-mac", "bad-mac", "other-key"],
)
def test_a_forged_or_altered_parking_marker_is_no_parked_letter(headers, body, key):
    """Only the reason and kind a holder of the key parked this very body with are
    honoured: anything else that claims to be parked is handled as a normal message."""
    assert parked_letter(GENUINE, BODY, PARKING_KEY) == ("gave up", "failed")
    assert parked_letter(headers, body, key) is None
