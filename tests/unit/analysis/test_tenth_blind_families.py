"""Families grown in the tenth round of issue 19, after two more sets written blind (ids
`*-r-*`, workplace, school and public-service voices, and `*-s-*`, long-form and broadcast
voices, held out). Each is checked on sentences written for this test (none is in the
evaluation set), in Romanian and English, beside texts sharing their words that must stay
low: a school's lice notice, a bank's warning quoting a scam, a fact-check column, a
teacher's complaint, an HR expenses note."""

import pytest

from workers.analysis import claims, domains, techniques
from workers.analysis.claim_forms import sentence_register, unsupported_next
from workers.analysis.technique_context import quotes

FLAGGED = 50


def claims_score(text: str) -> float:
    found = claims.extract_claims(text)
    return claims.score_claims(found, [claims.UNVERIFIABLE] * len(found))


def kinds(text: str) -> set[str]:
    return {f.kind for f in techniques.assess_techniques(text, learned=False).findings}


def domain_risk(host: str) -> float:
    return max((risk for _, risk in domains.assess_host(host).reasons), default=0.0)


@pytest.mark.parametrize(
    ("text", "family"),
    [
        # a cover story; kept quiet; pushed out quietly
        ("The roadworks are just a cover for the new masts.", "conspiracy"),
        ("Those 'fire drills' are cover for something else.", "conspiracy"),
        ("The hospital is keeping it quiet until after the vote.", "conspiracy"),
        ("Every nurse who complained was quietly sacked.", "conspiracy"),
        ("Renovarea e doar o acoperire pentru antenele noi.", "conspiracy"),
        ("Conducerea ține totul secret până după alegeri.", "conspiracy"),
        # suspicion raised without a claim
        ("Why else would they announce it on a Friday night?", "insinuation"),
        ("Has anyone else noticed that the fines only started after the election?", "insinuation"),
        ("Call me paranoid, but the timing is strange.", "insinuation"),
        ("De ce altfel ar anunța asta vineri seara?", "insinuation"),
        ("A mai observat cineva că amenzile au început imediat după alegeri?", "insinuation"),
        ("Nu vreau să fiu paranoic, dar e ciudat.", "insinuation"),
        # a warning to pass to everyone one knows; scarcity
        ("Screenshot this and send it to every parent you know.", "urgency"),
        ("Trimiteți mesajul tuturor celor pe care îi cunoașteți.", "urgency"),
        ("Only 3 spots left this week, apply now.", "urgency"),
        ("Au mai rămas doar 2 locuri, grăbiți-vă.", "urgency"),
        # an identity document asked for
        ("Please upload a copy of your passport to our portal.", "data_request"),
        ("Încărcați o copie a buletinului pe platformă.", "data_request"),
        # the remedy's promise
        ("Colloidal silver drops do the same job with zero side effects.", "miracle_cure"),
        ("Argintul coloidal vindecă totul, zero efecte secundare.", "miracle_cure"),
    ],
)
def test_the_new_cues_find_their_shapes(text: str, family: str) -> None:
    assert family in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        # lice at school are lice
        "Stimați părinți, în clasa a II-a au fost semnalate cazuri de păduchi. Vă rugăm să "
        "verificați părul copiilor.",
        "A few cases of head lice have been reported in Year 3; please check your child's hair.",
        # nobody reads the forms: a complaint, not a call to stop reading
        "Completăm rapoarte pe care nu le citește nimeni.",
        # a bank quoting the scam it warns of, a word's apostrophe inside the quote
        "We've seen texts saying 'A new payee has been added. If this wasn't you, call us on "
        "the number below.' Don't call it: use the number on your card.",
        # a fact-check column's label and a real deadline
        "FACT CHECK: A post claiming schools will fine parents £1,000 is false. The standard "
        "penalty is £80, rising to £160 if not paid within 21 days.",
        # cover and keeping in their ordinary senses
        "Can you cover for me on Friday? I'll keep it short.",
        "Insurance cover for the trip is included; keep the receipt.",
        # places at a venue, a passport photo at the post office
        "Only 12 places are available on the course, so book early.",
        "Bring a passport photo and a copy of your birth certificate to the office.",
    ],
)
def test_the_same_words_in_honest_texts_stay_low(text: str) -> None:
    assert techniques.assess_techniques(text).score < FLAGGED


def test_a_quote_holds_the_apostrophes_of_its_words() -> None:
    text = "they said 'if this wasn't you, call us' and hung up; it's john's"
    assert [text[a:b] for a, b in quotes(text)] == ["'if this wasn't you, call us'"]


@pytest.mark.parametrize(
    "text",
    [
        "Speaking on local radio, the councillor claimed the new scheme had doubled response "
        "times. He did not say where the figure came from.",
        "Un consilier local a declarat că jumătate dintre livratori au cazier. Consilierul nu "
        "a prezentat date care să susțină afirmația.",
    ],
)
def test_a_claim_its_speaker_leaves_unsupported_in_the_next_sentence_is_risky(text: str) -> None:
    assert claims_score(text) >= FLAGGED


def test_a_third_party_s_silence_in_the_next_sentence_is_not_the_speaker_s() -> None:
    said = "The councillor claimed the scheme doubled response times."
    silent = "The ambulance trust did not present any figures."
    assert not unsupported_next(said, silent, sentence_register(silent))
    again = "He did not present any figures."
    assert unsupported_next(said, again, sentence_register(again))
    # nobody's word given in the first sentence: nothing to leave unsupported
    plain = "Response times doubled last winter."
    assert not unsupported_next(plain, again, sentence_register(again))


@pytest.mark.parametrize(
    "sentence",
    [
        "Is it true they're scrapping the bus passes for everyone over 60 next year?",
        "E adevărat că de la anul se taie bursele tuturor celor cu restanțe?",
        "Someone in finance told me everyone on a fixed contract goes to zero hours.",
        "Mi-a zis o colegă că se închide cantina de luni.",
    ],
)
def test_a_rumour_asked_about_or_heard_from_someone_is_passed_on(sentence: str) -> None:
    assert "viral_sources" in sentence_register(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "It is true that the buses were late this week.",
        "E adevărat că autobuzele au întârziat săptămâna asta, dar primăria a explicat de ce.",
    ],
)
def test_a_statement_that_something_is_true_is_no_rumour(sentence: str) -> None:
    assert "viral_sources" not in sentence_register(sentence)


@pytest.mark.parametrize(
    "text",
    [
        "Research consistently shows that remote staff are 47% more productive.",
        "Un sondaj recent arată că 73% dintre manageri nu observă nimic.",
    ],
)
def test_a_study_or_survey_no_one_is_named_for_is_unsourced(text: str) -> None:
    assert "unsourced" in sentence_register(text)


@pytest.mark.parametrize(
    "text",
    [
        "Verificare: Nu, compania nu a anunțat că închide toate oficiile. Postarea care "
        "circulă pe Facebook pornește de la o știre veche.",
        "La miting, un vorbitor a strigat că «profesorii sunt trădători plătiți». Sindicatul "
        "a condamnat declarația.",
    ],
)
def test_a_fact_check_and_a_quoted_accusation_are_not_claims_of_the_text(text: str) -> None:
    assert claims_score(text) < FLAGGED


@pytest.mark.parametrize(
    ("host", "risky"),
    [
        ("amazon-careers-onboarding.net", True),
        ("edu-ro-bursa.online", True),
        ("hr-portal-office365-ro.com", True),
        ("amazon.jobs", False),
        ("hiring.amazon.com", False),
        ("admitere.edu.ro", False),
        ("edu-consult.ro", False),
        ("careers.ro", False),
    ],
)
def test_jobs_payroll_and_grant_words_lure_beside_a_protected_name(host: str, risky: bool) -> None:
    assert (domain_risk(host) >= FLAGGED) is risky
