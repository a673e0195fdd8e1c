"""Measures of how a text is written: lists, specifics, emotive marks, sentence shape."""

from workers.analysis.stylometry import (
    emotive_marks,
    enumerations,
    lowercase_starts,
    repeated_trigram_share,
    sentence_length_variation,
    specifics_per_100_words,
)


def test_lists_of_three_are_counted_in_both_languages() -> None:
    """ "A, B and C" and "A, B și C" (folded: "si") are lists; a pair is not."""
    assert enumerations("ecosystems, economies and communities; bread and butter") == 1
    assert enumerations("guverne, companii si cetateni; paine si sare") == 1
    assert enumerations("history and culture") == 0


def test_names_and_figures_count_as_specifics() -> None:
    """Digits and capitalised words after a sentence's first count; the first word does not."""
    news = ["The council met Tuesday in Cluj and approved 14 projects."]
    generic = ["Regular exercise offers numerous benefits for health."]
    assert specifics_per_100_words(news, 10) == 30.0
    assert specifics_per_100_words(generic, 7) == 0.0


def test_emotive_punctuation_and_emoji_are_counted() -> None:
    """Runs of ! or ?, ellipses and emoji each count once; a single full stop does not."""
    assert emotive_marks("no way!! really?! wait... 😂") == 4
    assert emotive_marks("A calm sentence. Another one.") == 0


def test_sentences_starting_in_lower_case_are_counted() -> None:
    """Chat starts sentences in lower case; edited prose does not."""
    assert lowercase_starts(["ok so I tried it", "It was fine", "mai merg"]) == 2


def test_even_sentences_vary_less_than_human_ones() -> None:
    """Burstiness: the coefficient of variation of sentence lengths."""
    assert sentence_length_variation([12, 12, 13, 12]) < 0.1
    assert sentence_length_variation([3, 25, 8, 30]) > 0.5


def test_repeated_trigrams_are_a_share_of_all_trigrams() -> None:
    """Each trigram that occurs twice counts with both occurrences."""
    tokens = ["it", "helps", "people", "it", "helps", "people", "rest"]
    assert repeated_trigram_share(tokens) == 0.4
