"""Forms grown in the eighteenth round of issue 19, after two more sets written blind (ids
`*-hh-*`, numbers and money in everyday media: finance journalism and influencers, pollsters,
prices, bills, tipsters, fintech notices; `*-ii-*`, advice and explanation: Q&A forums,
doctors', vets' and mechanics' answers, explainers, myth-busting columns, manuals and support
pages), measured as written on the seventeenth round's code, then II tuned on (HH held out).
Each is checked on sentences written for this test (none is in the evaluation set), in
Romanian and English, beside texts sharing their words that must stay as they were."""

import pytest

from tests.unit.analysis.probes import FLAGGED, claims_score, kinds
from workers.analysis import techniques
from workers.analysis.domains import assess_host


@pytest.mark.parametrize(
    "text",
    [
        "Myth busted: cracking your knuckles does not give you arthritis.",
        "Mit demontat: nu, cititul pe întuneric nu vă strică ochii pentru totdeauna.",
    ],
)
def test_a_myth_busting_label_answers_the_myth_it_names(text: str) -> None:
    """A column's "Myth busted:" is the rebuttal of the sentence it heads."""
    assert claims_score(text) < FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        "Mit: virusul e natural. Adevăr: a fost creat în laborator și ascuns.",
        "Myth busted: vaccines are safe. In fact they cause autism in 1 of 50 children.",
        "Mit spulberat: 5G nu e periculos. De fapt, antenele provoacă cancer la 3 din 10 oameni "
        "care locuiesc lângă ele.",
    ],
)
def test_a_myth_label_a_post_turns_round_leaves_the_next_claim_a_claim(text: str) -> None:
    """The label rebuts its own sentence only: the claim after it is judged on its own."""
    assert claims_score(text) >= FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        'From our humour column: Toaster "tired of bread" demands a sourdough-only diet and '
        "its own union.",
        "Din rubrica de umor: Frigiderul din bucătărie anunță că nu mai primește iaurturi "
        "expirate de la primăria sectorului.",
    ],
)
def test_a_humour_column_asserts_nothing(text: str) -> None:
    assert claims_score(text) < FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        "This is a joke, but the vaccine really does contain graphene oxide, look it up.",
        "Nu e rubrica de umor, e adevărul: vaccinul conține oxid de grafen și modifică ADN-ul.",
    ],
)
def test_a_joke_denied_is_no_satire_label(text: str) -> None:
    assert claims_score(text) >= FLAGGED


def test_a_source_quoted_in_its_own_sentence_is_not_discredited_by_the_clip_it_answers() -> None:
    """The viral clip is the neighbour sentence's; the College's president speaks in his own
    ("a declarat"): a source the sentence itself discredits sources nothing, not one beside a
    viral clip it answers (a doctors' warning read 60)."""
    answered = (
        "Colegiul Farmaciștilor avertizează în legătură cu un clip viral în care un vânzător "
        "de suplimente le spune bolnavilor de tiroidă să renunțe la tratament. „Este un sfat "
        "care poate face mult rău”, a declarat președintele colegiului."
    )
    assert claims_score(answered) < FLAGGED
    # A figure the clip itself gives, in the clip's own sentence, is still a claim.
    passed_on = (
        "Un clip viral spune că 9 din 10 bolnavi de tiroidă se vindecă fără pastile în trei "
        "luni. Dați mai departe."
    )
    assert claims_score(passed_on) >= FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        "The farm workers the agencies bus in every summer are like locusts: they strip the "
        "shops and leave.",
        "Muncitorii străini aduși de firmele de curierat din alte țări sunt ca lăcustele: vin, "
        "iau tot și pleacă.",
    ],
)
def test_a_pest_simile_counts_however_far_back_its_subject_stands(text: str) -> None:
    assert "dehumanisation" in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "Hyenas are like vultures: they clean up what lions leave behind.",
        "My teenage sons are like locusts when they come home from school.",
        "Copiii mei sunt ca lăcustele când vin de la școală.",
    ],
)
def test_a_simile_of_animals_or_ones_own_children_dehumanises_no_one(text: str) -> None:
    assert "dehumanisation" not in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "Meter fitters are told never to explain what the second chip records.",
        "The so-called virus was a cover for the new masts.",
    ],
)
def test_a_gag_on_what_something_is_or_a_so_called_virus_is_a_cover_up_cue(text: str) -> None:
    assert "conspiracy" in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "Children are told never to tell strangers where they live.",
        "Nurses are trained never to discuss a patient's diagnosis with visitors.",
    ],
)
def test_a_rule_of_discretion_is_no_gag(text: str) -> None:
    assert "conspiracy" not in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "Hi, this is Dan from the bank's fraud team: please reply with the code we just sent "
        "you by text so we can stop the payment.",
        "Departamentul Fraude: răspundeți la acest mesaj cu codul primit prin SMS ca să putem "
        "bloca plata.",
        "Mami, îmi trimiți te rog codul primit pe SMS? L-am trimis din greșeală pe numărul tău.",
    ],
)
def test_a_one_time_code_asked_back_is_a_data_request(text: str) -> None:
    assert "data_request" in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "We will never ask you to share a passcode we've sent you by text.",
        "Your code is 482913. Never share this code with anyone, not even us.",
        "Poliția avertizează că persoane care se dau drept angajați ai băncii cer coduri "
        "primite prin SMS.",
        "Codul tău este 482913. Nu comunica acest cod nimănui.",
        "Can you send me the discount code you received by email?",
        "Trimite-mi te rog codul de reducere primit pe mail.",
    ],
)
def test_a_banks_warning_about_codes_asks_for_nothing(text: str) -> None:
    assert "data_request" not in kinds(text)
    assert techniques.assess_techniques(text).score < FLAGGED


def test_this_message_is_the_text_itself_not_one_it_reports() -> None:
    """ "Reply to this message with the code": the message asks, it reports no one (the
    request had counted a third, as if quoted)."""
    asked = techniques.assess_techniques(
        "Răspundeți la acest mesaj cu codul primit în următoarele 10 minute.", learned=False
    )
    reported = techniques.assess_techniques(
        "Mesajul spune să răspundeți cu codul primit în următoarele 10 minute.", learned=False
    )
    assert asked.score > reported.score
    # a headline after "this" is still the one a report quotes
    assert "dehumanisation" not in kinds(
        'This headline, "Migrants are rats", was printed on the front page of a tabloid.'
    )


@pytest.mark.parametrize(
    "text",
    [
        "Don't ignore it, share this with your family.",
        "Do not delete, share this.",
    ],
)
def test_a_negation_earlier_in_the_sentence_does_not_stop_share_this(text: str) -> None:
    assert "urgency" in kinds(text)


@pytest.mark.parametrize(
    ("host", "flagged"),
    [
        ("mcafee-renewal.top", True),  # a fake antivirus renewal
        ("farmaciatei-oferte.online", True),  # a pharmacy chain's name on a cheap offer page
        ("www.mcafee.com", False),
        ("farmaciatei.ro", False),
        ("hp-energy.ro", False),  # two letters are many companies' initials: HP is not protected
        ("epsom.co.uk", False),
    ],
)
def test_an_antivirus_and_a_pharmacy_name_are_protected(host: str, flagged: bool) -> None:
    assert (assess_host(host).risk >= FLAGGED) is flagged


@pytest.mark.parametrize(
    "text",
    [
        "Renew your vehicle tax online or at a Post Office using the 16-digit reference on "
        "your reminder; the car cannot be driven untaxed and fines reach £1,000.",
        "Scrapping 400 teaching assistant posts will save £6 million a year, the council says, "
        "but class sizes will rise.",
        "We're all looking forward to the new wing: 40 more beds will open in March.",
    ],
)
def test_a_post_office_a_job_post_and_looking_forward_are_no_viral_source(text: str) -> None:
    """ "a post", "posts" and "forward to" are a social-media post and a forward only with
    what makes them one (a vehicle-tax reminder read 70)."""
    assert claims_score(text) < FLAGGED


def test_a_post_on_social_media_is_still_a_viral_source() -> None:
    assert (
        claims_score("A post on Facebook says 5G masts cause 80% of all new cancers in children.")
        >= FLAGGED
    )
    assert (
        claims_score(
            "Posts shared in the group say the water in Leeds has been poisoned on purpose."
        )
        >= FLAGGED
    )
