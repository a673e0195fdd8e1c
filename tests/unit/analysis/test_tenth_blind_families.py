"""Families grown in the tenth round of issue 19, after four more sets written blind (ids
`*-r-*`, workplace, school and public-service voices; `*-s-*`, long-form and broadcast
voices, held out; `*-t-*`, health, parenting and food voices; `*-u-*`, political, civic and
public-safety voices, held out). Each is checked on sentences written for this test (none is in the
evaluation set), in Romanian and English, beside texts sharing their words that must stay
low: a school's lice notice, a bank's warning quoting a scam, a fact-check column, a
teacher's complaint, an HR expenses note."""

import pytest

from tests.unit.analysis.probes import FLAGGED, claims_score, kinds
from workers.analysis import domains, techniques
from workers.analysis.claim_forms import sentence_register, unsupported_next
from workers.analysis.technique_context import quotes


def domain_risk(host: str) -> float:
    return max((risk for _, risk in domains.assess_host(host).reasons), default=0.0)


@pytest.mark.parametrize(
    ("text", "family"),
    [
        # a cover story; kept quiet; pushed out quietly
        ("The roadworks are cover for the new masts.", "conspiracy"),
        ("Those 'fire drills' are cover for something else.", "conspiracy"),
        ("The hospital is keeping it quiet until after the vote.", "conspiracy"),
        ("Every nurse who complained was quietly sacked.", "conspiracy"),
        ("Renovarea e doar un paravan pentru antenele noi.", "conspiracy"),
        ("Conducerea ține totul secret până după alegeri.", "conspiracy"),
        # suspicion raised without a claim
        ("Why else would they announce it on a Friday night?", "insinuation"),
        ("Has anyone else noticed that the fines only started after the election?", "insinuation"),
        ("Call me paranoid, but the timing is strange.", "insinuation"),
        ("De ce altfel ar anunța asta vineri seara?", "insinuation"),
        ("A mai observat cineva că amenzile au început imediat după alegeri?", "insinuation"),
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
        # sets T and U: a child taken from the family or kept from care
        ("Unvaccinated children will be taken away from their parents next month.", "fear_appeal"),
        ("Copiii nevaccinați vor fi luați din familie de luna viitoare.", "fear_appeal"),
        ("Nu mai duceți copiii la dispensar până se clarifică.", "fear_appeal"),
        # sons sent to the front, pensions cut
        ("If we lose, your sons will be drafted by spring.", "fear_appeal"),
        ("Băieții voștri primesc ordin de încorporare din ianuarie.", "fear_appeal"),
        ("Pensiile voastre se taie la jumătate din ianuarie.", "fear_appeal"),
        # a law passed in secret; a war staged; paid per prescription; a plan to replace "us"
        ("Legea a trecut deja, pe ascuns, noaptea.", "conspiracy"),
        ("The war is theatre and the rubble is a rented set.", "conspiracy"),
        (
            "Hospitals get paid more for every C-section, so of course they find a problem.",
            "conspiracy",
        ),
        ("Medicii de familie primesc bonus pe fiecare rețetă.", "conspiracy"),
        ("E un plan vechi: să golească satele de români.", "conspiracy"),
        ("Criza la curent e fabricată de la un capăt la altul.", "conspiracy"),
        # leading questions
        ("Ever notice how the guidelines change right after a new drug launches?", "insinuation"),
        ("Credeți că e întâmplător că se întâmplă exact acum?", "insinuation"),
        ("Puneți cap la cap și o să vedeți.", "insinuation"),
        # the accuser's own record
        ("Where was all this outrage when they sold the playing fields?", "whataboutism"),
        ("Unde erau ei când s-au închis spitalele?", "whataboutism"),
        # an army occupying the cities
        ("Sunt o armată care ne ocupă orașele.", "dehumanisation"),
        # loyalty points about to expire, a hamper won
        ("Your reward points (1,250) expire today.", "pressure"),
        ("Punctele tale de fidelitate (1.250) expiră astăzi.", "pressure"),
        ("You've won this month's hamper!", "pressure"),
        # a deadline pressed: no time left
        ("Sunați-vă părinții, azi, nu mâine.", "urgency"),
        # the review's own variants of the round's families
        ("Unde a fost toată revolta voastră când ai voștri furau?", "whataboutism"),
        ("The whole war is a show put on for TV cameras.", "conspiracy"),
        ("Paramedics are told to keep quiet about the ambulance delays.", "conspiracy"),
        ("They're coming for unvaccinated kids next, they'll put them in care.", "fear_appeal"),
        ("Dacă nu vă vaccinați copilul, statul vi-l ia și îl dă în plasament.", "fear_appeal"),
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
        # a team's score is no prize; a meeting missed is no payment refused
        "Echipa a câștigat sâmbătă, scor 29-26, meciul din deplasare.",
        "We won 3-1 on Saturday and moved up to fifth.",
        "If you can't make it to the meeting, file the form by the same day.",
        "We'll always ask before replacing anything over $20.",
        # "să" is no "sau"; a father home from hospital today
        "Le folosim ca să clasificăm copiii, nu ca să vedem unde îi pierdem.",
        "Tata a ieșit azi din spital și trebuie să-și facă analizele săptămânal.",
        # a school's vaccine schedule, a pension rise, a war reported
        "Copiii vor fi vaccinați la cabinetul școlii, cu acordul părinților.",
        "Pensiile cresc cu 5% din ianuarie, a anunțat ministerul.",
        "The war entered its third year; aid convoys reached the city on Monday.",
        # a review of the round: honest sentences sharing the new cues' words
        "The tarpaulin is just a cover for the sandpit when it rains.",
        "Please keep it quiet until Friday, the surprise party for Dan is at 7.",
        "Vă rugăm să păstrați secret cadoul pentru doamna învățătoare.",
        "The bill went through overnight after a marathon session, 312 votes to 210.",
        "Hospitals receive more funding for every patient treated within four hours.",
        "The council's plan to replace the workers' canteen with a gym was rejected.",
        "I'm not paranoid, but I do lock the car twice before bed.",
        "Ever wondered how sourdough gets its tang?",
        "Ne-am întâlnit unde era cafeneaua veche, când eram studenți.",
        "There are only 12 spots left in the car park after 9am.",
        "Trimiteți invitația tuturor colegilor pe care îi știți din anul trei.",
        "Don't worry about the washing up, we'll do it ourselves.",
        "Armata română ocupă locul 3 în clasament.",
        "Babies are taken from their mothers to the neonatal unit only if they need oxygen.",
        "După 7 zile de tratament, nu mai dați pastilele, chiar dacă a mai rămas în cutie.",
        "The children sat in the front row at the school concert.",
        "I cut my savings goal this month because the car needed new tyres.",
        "Reminder: your points expire after 12 months without a purchase.",
        "You won 2-1 against a strong side.",
        "If you can't make this Thursday's meeting, send your apologies.",
        "The foster care agency placed two children with a new family on Monday.",
        "Cei trei copii au fost dați în plasament la bunici, a precizat DGASPC.",
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
        "A recent survey by Eurostat found that 62% of Romanians own their homes.",
        "Studiile au arătat că vaccinul reduce spitalizările cu 80%, potrivit Institutului.",
    ],
)
def test_a_study_named_in_its_own_sentence_is_sourced(text: str) -> None:
    assert "unsourced" not in sentence_register(text)


def test_a_question_is_a_rumour_only_when_something_is_at_stake() -> None:
    asked = "Is it true that the school will close early on Friday for the training day?"
    assert "viral_sources" not in sentence_register(asked)


def test_the_next_sentence_must_say_evidence_is_missing() -> None:
    said = "The coach said the squad is fit for Saturday."
    later = "He did not present the line-up until an hour before kick-off."
    assert not unsupported_next(said, later, ["unsourced"])


def test_a_denied_invention_is_no_satire() -> None:
    text = "Cifrele astea nu le-am inventat noi: pensiile se taie cu 40%, distribuiți!"
    assert "satire" not in sentence_register(text)


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
    "text",
    [
        "Poliția avertizează asupra unor mesaje care susțin că «farmaciile rămân fără insulină». "
        "Ministerul a precizat că nu există nicio problemă de aprovizionare.",
        "Un clip viral susține că «ceaiul de usturoi vindecă hepatita». Am verificat afirmația "
        "cu doi medici: nu există niciun studiu care să arate așa ceva.",
        "A column explains why people still share the post: there is no route by which oil "
        "rubbed into the navel reaches the liver. Castor oil is not a treatment.",
        "Știri pe care nu le-ați citit nicăieri (pentru că le-am inventat noi): un bebeluș a "
        "dormit opt ore la rând.",
    ],
)
def test_a_report_that_checked_what_it_quotes_is_no_claim(text: str) -> None:
    assert claims_score(text) < FLAGGED


def test_offering_no_evidence_is_the_claimant_s_want_not_a_rebuttal() -> None:
    text = "He offered no evidence for the claim."
    assert "unsourced" in sentence_register(text)
    assert "debunked" not in sentence_register(text)
    assert "debunked" in sentence_register("Doctors say there is no evidence for the claim.")


def test_a_figure_the_reader_is_sent_to_look_up_is_unsourced() -> None:
    assert "unsourced" in sentence_register("That's not me, that's a stat, look it up.")
    insisted = "The councillor insisted it doubled, offering nothing to back it up."
    assert "unsourced" in sentence_register(insisted)


def test_a_relative_at_the_ministry_is_hearsay() -> None:
    heard = "My brother-in-law works at the ministry and says petrol will be rationed."
    assert "viral_sources" in sentence_register(heard)


@pytest.mark.parametrize(
    ("host", "risky"),
    [
        ("amazon-careers-onboarding.net", True),
        ("minedu-bursa.ro", True),
        ("edu-online.ro", False),
        ("hr-portal-office365-ro.com", True),
        ("amazon.jobs", False),
        ("hiring.amazon.com", False),
        ("admitere.edu.ro", False),
        ("edu-consult.ro", False),
        ("careers.ro", False),
        # health brands: pharmacies, clinics, insurers
        ("drmax-fidelitate.ro", True),
        ("drmax.cz", False),
        ("catena.se", False),
        ("cnas-card-sanatate.com", True),
        ("reglna-maria-programari.net", True),
        ("nhs-booster-uk.com", True),
        ("mothercare-uk-giveaway.xyz", True),
        ("programari.reginamaria.ro", False),
        ("www.nhs.uk", False),
        ("uk-health-news.com", False),
    ],
)
def test_jobs_payroll_and_grant_words_lure_beside_a_protected_name(host: str, risky: bool) -> None:
    assert (domain_risk(host) >= FLAGGED) is risky
