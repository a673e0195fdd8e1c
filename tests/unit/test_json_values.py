"""The count of a JSON body's values that bounds what the API parses (dispatcher.json_values)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dispatcher.json_values import JsonValues

# JSON documents of any shape, strings full of the characters the count looks for.
documents = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='ab,[]{}"\\ :\n'),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=25,
)


def counted(data: bytes, piece: int | None = None, limit: int = 10**9) -> JsonValues:
    values = JsonValues(limit)
    for at in range(0, len(data), piece or max(1, len(data))):
        values.feed(data[at : at + (piece or len(data))])
    return values


@pytest.mark.parametrize(
    ("body", "values"),
    [
        (b'{"content": "x"}', 1),
        (b'{"content": "x", "plan_type": 6}', 2),
        (b"[1, 2, [3]]", 4),
        # what strings hold never counts, escaped quotes and backslashes included
        (b'{"content": "a, [b] {c} \\" , ["}', 1),
        (b'{"a": "\\\\", "b": [1]}', 3),
    ],
)
def test_commas_arrays_and_objects_outside_strings_count(body, values):
    assert counted(body).values == values


@given(documents, st.integers(min_value=1, max_value=9))
def test_a_body_counts_the_same_however_it_is_split(document, piece):
    data = json.dumps(document).encode()
    assert counted(data, piece).values == counted(data).values


@given(documents)
def test_the_count_is_one_per_element_of_every_array_and_object(document):
    """Outside strings a serialised document has a comma between elements and a bracket
    opening each container: one per element (one for an empty container)."""

    def elements(value: object) -> int:
        if isinstance(value, list):
            return max(1, len(value)) + sum(elements(v) for v in value)
        if isinstance(value, dict):
            return max(1, len(value)) + sum(elements(v) for v in value.values())
        return 0

    assert counted(json.dumps(document).encode()).values == elements(document)


def test_the_hostile_body_is_over_the_limit_after_its_first_piece():
    body = b'{"content":"x","y":[' + b",".join([b"[]"] * 400_000) + b"]}"
    values = JsonValues(1000)
    assert values.feed(body[:65536]) is False
    assert values.over


def test_an_ordinary_request_with_a_long_text_is_far_under_the_limit():
    text = 'Prices rose 6.6%, [again], {they said}; "quoted" \\ ' * 2000
    body = json.dumps({"content": text, "url": "https://example.com/a,b", "plan_type": 3})
    assert counted(body.encode(), piece=4096, limit=1000).values == 3


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le"])
def test_a_body_in_utf_16_or_32_is_refused_whatever_it_holds(encoding):
    """`json.loads` reads them, and the count would misread their bytes: an escaped quote
    or a character U+xx22 put it out of step, and 190,000 arrays counted as one value."""
    body = json.dumps({"content": 'x"\u0122', "y": [[]] * 10}).encode(encoding)
    values = counted(body, piece=3, limit=1000)
    assert values.not_utf8 and values.over


def test_utf_8_with_its_byte_order_mark_is_counted():
    values = counted('\ufeff{"content": "x", "plan_type": 3}'.encode(), piece=1)
    assert not values.not_utf8 and values.values == 2


@pytest.mark.parametrize("body", [b'"' * 1_200_000, b"{" + b'"":' * 400_000])
def test_a_body_of_strings_alone_is_refused_once_no_document_could_hold_them(body):
    """Two strings a value at most (a key and its string): a flood of them stops the count
    as soon as it passes what `limit` values could hold, so its cost stays bounded."""
    values = JsonValues(1000)
    assert values.feed(body) is False
    assert values.strings == 2 * 1000 + 3
