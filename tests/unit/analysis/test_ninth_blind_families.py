"""Families grown in the ninth round of issue 19, after two more sets written blind (ids
`*-p-*`, home and community voices, and `*-q-*`, media and institution voices). Each is
checked on sentences written for this test (none is in the evaluation set), in Romanian and
English, beside texts sharing their words that must stay low: a pizzeria's offer, a
donation appeal, a pharmacist's advice, a school notice."""

import pytest

from tests.unit.analysis.probes import FLAGGED, claims_score, kinds
from workers.analysis import claims, techniques
from workers.analysis.claim_forms import left_unsupported, sentence_register
from workers.analysis.datafiles import load
from workers.analysis.wording_model import WordingModel


@pytest.mark.parametrize(
    ("text", "family"),
    [
        # abstaining named as taking the other side
        ("Anyone who stays home is on their side.", "false_dilemma"),
        ("Whoever doesn't vote this time is against us.", "false_dilemma"),
        ("Cine nu vine duminică la vot e de partea lor.", "false_dilemma"),
        # a side and then the choice
        ("You are with the nation or with the traitors.", "false_dilemma"),
        ("Ori ești cu țara sau cu hoții, altă cale nu e.", "false_dilemma"),
        # them first
        ("It's them or us now, nothing in between.", "us_vs_them"),
        ("De acum e ei sau noi.", "us_vs_them"),
        # a child to be kept from a treatment
        ("DON'T let the school nurse spray your child with that vaccine.", "fear_appeal"),
        ("Nu-i lăsați să vă vaccineze copilul la școală!", "fear_appeal"),
        ("Copiii voștri sunt următorii.", "fear_appeal"),
        # a warning to pass on
        ("Pass it on to everyone in the building.", "urgency"),
        ("Spuneți-le tuturor din bloc!", "urgency"),
        # the professions said to keep the truth back; the elite by name
        ("Medicii nu vă spun niciodată adevărul despre asta.", "conspiracy"),
        ("Școala nu vă spune adevărul despre ce învață copiii voștri.", "conspiracy"),
        ("The WEF and the Bilderberg crowd decided this years ago.", "conspiracy"),
        # money asked for from a "new number" that cannot take a call
        (
            "Hi mum, this is my new number. Can you send me £240 for the rent? "
            "Can't talk right now.",
            "data_request",
        ),
        (
            "Mami, ăsta e numărul meu nou. Poți să-mi trimiți tu 1.850 lei azi? Nu pot vorbi acum.",
            "data_request",
        ),
        # voters blamed as one; a group called a rabble
        ("Toți cei care i-au votat pe ăștia sunt vinovați pentru prețuri.", "collective_blame"),
        ("Everyone who voted for them is to blame for these prices.", "collective_blame"),
        ("Chiriașii ăștia sunt o adunătură de nesimțiți.", "collective_blame"),
        ("This entitled mob thinks the rules don't apply to them.", "collective_blame"),
        # a vaccine said to cause a harm
        ("The MMR jab causes autism, full stop.", "fear_appeal"),
        ("Vaccinul ROR dă autism.", "fear_appeal"),
        # a remedy offered in place of medicine; "works every time"
        ("It may be a safer alternative to conventional medicines.", "miracle_cure"),
        ("Înlocuiți treptat medicamentele cu această alternativă naturală.", "miracle_cure"),
        ("This herbal tonic is a safer alternative to conventional medicines.", "miracle_cure"),
        # a trade said to live off the secret
        ("The chemists would go bust if everyone knew.", "conspiracy"),
        ("Farmaciile ar da faliment dacă ar ști toată lumea.", "conspiracy"),
        # without pills or surgery
        ("Slăbiți fără pastile și fără operație!", "miracle_cure"),
        # quitting treatment, asserted
        ("Stop taking your statins and drink this instead.", "miracle_cure"),
        ("Renunțați la pastile și beți ceaiul dimineața.", "miracle_cure"),
    ],
)
def test_the_new_cues_find_their_shapes(text: str, family: str) -> None:
    assert family in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        # "Da" is a word, not the insinuation "da, sigur."
        "Pizzeria Da Nonna: 20% reducere la toate pizzele până duminică. "
        "Da, și livrarea e gratuită.",
        # a choice of means, not of sides
        "Puteți dona cu cardul, prin transfer bancar sau prin SMS cu textul AJUTOR la 8844.",
        "You can pay with a card or with cash at the door.",
        # the pharmacist's advice negates quitting
        "Never stop a prescribed medicine without talking to your doctor first, "
        "the pharmacist said.",
        "Nu opriți niciodată tratamentul fără acordul medicului de familie. Dacă apar reacții "
        "adverse, sunați la cabinet.",
        # children named with no threat
        "Copiii voștri pot lua prânzul la cantină începând de luni.",
        "Our children can join the summer reading club at the library from June.",
        # a neighbour's ordinary message
        "Tell your parents the bus timetable changes on Monday.",
        # a pack of eggs; a GP's alternative; a seat in the stand; honey kept from a baby
        "I bought a pack of 12 eggs and a pack of butter.",
        "If you're allergic to penicillin, your GP will prescribe an alternative to those "
        "antibiotics.",
        "Cine nu are bilet stă în partea dreaptă a tribunei.",
        "Do not allow anyone to give your baby honey before their first birthday, midwives advise.",
        "Could you send me the 3 recipes you mentioned? I can't call right now.",
        "Hi all, this is my new number, please save it.",
        # an honest alternative; a business that would fail for plain reasons
        "Generic drugs are a cheaper alternative to brand-name medicines, the regulator says.",
        "The bakery would go bust if the rent doubled again.",
        # the vaccine harm denied, or reported and answered
        "Vaccines do not cause autism, a study of 650,000 Danish children found.",
        "Un clip viral pe TikTok susține că vaccinul HPV provoacă infertilitate. Medicii spun "
        "că nu există nicio legătură.",
    ],
)
def test_the_same_words_in_honest_texts_stay_low(text: str) -> None:
    assert techniques.assess_techniques(text).score < FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        "The post saying the bridge will close for a year is fake; the council is not running "
        "any such works.",
        "The photo of sharks in the flooded street is photoshopped: a reverse image search "
        "shows it first surfaced in 2011.",
        "Mesajul care circulă pe WhatsApp nu e adevărat: nu există nicio decizie de închidere "
        "a podului.",
        "Imaginea cu rechinul pe autostradă e un fotomontaj, apărut prima dată în 2011.",
    ],
)
def test_a_denial_by_the_authority_or_a_fact_checker_s_tracing_is_a_debunk(text: str) -> None:
    assert "debunked" in sentence_register(text)
    assert claims_score(text) < FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        "The mayor claimed crime had doubled but did not present any figures.",
        "Someone in the group claims the hotel migrants get £2,000 a month, haven't seen "
        "anything official.",
        "Primarul a afirmat că infracționalitatea s-a dublat, dar nu a prezentat nicio cifră.",
        "Habar n-am de unde a auzit asta.",
    ],
)
def test_a_claim_left_unsupported_is_unsourced(text: str) -> None:
    assert "unsourced" in sentence_register(text)


@pytest.mark.parametrize(
    "sentence",
    [
        "There's a post going round saying the tap water is unsafe.",
        "A message is doing the rounds in the parents' group.",
    ],
)
def test_a_claim_passed_around_names_its_source_as_viral(sentence: str) -> None:
    assert "viral_sources" in sentence_register(sentence)


@pytest.mark.parametrize(
    "text",
    ["Hi, this is my new number, save it!", "Vă rog să trimiteți avansul de 150 lei prin copil."],
)
def test_a_new_number_or_a_payment_asked_for_alone_is_no_scam(text: str) -> None:
    """The rules alone: the learned wording model reads both short requests as
    manipulative (a miss of the model this round left, docs/analysis.md)."""
    assert techniques.assess_techniques(text, learned=False).score < FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        "Cllr Pritchard claimed that most of the fly-tipping comes from the new site, but did "
        "not offer any figures.",
        "Viceprimarul a afirmat că jumătate dintre blocuri nu au autorizație, dar nu a "
        "prezentat nicio cifră.",
    ],
)
def test_a_claim_reported_and_left_unsupported_is_risky_without_other_forms(text: str) -> None:
    assert claims_score(text) >= FLAGGED


def test_only_a_reported_claim_its_own_sentence_leaves_unsupported_is_a_rumour() -> None:
    own = ("reported_claim", "unsourced")
    assert left_unsupported(own, own)
    assert not left_unsupported(own, (*own, "debunked"))
    assert not left_unsupported(own, (*own, "satire"))
    # a third party's silence in the next sentence is no want of support in this one
    assert not left_unsupported(("reported_claim",), own)


@pytest.mark.parametrize(
    "text",
    [
        "The union claims that staff were not paid overtime. The company did not respond to "
        "our request for comment.",
        "Ukraine's air force claimed that it shot down 20 of 25 drones overnight. The figures "
        "could not be verified.",
        "Chickenpox is going around nursery again. The doctor said it causes a rash for a week.",
        "Primăria susține proiectul noului parc. Consiliul Județean nu a răspuns solicitării.",
    ],
)
def test_news_with_a_silent_third_party_or_an_illness_going_round_is_no_claim(text: str) -> None:
    assert claims_score(text) < FLAGGED


# A learned claims model that reads every text at 0.01: what the forms alone make of a text.
FORMS_ONLY = WordingModel(buckets=8, bias=-4.595, weights=[0.0] * 8)


def test_only_the_claim_s_own_sentence_can_leave_it_unsupported() -> None:
    """The same words of want of support: in the claim's sentence they are the claimant's,
    in the next one they are the company's answer, which is reporting."""
    own = "The union claims that staff were not paid overtime, but did not provide any figures."
    next_one = (
        "The union claims that staff were not paid overtime. The company did not provide any "
        "figures."
    )
    assert [c.cues for c in claims.extract_claims(own, learned=FORMS_ONLY)] == [("rumour",)]
    assert claims.extract_claims(next_one, learned=FORMS_ONLY) == []


@pytest.mark.parametrize(
    "sentence",
    [
        "Am văzut că circulă site-uri care cer 150 de lei – nu plătiți nimic acolo.",
        "There are fake booking sites going round: don't pay anything there.",
        "UKHSA is urging parents to check their children have had both MMR doses.",
    ],
)
def test_a_warning_not_to_pay_or_an_urged_check_is_advice(sentence: str) -> None:
    assert "advice" in sentence_register(sentence)


def _single_words(terms: list[str]) -> list[str]:
    return [t for t in terms if " " not in t.strip()]


def test_no_lexicon_term_is_a_fragment_of_a_split_phrase() -> None:
    """An unquoted comma in a YAML flow list splits a phrase ("da, sigur." became "da" and
    "sigur.", and every Romanian "da" was an insinuation): no single-word term is shorter
    than three letters."""
    lexicons = [
        terms
        for spec in load("techniques.yaml")["techniques"].values()
        for terms in (spec.get("terms") or {}).values()
    ]
    lexicons += [
        terms
        for languages in load("claims.yaml")["registers"].values()
        for terms in languages.values()
    ]
    short = [
        term for terms in lexicons for term in _single_words(terms) if len(term.strip("*.!?,'")) < 3
    ]
    assert short == []
