"""The term index only says where a lexicon's pattern is tried: what matches never changes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from scripts import evaluate as ev
from workers.analysis.claim_forms import _patterns, claims_spec
from workers.analysis.technique_lexicon import terms_regex
from workers.analysis.techniques import default_lexicon
from workers.analysis.term_index import TermIndex
from workers.analysis.text import fold

WORDS = ["nu", "nou", "don", "t", "cure", "cures", "cured", "a", "al", "de", "all", "100"]
SEPARATORS = [" ", "  ", "-", "'", "’", ", ", ". ", "\n", "x"]


def _spans(matches):
    return [m.span() for m in matches]


def test_a_term_is_found_where_its_first_word_starts_and_nowhere_else() -> None:
    terms = ["secret cure", "cur*", "don't"]
    pattern = terms_regex(terms)
    assert pattern is not None
    index = TermIndex.of({"cures": terms})
    for text in ["the secret cure works", "curele", "i don’t", "o secura", "nothing here"]:
        folded = fold(text)
        assert _spans(index.starts(folded).finditer("cures", pattern)) == _spans(
            pattern.finditer(folded)
        )


def test_a_lexicon_whose_terms_cannot_start_in_a_text_is_not_searched() -> None:
    index = TermIndex.of({"cures": ["miracle cure"], "secrecy": ["ascuns*"]})
    starts = index.starts(fold("Ceaiul de mușețel, ascunsă în dulap"))
    assert "cures" not in starts.at
    assert starts.at["secrecy"] == [len("ceaiul de musetel, ")]


def test_possible_names_the_lexicons_with_a_place_to_start_and_those_searched_whole() -> None:
    index = TermIndex.of({"cures": ["miracle cure"], "secrecy": ["ascuns*"], "calls": ["#x"]})
    starts = index.starts(fold("ascunsă în dulap"))
    assert starts.possible(["cures", "secrecy", "calls"]) == {"secrecy", "calls"}
    assert starts.possible(["cures"]) == set()


def test_a_term_that_does_not_start_with_a_word_is_searched_whole() -> None:
    terms = ["#boicot", "boycott"]
    pattern = terms_regex(terms)
    assert pattern is not None
    index = TermIndex.of({"calls": terms})
    assert index.scanned == frozenset({"calls"})
    folded = fold("share #boicot now")
    assert [m[0] for m in index.starts(folded).finditer("calls", pattern)] == ["#boicot"]


@settings(max_examples=300, deadline=None)
@given(
    terms=st.lists(
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join)
        | st.sampled_from(WORDS).map(lambda w: w + "*")
        | st.sampled_from(["don't", "nou-venit", "a*"]),
        min_size=1,
        max_size=6,
    ),
    text=st.lists(st.sampled_from(WORDS) | st.sampled_from(SEPARATORS), max_size=40).map("".join),
)
def test_finditer_through_the_index_is_finditer(terms: list[str], text: str) -> None:
    pattern = terms_regex(terms)
    assert pattern is not None
    starts = TermIndex.of({"lexicon": terms}).starts(text)
    assert _spans(starts.finditer("lexicon", pattern)) == _spans(pattern.finditer(text))
    assert starts.search("lexicon", pattern) == (pattern.search(text) is not None)


def test_the_shipped_lexicons_match_through_the_index_as_they_match_whole() -> None:
    """Every form and register lexicon of the claims file and every techniques terms rule,
    on every 25th text of the evaluation set's dev part, find the same spans either
    way."""
    patterns = _patterns()
    lexicon = default_lexicon()
    claims = {**patterns.lexicons, **patterns.register}
    rules = [r for r in lexicon.rules if r.terms]
    assert claims_spec() and rules
    for item in ev.read_items(ev.DEV)[::25]:
        text = item["text"]
        folded = fold(text)
        starts = patterns.index.starts(folded)
        for name, pattern in claims.items():
            assert _spans(starts.finditer(name, pattern)) == _spans(pattern.finditer(folded))
        rule_starts = lexicon.term_index.starts(folded)
        for rule in rules:
            assert _spans(rule_starts.finditer(rule.technique, rule.pattern)) == _spans(
                rule.pattern.finditer(folded)
            )


def test_a_text_where_every_word_can_start_a_term_is_scanned_once_with_the_same_matches() -> None:
    terms = ["nu mai", "nu*"]
    pattern = terms_regex(terms)
    assert pattern is not None
    text = "nu " * 600 + "nu mai"
    starts = TermIndex.of({"lexicon": terms}).starts(text)
    assert "lexicon" in starts.scanned
    assert _spans(starts.finditer("lexicon", pattern)) == _spans(pattern.finditer(text))
    assert starts.search("lexicon", pattern)
