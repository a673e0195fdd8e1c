"""A fact check matches a claim only on what it checked: its subject words, not its
country, union or date."""

from __future__ import annotations

import pytest

from workers.analysis.check_subject import speaks_of, subject_words
from workers.analysis.claims import extract_claims, match_locally, score_claims
from workers.analysis.factcheck_store import read_fact_checks

INFLATION = "Inflația din România a fost cea mai mare din Uniunea Europeană în 2023"
PENSIONS = "Pensiile vor fi tăiate cu 40% de la 1 ianuarie"


@pytest.fixture(scope="module")
def sample() -> list[dict]:
    return [c.model_dump() for c in read_fact_checks()]


def test_the_subject_is_the_less_common_words_by_their_stems() -> None:
    assert subject_words(INFLATION, "ro") == ("infla",)
    assert set(subject_words(PENSIONS, "ro")) == {"pensi", "taiat"}
    assert set(subject_words("Vaccines cause autism in children", "en")) == {"vacci", "autis"}


def test_a_check_of_common_words_only_is_about_its_rarest_two() -> None:
    assert len(subject_words("The people said that it was a very good year for them", "en")) == 2


@pytest.mark.parametrize(
    ("check", "sentence", "language"),
    [
        (INFLATION, "În 2023, inflația din România a fost cea mai mare din UE.", "ro"),
        (INFLATION, "Inflatia din Romania, cea mai mare din Uniunea Europeana", "ro"),
        (PENSIONS, "Se zice că pensiile se taie cu 40% din ianuarie", "ro"),
        ("Vaccines cause autism in children", "Vaccination causes autism, wake up", "en"),
    ],
)
def test_a_sentence_that_states_the_checked_claim_speaks_of_it(
    check: str, sentence: str, language: str
) -> None:
    assert speaks_of(check, sentence, language)


@pytest.mark.parametrize(
    ("check", "sentence", "language"),
    [
        (
            INFLATION,
            "România a avut în 2023 cea mai ridicată rată a deceselor rutiere din Uniunea "
            "Europeană: 81 de morți la un milion de locuitori.",
            "ro",
        ),
        (
            INFLATION,
            "Potrivit Eurostat, 32% dintre români erau în 2023 în risc de sărăcie, cea mai "
            "mare pondere din Uniunea Europeană.",
            "ro",
        ),
        (PENSIONS, "[SATIRĂ] De la 1 ianuarie toate prețurile vor fi afișate în bani.", "ro"),
    ],
)
def test_a_sentence_sharing_only_the_setting_does_not_speak_of_it(
    check: str, sentence: str, language: str
) -> None:
    assert not speaks_of(check, sentence, language)


def test_a_check_with_no_word_to_judge_by_is_not_held_against_a_sentence() -> None:
    assert speaks_of("5G = 3G", "5G is 3G", "en")


def test_a_figure_about_something_else_meets_no_check_and_stays_calm(sample: list[dict]) -> None:
    text = (
        "România a avut în 2023 cea mai ridicată rată a deceselor rutiere din Uniunea "
        "Europeană: 81 de morți la un milion de locuitori, potrivit Comisiei Europene."
    )
    claims = extract_claims(text)
    verifications = match_locally(claims, sample)
    assert all(v.status == "unverifiable" for v in verifications)
    assert score_claims(claims, verifications) < 50


def test_a_check_s_false_rating_is_no_evidence_against_labelled_satire(sample: list[dict]) -> None:
    """Satire asserts nothing: a check that rates what it mocks false does not make it risky;
    the same words asserted are."""
    satire = (
        "[PARODY] BREAKING: NASA finally admits the moon landing was filmed in a television "
        "studio — on the moon, which explains why it looked so realistic."
    )
    claims = extract_claims(satire)
    verifications = match_locally(claims, sample)
    assert any(v.rating == "false" for v in verifications)
    assert score_claims(claims, verifications) < 50
    asserted = "NASA finally admits the moon landing was filmed in a television studio."
    claims = extract_claims(asserted)
    assert score_claims(claims, match_locally(claims, sample)) >= 50


def test_a_check_typed_without_diacritics_has_the_same_subject() -> None:
    plain = "Inflatia din Romania a fost cea mai mare din Uniunea Europeana in 2023"
    assert subject_words(plain, "ro") == subject_words(INFLATION, "ro") == ("infla",)


def test_a_four_letter_subject_word_meets_its_inflections() -> None:
    check = "Women earn less than men for the same job"
    assert speaks_of(check, "A woman earns less than a man for the same work", "en")


def test_a_check_written_with_look_alike_letters_has_the_plain_subject() -> None:
    assert subject_words("Vaccіnes cause autіsm in children", "en") == subject_words(
        "Vaccines cause autism in children", "en"
    )


def test_a_sentence_worded_as_the_check_matches_whatever_its_subject_words(
    sample: list[dict],
) -> None:
    """'ban cash' against '… ban cash payments' (0.82): the subject word 'payments' is
    missing, the wording says it is the same claim."""
    claims = extract_claims("The European Union will ban cash next year, they say.")
    assert [v.rating for v in match_locally(claims, sample)] == ["false"]
