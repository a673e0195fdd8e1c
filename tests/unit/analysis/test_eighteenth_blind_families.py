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
        "Myth busted: cracking your knuckles does not give you arthritis. The sound is gas "
        "bubbles in the joint fluid, and long studies of knuckle-crackers found no link.",
        "Mit demontat: nu, cititul pe întuneric nu vă strică ochii pentru totdeauna. Vă "
        "obosește privirea, iar senzația trece după o noapte de somn.",
    ],
)
def test_a_myth_busting_label_answers_the_myth_it_names(text: str) -> None:
    """A column's "Myth busted:" is the rebuttal of the sentence it heads (a myth-buster read
    50 as the learned model's claim)."""
    assert claims_score(text) < FLAGGED


def test_a_bare_myth_label_still_lets_the_truth_turned_round_be_a_claim() -> None:
    """ "Mit:" alone is what a post sets before the truth it turns round."""
    assert claims_score("Mit: virusul e natural. Adevăr: a fost creat în laborator și ascuns.") >= (
        FLAGGED
    )


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
        "Șoferii aduși de firmele de curierat din alte țări sunt ca lăcustele: vin, iau tot și "
        "pleacă.",
    ],
)
def test_a_pest_simile_counts_however_far_back_its_subject_stands(text: str) -> None:
    assert "dehumanisation" in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "Vaccines were never about the flu, and the government knows it.",
        "Apa de la robinet ne slăbește imunitatea, iar medicii știu asta foarte bine.",
        "Meter fitters are told never to explain what the second chip records.",
        "The so-called virus was a cover for the new masts.",
    ],
)
def test_an_authority_that_knows_or_a_gag_said_of_a_claim_is_a_cover_up_cue(text: str) -> None:
    assert "conspiracy" in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "And the doctors knew it was late, but they operated anyway.",
        "Who knows it? Everyone in the village knows it.",
        "Am greșit rețeta, iar ei știu asta.",
    ],
)
def test_knowing_said_of_anything_else_is_no_cover_up(text: str) -> None:
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


@pytest.mark.parametrize(
    ("host", "flagged"),
    [
        ("hp-printer-support-help.online", True),  # a tech-support scam's fake help page
        ("epson-driver-fix.xyz", True),
        ("mcafee-renewal.top", True),
        ("farmaciatei-oferte.online", True),  # a pharmacy chain's name on a cheap offer page
        ("support.hp.com", False),
        ("123.hp.com", False),
        ("www.epson.ro", False),
        ("farmaciatei.ro", False),
        ("hpb.com", False),
    ],
)
def test_printer_antivirus_and_pharmacy_names_are_protected(host: str, flagged: bool) -> None:
    assert (assess_host(host).risk >= FLAGGED) is flagged


@pytest.mark.parametrize(
    "text",
    [
        "Your PC is infected! Download the cleaner and call the number on screen to speak to a "
        "certified technician.",
        "Calculatorul e blocat de un virus! Sunați la numărul afișat pe ecran.",
    ],
)
def test_a_fake_support_page_sends_the_reader_to_the_number_on_screen(text: str) -> None:
    assert "data_request" in kinds(text)


def test_the_number_on_the_back_of_the_card_is_advice() -> None:
    assert "data_request" not in kinds(
        "If you think your card was used, call the number on the back of your card."
    )


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
