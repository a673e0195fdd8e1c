"""Which language each word of a text is read in: the text's own when it has one, each
sentence's when it mixes Romanian and English, and both where a sentence does not tell."""

from __future__ import annotations

import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st
from simplemma.strategies import DefaultStrategy

from scripts.evaluate import DEV, TEST
from workers.analysis.lemmas import LANGUAGES, WordStrategy, _dictionaries, tokens
from workers.analysis.technique_context import sentence_ends
from workers.analysis.techniques import assess_techniques, default_lexicon
from workers.analysis.text import fold


def _read(text: str) -> dict[str, list[str]]:
    folded = fold(text)
    found = tokens(text, folded, default_lexicon().words, sentence_ends(folded))
    return {language: [text[t.start : t.end] for t in ts] for language, ts in found.items()}


def test_a_text_in_one_language_is_read_only_in_it() -> None:
    assert set(_read("They say that the vaccine is a poison. Share it with your friends.")) == {
        "en"
    }
    assert set(_read("Ei spun că vaccinul este o otravă și nu este sigur pentru copii.")) == {"ro"}


def test_a_mixed_text_reads_each_sentence_in_its_own_language() -> None:
    ro = "Ei spun că vaccinul este o otravă și nu este sigur."
    en = "They say that the vaccine is a poison and it is not safe."
    read = _read(f"{ro} {en} {ro} {en}")
    assert read["ro"] == 2 * [
        "Ei",
        "spun",
        "că",
        "vaccinul",
        "este",
        "o",
        "otravă",
        "și",
        "nu",
        "este",
        "sigur",
    ]
    assert read["en"] == 2 * [
        "They",
        "say",
        "that",
        "the",
        "vaccine",
        "is",
        "a",
        "poison",
        "and",
        "it",
        "is",
        "not",
        "safe",
    ]


def test_a_sentence_that_does_not_tell_is_read_in_both() -> None:
    # "in" alone is English, and Romanian "în" folded: not enough to choose.
    ro = "Ei spun că vaccinul este o otravă și nu este sigur."
    en = "They say that the vaccine is a poison and it is not safe."
    read = _read(f"{ro} Lose 12 kilos in 10 days! {en}")
    shown = ["Lose", "12", "kilos", "in", "10", "days"]
    for language in ("ro", "en"):
        assert [w for w in read[language] if w in shown] == shown


def test_a_sentence_of_the_other_language_is_read_in_both_too() -> None:
    en = "They say that the vaccine is a poison and it is not safe for the children."
    ro = "Ei spun că vaccinul este o otravă."
    read = _read(f"{en} {en} {ro}")
    assert "otravă" in read["ro"] and "otravă" in read["en"]
    assert "poison" in read["en"] and "poison" not in read["ro"]


def test_cues_of_both_languages_are_found_in_a_text_mostly_in_one() -> None:
    ro = "Imigranții sunt paraziți care ne fură țara și trebuie opriți."
    en = "The globalists are parasites and they are stealing our country from us."
    found = {(f.kind, f.text) for f in assess_techniques(f"{ro} {en}").findings}
    assert ("dehumanisation", "Imigranții sunt paraziți") in found
    assert ("dehumanisation", "globalists are parasites") in found


def test_a_sentence_that_switches_language_is_read_in_both() -> None:
    en = "They say that the vaccine is a poison and it is not safe for the children."
    switched = (
        "Ei spun că globalists are parasites și nu sunt oameni, este clar că vor să ne distrugă."
    )
    found = {(f.kind, f.text) for f in assess_techniques(f"{en} {switched}").findings}
    assert ("dehumanisation", "globalists are parasites") in found
    ro = "Ei spun că vaccinul este o otravă și nu este sigur."
    switched = "They say the imigranții sunt paraziți and it is not safe, that is what they want."
    found = {(f.kind, f.text) for f in assess_techniques(f"{ro} {switched}").findings}
    assert ("dehumanisation", "imigranții sunt paraziți") in found


def test_a_speaker_is_not_made_anonymous_by_a_word_sentences_away() -> None:
    """Romanian words read apart from an English sentence between them are not neighbours:
    "Surse." two sentences back does not make the minister an anonymous source."""
    text = (
        "Surse. The migrants are coming and they are many, it is what the news said. "
        "Ministrul a declarat că imigranții sunt paraziți și nu sunt oameni."
    )
    (finding,) = [f for f in assess_techniques(text).findings if f.kind == "dehumanisation"]
    assert finding.weight < 0.5  # reported speech, not the text's own words


# The lemmatiser's shortened search gives simplemma's full default search's lemmas.


def _labelled_words() -> set[str]:
    words: set[str] = set()
    for part in (DEV, TEST):
        for line in part.read_text(encoding="utf-8").splitlines():
            text = json.loads(line)["text"]
            words |= {w.lower() for w in re.findall(r"[^\W_]+", text)}
            words |= {w for w in re.findall(r"[^\W_]+", text) if w[:1].isupper()}
    return words


def test_the_word_strategy_finds_the_default_searchs_lemma_for_every_labelled_word() -> None:
    ours = WordStrategy(dictionary_factory=_dictionaries())
    default = DefaultStrategy(dictionary_factory=_dictionaries())
    words = _labelled_words()
    assert len(words) > 20_000
    made_up = ["qbcd", "zzxq", "vaccinurile", "globaliștii", "jabbed", "fact-checkers", "don't"]
    made_up += ["parasiteʼs", "heʼs", "thatʼs", "donʼt", "Migrants", "COVID19", "ȘTIRI"]
    for language in LANGUAGES:
        differ = [
            w
            for w in [*words, *made_up]
            if ours.get_lemma(w, language) != default.get_lemma(w, language)
        ]
        assert differ == []


@settings(max_examples=500, deadline=None)
@given(
    word=st.text(
        alphabet=st.characters(categories=("Ll", "Lu", "Lm", "Nd"), max_codepoint=0x2FF)
        | st.sampled_from("ʼ'’-ăâîșț"),
        min_size=1,
        max_size=14,
    )
)
def test_the_word_strategy_agrees_with_the_default_search_on_made_up_words(word: str) -> None:
    ours = WordStrategy(dictionary_factory=_dictionaries())
    default = DefaultStrategy(dictionary_factory=_dictionaries())
    for language in LANGUAGES:
        assert ours.get_lemma(word, language) == default.get_lemma(word, language)
