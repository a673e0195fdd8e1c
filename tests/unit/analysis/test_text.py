"""Text primitives: folding keeps offsets, sentences keep positions."""

from workers.analysis.text import MAX_SENTENCE_CHARS, fold, sentences, words


def test_fold_strips_romanian_diacritics_and_keeps_length() -> None:
    """Folded text lines up character for character with the original, cedilla forms included."""
    original = "Ştiaţi că ȘOCANT înseamnă „șocant”?"
    folded = fold(original)
    assert folded == "stiati ca socant inseamna „socant”?"
    assert len(folded) == len(original)


def test_sentences_keep_offsets_and_skip_abbreviations() -> None:
    """Each sentence starts where the original has it; "Dr." does not end a sentence."""
    text = 'Ieri a plouat. Dr. Pop a spus: "Nu." Apoi a plecat!'
    found = sentences(text)
    assert [s.text for s in found] == ["Ieri a plouat.", 'Dr. Pop a spus: "Nu."', "Apoi a plecat!"]
    assert all(text[s.start : s.end] == s.text for s in found)


def test_words_are_folded_and_keep_hyphenated_forms() -> None:
    """Tokens are lower-case without diacritics; "n-o" stays one word."""
    assert words("N-o să crezi, Ţară!") == ["n-o", "sa", "crezi", "tara"]


def test_a_long_sentence_is_cut_at_spaces() -> None:
    """Text without punctuation becomes pieces of at most MAX_SENTENCE_CHARS, cut between words."""
    text = "cuvant " * 1000
    found = sentences(text)
    assert len(found) > 1
    assert all(len(s.text) <= MAX_SENTENCE_CHARS for s in found)
    assert all(s.text.startswith("cuvant") and s.text.endswith("cuvant") for s in found)
    assert all(text[s.start : s.end] == s.text for s in found)


def test_a_word_without_spaces_is_cut_at_the_cap() -> None:
    """A single 5,000-letter word is cut into pieces of exactly the cap."""
    found = sentences("a" * 5000)
    assert [len(s.text) for s in found] == [MAX_SENTENCE_CHARS] * 5


def test_many_abbreviations_stay_one_sentence() -> None:
    """A run of titles ("Dr. Dr. …") joins into sentences as one title does."""
    text = "Dr. " * 50 + "Pop a venit. Apoi a plecat."
    assert [s.text for s in sentences(text)] == [("Dr. " * 50 + "Pop a venit."), "Apoi a plecat."]
