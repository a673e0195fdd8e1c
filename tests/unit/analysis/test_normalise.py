"""Normalisation: invisible characters, NFKC and look-alikes undone, offsets kept."""

import pytest

from tests.unit.analysis.evasion import EVASIONS, cyrillic_look_alikes, fullwidth, zero_width
from workers.analysis.normalise import (
    MAX_MARKS_PER_LETTER,
    ROMANIAN_LETTERS,
    _folding,
    _work,
    look_alikes,
    normalise,
    prepare,
)

EN = "SHOCKING: the corrupt elite hides the truth!"
RO = "ȘOC: trădătorii ascund adevărul, distribuiți!"


@pytest.mark.parametrize("evasion", EVASIONS)
@pytest.mark.parametrize("plain", [EN, RO])
def test_each_evasion_reads_as_the_plain_text(plain: str, evasion: str) -> None:
    """Zero-width, bidi, fullwidth and Cyrillic rewrites of RO and EN text normalise back."""
    assert normalise(EVASIONS[evasion](plain)).text == plain


@pytest.mark.parametrize("evasion", EVASIONS)
def test_every_normalised_character_maps_to_its_original(evasion: str) -> None:
    """Each character of the result comes from an original span that reads as it."""
    original = EVASIONS[evasion](RO)
    clean = normalise(original)
    for i, ch in enumerate(clean.text):
        piece = normalise(clean.quote(i, i + 1), fold_look_alikes=False).text
        assert look_alikes().get(piece, (piece,))[0] == ch


def test_a_span_maps_to_the_original_substring() -> None:
    """A word found in the normalised text quotes the original, hidden characters included."""
    original = "Vezi " + zero_width("trădătorii") + " acum"
    clean = normalise(original)
    at = clean.text.index("trădătorii")
    start, end = clean.span(at, at + len("trădătorii"))
    assert original[start:end] == zero_width("trădătorii")
    assert clean.quote(at, at + len("trădătorii")) == original[start:end]


def test_ascii_text_is_its_own_map() -> None:
    """Plain ASCII needs no work: the same text, spans unchanged."""
    clean = normalise("Share this now!")
    assert clean.text == "Share this now!"
    assert clean.span(6, 10) == (6, 10)


def test_romanian_letters_survive_in_both_forms() -> None:
    """ă â î ș ț and the cedilla forms ş ţ are kept; decomposed ș (s + comma) is composed."""
    text = "ăâîșțşţ ĂÂÎȘȚŞŢ"
    assert normalise(text).text == text
    assert normalise("s\u0326i t\u0326ara").text == "și țara"
    assert ROMANIAN_LETTERS.isdisjoint(look_alikes())


def test_genuine_cyrillic_text_is_left_alone() -> None:
    """Words written wholly in Cyrillic stay Cyrillic, even those made only of look-alikes."""
    text = "Путин сказал сегодня, что сор на улице"
    assert normalise(text).text == text


def test_look_alikes_in_latin_words_are_folded_with_their_case() -> None:
    """A Cyrillic letter inside a Latin word becomes the Latin letter, upper or lower case."""
    assert normalise("ЅНОСКІNG mаnipulаre").text == "SHOCKING manipulare"


def test_whole_look_alike_words_fold_in_latin_text() -> None:
    """A word made only of look-alikes is folded when the text around it is Latin."""
    assert normalise("the сор is here").text == "the cop is here"


def test_fullwidth_and_mathematical_letters_become_plain() -> None:
    """NFKC: fullwidth and bold mathematical letters and digits read as plain ones."""
    assert normalise(fullwidth("Share 100%")).text == "Share 100%"
    assert normalise("𝐒𝐇𝐀𝐑𝐄 𝟏𝟎𝟎").text == "SHARE 100"


def test_invisible_only_content_is_empty() -> None:
    """A text of zero-width, bidi and filler characters has nothing left to analyse."""
    assert normalise("\u200b\u200c\u200d\u2060\ufeff\u202e\u2066\u3164\u034f").text == ""


def test_a_pile_of_combining_marks_is_capped() -> None:
    """A letter keeps at most MAX_MARKS_PER_LETTER marks; the span still covers all it kept."""
    original = "a" + "\u0301\u0316" * 50 + "b"
    clean = normalise(original)
    assert clean.text.endswith("b")
    assert len(clean.text) - 1 <= 1 + MAX_MARKS_PER_LETTER
    assert clean.quote(0, len(clean.text)) == original


def test_host_names_keep_their_look_alikes_on_request() -> None:
    """For host names the look-alike is the evidence: only invisibles and NFKC apply."""
    text = zero_width("dіgi24.ro")
    assert normalise(text, fold_look_alikes=False).text == "dіgi24.ro"
    assert normalise(cyrillic_look_alikes("digi"), fold_look_alikes=False).text != "digi"


def test_prepare_builds_the_tables_before_first_use() -> None:
    """prepare() builds the tables, so a worker forked after it pays nothing for them."""
    _work.cache_clear()
    _folding.cache_clear()
    prepare()
    assert _work.cache_info().currsize == _folding.cache_info().currsize == 1
    assert normalise("ЅНОСК\u200b ｎｅｗｓ").text == "SHOCK news"
