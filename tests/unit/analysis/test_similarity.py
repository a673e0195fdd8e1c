"""Trigram similarity agrees with pg_trgm, so offline ranking matches the database's."""

import pytest

from workers.analysis.similarity import similarity, strict_word_similarity, trigrams


def test_trigrams_pad_words_like_pg_trgm() -> None:
    """pg_trgm's documented example: show_trgm('cat') = {"  c"," ca","at ","cat"}."""
    assert trigrams("cat") == {"  c", " ca", "at ", "cat"}


def test_similarity_matches_pg_trgm_documentation() -> None:
    """similarity('word', 'two words') is 0.36363637 in the pg_trgm documentation."""
    assert similarity("word", "two words") == pytest.approx(0.36363637)


def test_strict_word_similarity_finds_the_claim_inside_a_sentence() -> None:
    """A short claim inside a longer sentence scores much higher than whole-text similarity."""
    claim = "vaccines cause autism"
    sentence = "many parents were told again that vaccines cause autism in young children"
    assert strict_word_similarity(claim, sentence) == 1.0
    assert similarity(claim, sentence) < 0.5
