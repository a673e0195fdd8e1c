"""Claims: extraction of check-worthy sentences and the risk of what verification found."""

import json

import pytest

from tests.unit.analysis.evasion import EVASIONS
from workers.analysis.claim_forms import sentence_forms
from workers.analysis.claims import (
    MAX_CLAIM_CHARS,
    MAX_CLAIMS,
    MAX_LEARNED_SENTENCES,
    MAX_SENTENCES,
    UNVERIFIABLE,
    Verification,
    claim_policy,
    extract_claims,
    match_locally,
    report_data,
    score_claims,
    with_model_claims,
)
from workers.analysis.factcheck_store import read_fact_checks
from workers.analysis.normalise import normalise


@pytest.fixture(scope="module")
def sample() -> list[dict]:
    return [c.model_dump() for c in read_fact_checks()]


@pytest.mark.parametrize(
    ("sentence", "cues"),
    [
        ("Inflația a urcat la 6,6% în martie 2024.", {"percentage", "number", "date"}),
        ("This is the biggest drop on record.", {"superlative"}),
        ("Vaccinurile provoacă autism.", {"causal", "health"}),
        (
            "Guvernul a cheltuit 2 miliarde de lei, spune Marcel Popescu.",
            {"number", "named_entity"},
        ),
        ("Pe 9 mai a fost frumos.", {"number", "date"}),
        ("Este cel mai mare secret.", {"superlative"}),
    ],
)
def test_sentence_forms(sentence: str, cues: set[str]) -> None:
    """Numbers, percentages, dates, names, superlatives and causes are recognised in RO and EN."""
    assert set(sentence_forms(sentence)) == cues


def test_sentences_without_factual_cues_are_not_claims() -> None:
    """Opinions and descriptions with no number, superlative or cause are not extracted."""
    assert extract_claims("The weather was nice. We went for a walk with Maria in the park.") == []


def test_false_claim_matches_its_fact_check_and_scores_high(sample: list[dict]) -> None:
    """A post repeating a claim rated false is matched to it and raises the risk."""
    claims = extract_claims("Experts now admit that new 5G networks are spreading the coronavirus.")
    verifications = match_locally(claims, sample)
    assert verifications[0].status == "matched"
    assert verifications[0].rating == "false"
    assert score_claims(claims, verifications) >= 85


def test_romanian_claim_without_diacritics_matches(sample: list[dict]) -> None:
    """Romanian typed without diacritics still meets its fact check."""
    claims = extract_claims("De la 1 ianuarie pensiile se taie cu 40%, spun cei de la guvern!")
    assert (
        match_locally(claims, sample)[0].checked_claim
        == "Pensiile vor fi tăiate cu 40% de la 1 ianuarie"
    )


def test_neutral_news_claims_are_unverifiable_and_score_low(sample: list[dict]) -> None:
    """Honest figures nobody has checked are reported as unverifiable and add only caution."""
    text = (
        "Institutul Național de Statistică a anunțat că inflația a coborât la 6,6% în martie. "
        "The central bank kept its main rate at 4.5% on Tuesday."
    )
    claims = extract_claims(text)
    verifications = match_locally(claims, sample)
    data = report_data(claims, verifications)
    assert len(claims) == 2
    assert data["unverifiable"] == 2
    assert score_claims(claims, verifications) < 20
    assert all("unverifiable" in s for s in data["summary"])


def test_true_claims_add_no_risk(sample: list[dict]) -> None:
    """A claim matched to a check rated true contributes nothing."""
    claims = extract_claims("Smoking increases the risk of lung cancer, doctors say.")
    assert score_claims(claims, match_locally(claims, sample)) == 0.0


def test_unverifiable_caution_is_capped() -> None:
    """However many unchecked numbers a text has, they alone stay below the high-risk band."""
    text = " ".join(f"Valoarea {i} este cea mai mare din 2020." for i in range(10))
    claims = extract_claims(text)
    assert score_claims(claims, [UNVERIFIABLE] * len(claims)) <= 25


def test_evidence_verdict_counts_like_a_fact_check() -> None:
    """A provider's "misleading" answer raises the risk like a matched check."""
    claims = extract_claims("Crime doubled last year because of migrants.")
    evidence = Verification("evidence", "misleading", None, None, "provider", "https://x.example")
    assert score_claims(claims, [evidence]) == 70.0
    json.dumps(report_data(claims, [evidence]))


@pytest.mark.parametrize("evasion", EVASIONS)
def test_a_disguised_false_claim_still_meets_its_fact_check(
    sample: list[dict], evasion: str
) -> None:
    """Hidden, fullwidth or Cyrillic characters neither hide a claim nor its fact check."""
    plain = "Ce? De la 1 ianuarie pensiile se taie cu 40%, spun cei de la guvern!"
    text = EVASIONS[evasion](plain)
    claims = extract_claims(text)
    assert [text[c.start : c.end] for c in claims] == [c.text for c in claims]
    assert [normalise(c.text).text for c in claims] == [c.text for c in extract_claims(plain)]
    verification = match_locally(claims, sample)[0]
    assert verification.rating == "false"


def test_a_run_of_digits_is_one_number_cue() -> None:
    """A 100,000-digit run is read as a number; the claim quotes its first characters."""
    (claim,) = extract_claims("Vaccinurile provoacă " + "7" * 100_000 + " de decese.")
    assert "number" in claim.cues
    assert len(claim.text) == MAX_CLAIM_CHARS


@pytest.mark.parametrize(
    ("sentence", "found"),
    [("Crește cu 12,5 %.", True), ("Crește cu 12.5%!", True), ("Anul 2024 a fost bun.", False)],
)
def test_percentages_are_read_from_where_the_number_starts(sentence: str, found: bool) -> None:
    """A percentage is a number (decimals allowed) followed by %, spaced or not."""
    assert ("percentage" in sentence_forms(sentence)) is found


def test_claims_are_read_from_the_first_sentences_only() -> None:
    """At most MAX_SENTENCES sentences are read: a claim hidden after them is not found."""
    filler = "Da. " * MAX_SENTENCES
    assert extract_claims(filler + "Vaccinurile provoacă autism.") == []
    assert extract_claims("Vaccinurile provoacă autism.")


def test_model_claims_count_only_when_quoted_from_the_text() -> None:
    """A model's quote becomes a claim when it is in the text and overlaps no claim found."""
    text = "Vaccinurile provoacă autism. UE va schimba plata cash."
    found = extract_claims(text)
    merged = with_model_claims(
        text, found, ["UE va schimba plata cash", "invented quote", "Vaccinurile provoacă"]
    )
    added = merged[len(found) :]
    assert [(c.text, c.start) for c in added] == [("UE va schimba plata cash", 29)]
    assert "llm" in added[0].cues


def test_model_claims_are_found_in_a_disguised_text() -> None:
    """A readable quote of a text written with hidden characters maps to its original span."""
    text = "Spun că UE va in\u200bterzice plata cash."
    (added,) = with_model_claims(text, [], ["UE va interzice plata cash"])
    assert text[added.start : added.end] == added.text == "UE va in\u200bterzice plata cash"


def _model(probability: float):
    """A learned claims model that reads every text at `probability`."""
    import math

    from workers.analysis.wording_model import WordingModel

    return WordingModel(
        buckets=8, bias=math.log(probability / (1 - probability)), weights=[0.0] * 8
    )


@pytest.mark.parametrize(
    "text",
    [
        "73% dintre tinerii români vor să plece definitiv din țară în următorii doi ani.",
        "80% of the burglaries in this town are committed by migrants.",
        "The HPV jab is making 1 in 3 girls infertile.",
    ],
)
def test_a_statistic_nobody_is_named_for_is_a_risky_claim(text: str) -> None:
    """A share of a group, a comparison in percent or a ratio, in a text that attributes
    nothing anywhere: `unattributed_figure`, and the claim counts as evidence."""
    [claim] = extract_claims(text, learned=_model(0.01))
    assert "unattributed_figure" in claim.register
    assert score_claims([claim], [UNVERIFIABLE]) >= 50


@pytest.mark.parametrize(
    "text",
    [
        "73% dintre tineri vor să plece din țară, arată un sondaj INSCOP publicat luni.",
        "Reduceri de până la 30% la electrocasnice în acest weekend, în toate magazinele.",
        "You back the plan one hundred percent or you are against us.",
    ],
)
def test_attributed_figures_discounts_and_idioms_are_not_unattributed(text: str) -> None:
    claims = extract_claims(text, learned=_model(0.01))
    assert all("unattributed_figure" not in c.register for c in claims)


def test_the_learned_model_supports_claims_the_forms_found() -> None:
    """At p >= 0.6 a claim that says something about the world, somewhat risky by its forms,
    turns risky; below it nothing changes."""
    text = "Two glasses of beetroot juice a day keep blood pressure normal."
    [low] = extract_claims(text, learned=_model(0.3))
    [high] = extract_claims(text, learned=_model(0.9))
    assert "learned_wording" not in low.register and "learned_wording" in high.register
    assert score_claims([high], [UNVERIFIABLE]) >= 50 > score_claims([low], [UNVERIFIABLE])


def test_from_learned_alone_the_model_makes_its_most_claim_like_sentence_a_risky_claim() -> None:
    """Where the forms found no risky claim, the model's most claim-like sentence (the first
    of equals) becomes a `learned_claim` claim, risky on its own, from the probability
    `learned_alone` of claims.yaml; below it nothing."""
    alone = claim_policy().risk.learned_alone
    text = "We went for a walk in the park with Maria. We had tea after."
    assert extract_claims(text, learned=_model(alone - 0.05)) == []
    [made] = extract_claims(text, learned=_model(alone + 0.05))
    assert made.text == "We went for a walk in the park with Maria."
    assert "learned_claim" in made.register
    assert score_claims([made], [UNVERIFIABLE]) >= 50


def test_the_learned_claim_joins_a_claim_the_forms_made_of_the_same_sentence() -> None:
    text = "The lake in Brad had 300 ducks in 2019."
    [by_forms] = extract_claims(text, learned=_model(0.01))
    [learned] = extract_claims(text, learned=_model(claim_policy().risk.learned_alone + 0.05))
    assert learned.text == by_forms.text and learned.cues == by_forms.cues
    assert "learned_claim" not in by_forms.register and "learned_claim" in learned.register
    assert score_claims([learned], [UNVERIFIABLE]) >= 50 > score_claims([by_forms], [UNVERIFIABLE])


@pytest.mark.parametrize(
    "text",
    [
        # a debunk reports the claim it rebuts
        "A viral post claims garlic water cures COVID in a day. Doctors say there is no evidence.",
        # labelled satire asserts nothing
        "Satire: the government announced that Mondays will be abolished from next year.",
        # a sentence that names its source
        "Unemployment rose to 5.4% in March, the statistics institute said.",
    ],
)
def test_the_model_makes_no_claim_in_debunks_satire_or_sourced_sentences(text: str) -> None:
    claims = extract_claims(text, learned=_model(0.99))
    assert all("learned_claim" not in c.register for c in claims)
    assert score_claims(claims, [UNVERIFIABLE] * len(claims)) < 50


@pytest.mark.parametrize("text", ["Toxic!", "Vaccin!", "Cancer!", "They lie to you."])
def test_a_text_of_a_few_words_gets_no_learned_claim(text: str) -> None:
    assert all(
        "learned_claim" not in c.register for c in extract_claims(text, learned=_model(0.99))
    )


def test_a_debunk_gets_no_learned_claim_even_in_sentences_the_debunk_does_not_reach() -> None:
    text = (
        "Our town is small. We walked to the lake on Sunday. A viral post claims the lake is "
        "cursed. Fact-checkers found no evidence for this."
    )
    claims = extract_claims(text, learned=_model(0.99))
    assert score_claims(claims, [UNVERIFIABLE] * len(claims)) < 50


def test_calm_claims_beyond_the_limit_do_not_cut_the_learned_claim() -> None:
    """The learned claim is the text's only risky one: kept however many calm claims
    (a figure and a name) outrank it in check-worthiness."""
    calm = " ".join(
        f"In {2000 + i} the town of Brad had {1000 + 37 * i} residents." for i in range(30)
    )
    above = _model(claim_policy().risk.learned_alone + 0.05)
    claims = extract_claims("We went for a walk in the park. " + calm, learned=above)
    assert len(claims) == MAX_CLAIMS
    assert any("learned_claim" in c.register for c in claims)
    assert score_claims(claims, [UNVERIFIABLE] * len(claims)) >= 50


def test_invisible_padding_does_not_push_the_words_out_of_the_model_s_reading() -> None:
    """The model reads the normalised text: zero-width characters are not words and do not
    use up the characters it reads."""
    text = "Hi. Doctors won't tell you this."
    padded = "Hi." + "\u200b" * 3000 + " Doctors won't tell you this."
    plain = extract_claims(text)
    hidden = extract_claims(padded)
    assert score_claims(hidden, [UNVERIFIABLE] * len(hidden)) == score_claims(
        plain, [UNVERIFIABLE] * len(plain)
    )


def test_the_model_reads_a_bounded_number_of_sentences_for_its_claim() -> None:
    """However many tiny sentences the start of a text holds, at most MAX_LEARNED_SENTENCES
    are read one by one; a sentence past them is never the learned claim."""
    text = "Ok. " * (MAX_LEARNED_SENTENCES + 5) + "We went for a walk."
    counted = _CountingModel(0.55)
    claims = extract_claims(text, learned=counted)
    assert counted.calls <= MAX_LEARNED_SENTENCES + 1  # the sentences and the whole text
    assert all("We went for a walk" not in c.text for c in claims)


class _CountingModel:
    """A model that reads every text at `probability` and counts its readings."""

    def __init__(self, probability: float) -> None:
        self._model = _model(probability)
        self.calls = 0

    def probability(self, words):
        self.calls += 1
        return self._model.probability(words)


def test_the_model_makes_claims_of_assertions_the_forms_miss() -> None:
    """Held-out texts of this shape (a rumour told as news, no figure, no cue word) were the
    commonest claims misses; a text the model reads as asserting one gets its most
    claim-like sentence as a claim, while a text it reads as calm does not."""
    rumour = (
        "Since the new mast went up behind the school, half the kids in our street get "
        "headaches every afternoon. The council knows and does nothing."
    )
    found = extract_claims(rumour, learned=_model(0.9))
    assert score_claims(found, [UNVERIFIABLE] * len(found)) >= 50
    assert any("learned_claim" in c.register for c in found)
    calm = extract_claims(rumour, learned=_model(0.1))
    assert score_claims(calm, [UNVERIFIABLE] * len(calm)) < 50


def test_the_shipped_model_reads_rumours_told_as_news_and_not_plain_news() -> None:
    """The shipped model itself: a neighbourhood rumour told as fact reads as a claim (in
    both languages), council news does not."""
    for rumour in (
        "My neighbour says the water in our block has been making everyone sick since they "
        "changed the pipes, and the landlord is hiding it.",
        "De când au pus antena lângă școală, jumătate din copiii de pe stradă au dureri de "
        "cap. Primăria știe și nu face nimic.",
    ):
        found = extract_claims(rumour)
        assert score_claims(found, [UNVERIFIABLE] * len(found)) >= 50
    news = "The council approved the budget on Thursday; most of it goes to transport."
    calm = extract_claims(news)
    assert score_claims(calm, [UNVERIFIABLE] * len(calm)) < 50


@pytest.mark.parametrize(
    "text",
    [
        # a count and an "always" say nothing check-worthy about the world
        "lol my cat never eats anything before 10 am, every single day, she's the worst",
        # a named source
        "Doctors confirmed that the new vaccine causes fewer side effects, the ministry said.",
    ],
)
def test_the_learned_model_never_supports_bare_or_sourced_claims(text: str) -> None:
    claims = extract_claims(text, learned=_model(0.99))
    assert all("learned_wording" not in c.register for c in claims)


def test_the_learned_model_reads_a_bounded_prefix_with_its_200_words() -> None:
    """A long text is cut at a space within MODEL_TEXT_CHARS, still holding the 200 words
    the model reads; a short one is read whole."""
    from workers.analysis.claims import MODEL_TEXT_CHARS, _model_prefix
    from workers.analysis.techniques import context_words
    from workers.analysis.text_features import MAX_WORDS

    long = "Vaccinurile sunt testate de agenția europeană înainte de aprobare. " * 200
    prefix = _model_prefix(long)
    assert len(prefix) <= MODEL_TEXT_CHARS and long.startswith(prefix) and prefix[-1] != " "
    assert len(context_words(prefix)) == MAX_WORDS
    assert _model_prefix("Short text.") == "Short text."


def _claims_score(text: str) -> float:
    claims = extract_claims(text)
    return score_claims(claims, [UNVERIFIABLE] * len(claims))


@pytest.mark.parametrize(
    ("warning", "asserted"),
    [
        (
            "The Food Standards Agency has warned about adverts on Instagram that promise "
            "'this tea cures type 2 diabetes in two weeks, guaranteed'. The products are not "
            "licensed and several buyers have reported side effects.",
            "This tea cures type 2 diabetes in two weeks, guaranteed. My doctor couldn't "
            "believe my results and the pharma companies will never admit it.",
        ),
        (
            "Autoritatea Națională pentru Protecția Consumatorilor atrage atenția asupra unor "
            "reclame care promit „ceaiul care vindecă diabetul în două săptămâni”. Produsele nu "
            "sunt autorizate, iar mai mulți cumpărători au reclamat reacții adverse.",
            "Ceaiul ăsta vindecă diabetul în două săptămâni, garantat. Medicul meu nu-și "
            "credea ochilor, iar firmele de medicamente nu vor recunoaște niciodată.",
        ),
    ],
)
def test_a_warning_about_a_circulating_promise_does_not_assert_it(
    warning: str, asserted: str
) -> None:
    """A regulator warning about adverts or messages it quotes ("warned about adverts that
    promise …", "atrage atenția asupra unor reclame care promit …") reports the promise and
    rebuts it, as a debunk does; the same promise made by the writer is a risky claim."""
    assert _claims_score(warning) < 50 <= _claims_score(asserted)


def test_the_model_makes_no_claim_of_a_sentence_of_a_word_or_two() -> None:
    """However claim-like the model reads a text, "Wow!" or "Da." asserts nothing: the
    sentence it makes a claim of has MIN_LEARNED_CLAIM_WORDS words or more."""
    text = "Wow! No way! Da! Serios? Incredibil! Uau, frate!"
    assert all(
        "learned_claim" not in c.register for c in extract_claims(text, learned=_model(0.99))
    )
    longer = "Wow! No way! They put poison in the water again!"
    assert any("learned_claim" in c.register for c in extract_claims(longer, learned=_model(0.99)))
