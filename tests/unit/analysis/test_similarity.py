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


def _reference_strict_word_similarity(needle: str, haystack: str) -> float:
    """The definition, written plainly: best similarity to any joined run of whole words."""
    words = haystack.split()
    size = len(needle.split())
    runs = [
        " ".join(words[start : start + width])
        for width in range(max(1, size - 2), size + 3)
        for start in range(0, max(1, len(words) - width + 1))
    ]
    return max(similarity(needle, run) for run in runs)


@pytest.mark.parametrize(
    ("needle", "haystack"),
    [
        ("vaccines cause autism", "doctors say vaccines do not cause autism at all"),
        ("5G spreads the virus", "they claim 5G towers spread viruses across the city"),
        ("vaccinurile provoacă autism", "medicii spun că vaccinurile nu provoacă autism"),
        ("ΟΔΟΣ σοφίας", "η οδός της σοφίας είναι μακρύς"),
        ("İstanbul earthquake", "a strong earthquake hit istanbul today"),
        ("one", "a"),
    ],
)
def test_strict_word_similarity_equals_the_plain_definition(needle: str, haystack: str) -> None:
    """The fast form (word trigram sets unioned per run) scores exactly what the definition does."""
    expected = _reference_strict_word_similarity(needle, haystack)
    assert strict_word_similarity(needle, haystack) == expected
