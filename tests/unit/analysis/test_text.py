"""Text primitives: folding keeps offsets, sentences keep positions."""

from workers.analysis.text import fold, sentences, words


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
