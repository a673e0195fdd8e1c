"""Session ids carry their day; which day partitions retention keeps."""

import uuid
from datetime import date

from shared.partitions import LEGACY_DAY, day_of, expired, partition_name
from shared.sessions import new_session_id, session_day

# 2026-11-30T12:00:00Z in milliseconds.
NOON_MS = 1_796_040_000_000


def test_new_session_ids_are_uuid7_with_the_creation_time_in_front():
    """Version 7, RFC variant, and the first 48 bits are the milliseconds given."""
    sid = uuid.UUID(new_session_id(NOON_MS))
    assert sid.version == 7 and sid.variant == uuid.RFC_4122
    assert sid.int >> 80 == NOON_MS


def test_ids_made_later_sort_later_and_never_repeat():
    """Ids of later milliseconds sort after earlier ones (the primary key stays append-only)."""
    ids = [new_session_id(NOON_MS + i) for i in range(100)]
    assert ids == sorted(ids) and len(set(ids)) == 100


def test_a_session_day_is_the_utc_day_of_its_id():
    """Noon and the last millisecond of a day map to it; the next millisecond to the next."""
    end_of_day = NOON_MS + 12 * 3600 * 1000 - 1
    assert session_day(new_session_id(NOON_MS)) == date(2026, 11, 30)
    assert session_day(new_session_id(end_of_day)) == date(2026, 11, 30)
    assert session_day(new_session_id(end_of_day + 1)) == date(2026, 12, 1)


def test_ids_other_than_uuid7_belong_to_the_legacy_partition():
    """Sessions from before migration 008 have UUIDv4 ids: legacy day and partition."""
    assert session_day(str(uuid.uuid4())) == LEGACY_DAY
    assert partition_name("sessions", LEGACY_DAY) == "sessions_legacy"


def test_partition_names_round_trip_to_their_day():
    """`sessions_YYYYMMDD` names its day; other partitions and tables name none."""
    assert partition_name("verdicts", date(2026, 1, 2)) == "verdicts_20260102"
    assert day_of("sessions_20260102") == date(2026, 1, 2)
    assert day_of("sessions_legacy") is None
    assert day_of("verdicts_20260102") is None


def test_retention_keeps_today_and_the_days_before_it():
    """With 30 days: 30 Oct (31 days ago) goes, 31 Oct stays; the days ahead stay."""
    today = date(2026, 11, 30)
    days = [date(2026, 10, 29), date(2026, 10, 31), date(2026, 10, 30), today, date(2026, 12, 5)]
    assert expired(days, today, 30) == [date(2026, 10, 29), date(2026, 10, 30)]
    assert expired(days, today, 400) == []
