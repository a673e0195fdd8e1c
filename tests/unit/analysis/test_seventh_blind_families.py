"""Families grown in the seventh round of issue 19, after two more sets written blind (ids
`*-j-*`, e-mail, SMS and messaging voices leaning on link tricks, and `*-k-*`, social and
news voices leaning on how claims are made). Each is checked on sentences written for this
test (none is in the evaluation set), in Romanian and English, beside texts sharing their
words that must stay flagged."""

import pytest

from workers.analysis import claims, domains
from workers.analysis.claim_forms import sentence_register, text_registers
from workers.analysis.lookalikes import lure_stem
from workers.analysis.wording_model import WordingModel

FLAGGED = 50

# A learned claims model that reads every text at 0.01: what the forms alone make of a text.
FORMS_ONLY = WordingModel(buckets=8, bias=-4.595, weights=[0.0] * 8)


def claims_score(text: str, learned: WordingModel | None = None) -> float:
    found = claims.extract_claims(text, learned=learned)
    return claims.score_claims(found, [claims.UNVERIFIABLE] * len(found))


@pytest.mark.parametrize(
    "text",
    [
        # a picture or a clip shown out of its context or its time
        "That video of soldiers blocking the border crossing is an old video from a 2015 "
        "exercise, not from this week.",
        "The 'minister admits prices will double' clip was selectively edited: in the full "
        "interview she says the opposite.",
        "Fotografia cu tancurile de pe autostradă e de fapt din 2014, de la o paradă militară.",
        "Declarația a fost scoasă din context: medicul vorbea despre cu totul alt vaccin.",
        # someone's words, quoted, then contradicted or refuted
        "The MP told the chamber that „5G masts spread the virus”, a statement refuted the "
        "same day by the telecoms regulator.",
        "Deputatul a spus în emisiune că „apa de la robinet e otrăvită cu plumb”, afirmație "
        "infirmată a doua zi de Apa Nova.",
        # a theory reported as a theory, and evidence for it denied however qualified
        "The theory that wind turbines cause cancer has no scientific basis, engineers and "
        "oncologists say.",
        "Teoria potrivit căreia antenele provoacă migrene nu are nicio susținere științifică.",
    ],
)
def test_rebuttals_of_what_someone_else_said_or_showed_are_not_claims(text: str) -> None:
    assert claims_score(text) < FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        # the same claims asserted, with nothing rebutting them
        "Secret documents show the army will close every border crossing on Monday. "
        "Share this before they delete it!",
        "The minister admitted prices will double by Christmas. Forward this to everyone!",
        "Teoria e simplă: antenele 5G provoacă migrene la 8 din 10 copii. Distribuiți!",
        "Apa de la robinet e otrăvită cu plumb și primăria ascunde asta de ani de zile.",
        # a "No," that answers nothing rebuts nothing
        "No, this is not a joke: the government will seize every savings account on Monday. "
        "Share this now!",
        "Nu, nu e glumă: guvernul confiscă toate economiile de luni. Distribuiți!",
    ],
)
def test_the_same_claims_asserted_stay_risky(text: str) -> None:
    assert claims_score(text, learned=FORMS_ONLY) >= FLAGGED


@pytest.mark.parametrize(
    "sentence",
    [
        "The photo is actually from a 2019 flood in Texas.",
        "Clipul e de fapt din 2018 și a fost scos din context.",
    ],
)
def test_media_out_of_context_is_a_rebuttal_in_its_own_sentence(sentence: str) -> None:
    assert "debunked" in sentence_register(sentence)


def test_a_rebuttal_word_needs_someone_elses_words_beside_it() -> None:
    """ "Refuted" rebuts only beside a claim reported as someone else's: a quotation of three
    words or more, a reported claim, or an answer opening with "No,"."""
    alone = text_registers(["The results were refuted."])
    quoted = text_registers(["His claim that „the dam was emptied in secret” was refuted."])
    answered = text_registers(["No, garlic does not cure infections.", "That was refuted."])
    assert "debunked" not in alone[0]
    assert "debunked" in quoted[0]
    assert "debunked" in answered[1]


@pytest.mark.parametrize(
    "sentence",
    ["The doctor explains what the scan shows.", "Medicul explică ce arată analizele."],
)
def test_an_expert_who_explains_is_a_source(sentence: str) -> None:
    assert "sourced" in sentence_register(sentence)


@pytest.mark.parametrize(
    "host",
    [
        "dpd-parcels-redeliver.com",
        "fedex-parcel-redeliver.com",
        "evri-parcels-rescheduled.com",
        "dhl-coletul-tau.com",
        "gls-livrari-colete.com",
    ],
)
def test_a_courier_beside_an_inflected_lure_word_is_a_lookalike(host: str) -> None:
    """ "parcels", "redeliver", "coletul" are the lure words "parcel", "redelivery", "colet"."""
    assert domains.assess_host(host).risk >= FLAGGED


@pytest.mark.parametrize("host", ["dpd.co.uk", "fedex.com", "dhl.com", "parcels-redeliver.com"])
def test_couriers_own_hosts_and_lure_words_alone_stay_low(host: str) -> None:
    assert domains.assess_host(host).risk < FLAGGED


@pytest.mark.parametrize(
    ("word", "stem"),
    [
        ("parcels", "parcel"),
        ("redeliver", "redelivery"),
        ("coletul", "colet"),
        ("pay", None),
        ("logins", "login"),
        ("ids", None),
    ],
)
def test_lure_stems(word: str, stem: str | None) -> None:
    lures = frozenset({"parcel", "redelivery", "colet", "login", "id", "pay"})
    assert lure_stem(word, lures) == stem


@pytest.mark.parametrize(
    "text",
    [
        "Am plătit deja prin livrarea OLX. Intri pe link și introduci datele cardului, inclusiv "
        "codul CVV: https://bit.ly/olx-incasare-9k2",
        "Your order is paid. To receive the money enter your card number and CVV here: "
        "https://tinyurl.com/recv-funds",
    ],
)
def test_a_shortener_in_a_message_asking_for_card_details_is_risky(text: str) -> None:
    assert domains.assess_domains(text).score >= FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        "A video shared on TikTok claims that wifi routers cause migraines. Neurologists say "
        "there is no link and no good evidence for it.",
        "Mesajul de pe WhatsApp susține că laptele de capră vindecă astmul; medicii spun că "
        "aceste rețete nu au susținere în studii.",
    ],
)
def test_evidence_denied_beside_a_reported_claim_is_a_debunk(text: str) -> None:
    assert claims_score(text) < FLAGGED
