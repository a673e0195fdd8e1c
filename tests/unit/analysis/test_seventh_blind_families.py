"""Families grown in the seventh round of issue 19, after two more sets written blind (ids
`*-j-*`, e-mail, SMS and messaging voices leaning on link tricks, and `*-k-*`, social and
news voices leaning on how claims are made). Each is checked on sentences written for this
test (none is in the evaluation set), in Romanian and English, beside texts sharing their
words that must stay flagged."""

import pytest

from tests.unit.analysis.probes import FLAGGED, claims_score
from workers.analysis import domains, techniques
from workers.analysis.claim_forms import sentence_register, text_registers
from workers.analysis.lookalikes import lure_stem
from workers.analysis.wording_model import WordingModel

# A learned claims model that reads every text at 0.01: what the forms alone make of a text.
FORMS_ONLY = WordingModel(buckets=8, bias=-4.595, weights=[0.0] * 8)


@pytest.mark.parametrize(
    "text",
    [
        # words or a clip shown out of their context, said in the sentence that names them
        "The 'minister admits prices will double' clip was selectively edited: in the full "
        "interview she says the opposite.",
        "That shark-on-the-motorway picture is a years-old fake that comes back every storm.",
        "Declarația „vaccinul modifică ADN-ul” a fost scoasă din context: medicul vorbea "
        "despre cu totul alt vaccin.",
        # a statement reported as one, then contradicted or refuted
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
        # rebuttal words turned against the official story: a "No," a quotation, "actually
        # from", "out of context" in the sentence before, an old photo
        "No, this is not a joke: the government will seize every savings account on Monday. "
        "Share this now!",
        "Nu, nu e glumă: guvernul confiscă toate economiile de luni. Distribuiți!",
        'They keep repeating "the vaccines are safe". That has been refuted by thousands of '
        "deaths. The jab causes infertility in young women.",
        "NO! Do not let them vaccinate your children. The vaccine causes autism and the "
        "government knows it. The official story is false.",
        "The virus is actually from a lab in Wuhan, and they covered it up. Share before it "
        "is deleted!",
        "Virusul este de fapt din laboratorul din Wuhan, iar guvernul a ascuns totul. Distribuiți!",
        "An old photo of my grandparents shows the truth: vaccines caused the autism epidemic "
        "in our village.",
        "They will tell you it was taken out of context. It wasn't. Bill Gates admitted the "
        "vaccines are meant to depopulate the planet.",
    ],
)
def test_the_same_claims_asserted_stay_risky(text: str) -> None:
    """As the shipped analyser scores them (its learned model included: several of these
    are risky by their wording more than by their forms)."""
    assert claims_score(text) >= FLAGGED


@pytest.mark.parametrize(
    "sentence",
    [
        "The clip was cut mid-sentence to make him say the opposite.",
        "Clipul din 2018 a fost scos din context.",
    ],
)
def test_media_out_of_context_is_a_rebuttal_in_its_own_sentence(sentence: str) -> None:
    assert "debunked" in text_registers([sentence])[0]


def test_a_rebuttal_word_needs_a_reported_claim_beside_it() -> None:
    """ "Refuted" rebuts only beside a claim reported as someone else's; an outright
    rebuttal ("out of context") counts in its own sentence, not in the next one's."""
    alone = text_registers(["The results were refuted."])
    reported = text_registers(["The theory that the dam was emptied in secret was refuted."])
    outright = text_registers(["They say it was taken out of context.", "It was not."])
    assert "debunked" not in alone[0]
    assert "debunked" in reported[0]
    assert "debunked" in outright[0] and "debunked" not in outright[1]


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
        # round 8 (set L): no proven effect of a reported cure
        "Posts on Facebook claim that copper bracelets cure arthritis; rheumatologists say they "
        "have no proven effect.",
        "Medicii avertizează că „ceaiurile care vindecă diabetul”, vândute pe rețelele sociale, "
        "nu au niciun efect dovedit.",
    ],
)
def test_evidence_denied_beside_a_reported_claim_is_a_debunk(text: str) -> None:
    assert claims_score(text) < FLAGGED


@pytest.mark.parametrize(
    ("text", "family"),
    [
        ("People like them don't work, don't integrate and never will.", "collective_blame"),
        ("The genocide the Western media refuse to show you.", "conspiracy"),
        ("The government will never tell you the truth about the floods.", "conspiracy"),
        ("They had weather weapons for decades. Connect the dots.", "insinuation"),
        ("Council hasn't said a word about the estate, which tells you everything.", "insinuation"),
        ("Presa refuză să vă arate ce se întâmplă la graniță.", "conspiracy"),
        ("They get paid per dose, so they'll never tell you.", "conspiracy"),
    ],
)
def test_the_new_technique_cues_find_their_shapes(text: str, family: str) -> None:
    kinds = {f.kind for f in techniques.assess_techniques(text, learned=False).findings}
    assert family in kinds


@pytest.mark.parametrize(
    "text",
    [
        "Our new nurses are wonderful. We need more people like them in every hospital.",
        "People like them never give up.",
        "Doctors won't tell you the results until the lab confirms them, which takes two days.",
        "Guvernul nu vă spune ce să mâncați, dar medicii recomandă mai multe legume.",
        "Detectives are trying to connect the dots between the two burglaries.",
        "The first snowflakes fell over Brașov this morning.",
        "Thank you all for their kind words and support after the flood.",
        # a bank's warning is worded like the scam it warns of, not like an exaggeration
        "Your bank will never tell you to move money to a safe account.",
        "Ask your pharmacist about side effects; they won't tell you unless you ask.",
        "Airlines overbook flights, and they won't tell you about compensation unless you ask.",
    ],
)
def test_the_same_words_in_honest_texts_stay_low(text: str) -> None:
    assert techniques.assess_techniques(text).score < FLAGGED


@pytest.mark.parametrize(
    "host", ["stores.ebay.fr", "stores.ikea.de", "who-cares.org", "nhs-teams.org", "ms-teams.de"]
)
def test_inflections_of_ordinary_lure_words_are_not_lures(host: str) -> None:
    """Only parcel, payment and sign-in lures inflect: stores, teams and cares are shops'
    and charities' names."""
    assert domains.assess_host(host).risk < FLAGGED


def test_a_pin_and_a_card_beside_a_shortener_ask_for_nothing() -> None:
    text = "Sign the birthday card for Maria before Friday and pin this message: bit.ly/3xKq9Zt"
    assert domains.assess_domains(text).score < FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        "Times New Roman: Românii, nemulțumiți că Black Friday ține doar o lună, cer guvernului "
        "să introducă Black Trimestru, iar 100% dintre ei confirmă.",
        "The Onion: scientists confirm 100% of Americans now own an air fryer.",
        "Scientists confirm 100% of Americans now own an air fryer (theonion.com).",
    ],
)
def test_a_text_credited_to_a_satire_outlet_is_satire(text: str) -> None:
    """Set L: satire credited to its outlet, without the word "satire" (set L, round 7)."""
    assert claims_score(text) < FLAGGED
    assert techniques.assess_techniques(text).score < FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        "Peel and chop the onion: garlic and onion juice cure cancer in three days, doctors "
        "hide it!",
        "Give your horse a daily mash of bran. Also: 5G towers cause COVID, share this!",
    ],
)
def test_an_outlet_s_name_in_ordinary_words_is_no_credit(text: str) -> None:
    """Only a text that opens with the outlet's name and a colon, or names its site, is
    credited to it (a review of round 8)."""
    assert claims_score(text) >= FLAGGED
    assert techniques.assess_techniques(text).score >= FLAGGED


def test_an_onion_is_not_the_onion() -> None:
    """A home remedy that slices "the onion" is no satire outlet: its cure stays a claim."""
    text = (
        "Skip the ibuprofen. Put a raw onion in their socks overnight and it pulls the infection "
        "out through the feet. By morning the onion turns black from the toxins."
    )
    assert claims_score(text) >= FLAGGED


@pytest.mark.parametrize("host", ["bnr-invest-ai.online", "bnr-romania.com"])
def test_the_central_bank_is_protected(host: str) -> None:
    assert domains.assess_host(host).risk >= FLAGGED


@pytest.mark.parametrize("host", ["bnr.ro", "curs.bnr.ro", "news.bnr.bg", "live.bnr.nl"])
def test_the_central_bank_s_own_hosts_stay_low(host: str) -> None:
    assert domains.assess_host(host).risk < FLAGGED
