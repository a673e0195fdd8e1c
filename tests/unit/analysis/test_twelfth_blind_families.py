"""Rebuttals grown in the twelfth round of issue 19, after two more sets written blind (ids
`*-z-*`, marketplace, money, insurance, charity and dating voices, tuned on; `*-o-*`,
history, religion, academia, letters and weather voices, held out). Each is checked on
sentences written for this test (none is in the evaluation set), in Romanian and English,
beside texts sharing their words that must stay as they were: a ranter's own warning, a
claim that calls its critics' words false, and the conspiracy posts a review of the round
wrote against the first, broader rules (each had dropped from 70-98 to 0-25)."""

import pytest

from tests.unit.analysis.probes import FLAGGED, claims_score
from workers.analysis.claim_forms import sentence_register
from workers.analysis.datafiles import DataFileError
from workers.analysis.technique_lexicon import compile_lexicon


@pytest.mark.parametrize(
    "text",
    [
        # an authority's verdict in its own quoted words
        "Posts say the town's water is being poisoned on purpose. The water company called the "
        "posts 'completely false' and published its latest test results.",
        "Un mesaj de pe WhatsApp spune că pensiile vor fi tăiate la jumătate din martie. Casa "
        "de Pensii a calificat mesajul drept «fals» și a cerut oamenilor să nu-l distribuie.",
        # a warning about what it goes on to quote, with the warned in between
        "Trading Standards has warned people renting out rooms about messages claiming "
        "'your deposit is held until you pay a 50% release fee to a secure agent'.",
        # an authority denying what a rumour says is coming
        "A message going round says the council will close every library next month. The "
        "council said it had no plans to close any library.",
        "Pe Facebook circulă mesajul că școlile vor fi închise tot anul viitor. Ministerul a "
        "transmis că nu există niciun proiect care să prevadă așa ceva.",
    ],
)
def test_a_reported_claim_answered_by_an_authority_is_not_a_risky_claim(text: str) -> None:
    assert claims_score(text) < FLAGGED


@pytest.mark.parametrize(
    "sentence",
    [
        "The ministry called the message 'totally fabricated'.",
        "Primăria a catalogat zvonul drept „neadevărat”.",
        "Citizens Advice has warned tenants in shared flats about fake deposit schemes.",
    ],
)
def test_a_quoted_verdict_or_a_warning_with_a_gap_is_a_rebuttal(sentence: str) -> None:
    assert "debunked" in sentence_register(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        # the speaker's own warning is no authority's rebuttal
        "I have warned you all about these vaccines for years.",
        "We have warned people about the chemtrails since 2015.",
        # a claim that dismisses its critics is still the claim's own voice
        "They called us crazy, but the towers are making people sick.",
        # a quotation that is not a verdict on anything
        "The mayor called the new bridge 'a gift to the city'.",
    ],
)
def test_a_ranter_s_own_warning_or_a_quote_that_is_no_verdict_is_not_a_rebuttal(
    sentence: str,
) -> None:
    assert "debunked" not in sentence_register(sentence)


@pytest.mark.parametrize(
    "text",
    [
        # the authority's verdict thrown back, or the word in another use
        "They called it 'fake news' but the vaccine is killing thousands of people. Share this!",
        'For years the health ministry called it "nonsense". Now the leaked files prove that '
        "the flu vaccine contains graphene that causes blood clots. Share this before it gets "
        "deleted!",
        "The so-called 'fake' moon landing was filmed in a studio in Nevada. NASA admitted it in "
        "a leaked memo. Share this!",
        "Nurses called out the hospitals' fake Covid death counts: 90% of the deaths were from "
        "other causes. Share this!",
        "Au numit-o «fake news», dar vaccinul provoacă autism la copii. Distribuiți!",
        # warnings that are the post's own, or about no message at all
        "Doctors have warned us for years about fluoride. Fluoride in tap water lowers "
        "children's IQ by 20%, share this!",
        "Many of us have warned you about the jab. It causes heart attacks in young athletes, "
        "share this!",
        "The government has warned farmers in Romania about the new rules: from next month all "
        "cows will be killed to stop climate change. Share this!",
        # a denial of plans rejected, or "no plans to" as an idiom
        "The government says it has no plans to ban cash. Don't believe them: cash will be "
        "banned next year, share this with everyone!",
        "The WHO has no plans to tell you this: vitamin C cures covid in 48 hours. Share this "
        "with everyone!",
        "Ministerul Sănătății zice că nu există niciun proiect de vaccinare obligatorie. "
        "Minciuni! Din toamnă copiii vor fi vaccinați cu forța în școli. Distribuiți!",
        "Guvernul zice că nu există niciun proiect, dar de la 1 martie vor tăia pensiile la "
        "jumătate. Distribuiți urgent!",
    ],
)
def test_a_conspiracy_post_using_the_authority_s_words_stays_a_risky_claim(text: str) -> None:
    assert claims_score(text) >= FLAGGED


def test_a_wildcard_inside_a_word_is_refused_when_the_lexicon_loads() -> None:
    """`cip*uri` could never match (the wildcard takes the rest of the word): the file that
    held it is refused, naming the term, instead of silently matching nothing."""
    spec = {
        "version": 2,
        "techniques": {"conspiracy": {"about": "x", "weight": 0.5, "terms": {"ro": ["cip*uri"]}}},
    }
    with pytest.raises(DataFileError, match=r"cip\*uri"):
        compile_lexicon(spec)
