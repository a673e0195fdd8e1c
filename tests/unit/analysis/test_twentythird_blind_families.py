"""Forms grown in the twenty-third round of issue 19, after two more sets written blind (ids
`*-pp-*`, texts that state facts: honest figures, causes and sources beside one invented
statistic or false cause; `*-qq-*`, messages that carry links), measured as written on the
twenty-second round's code, then PP tuned on (QQ held out). Each is checked on sentences
written for this test (none is in the evaluation set), in Romanian and English, beside
texts sharing their words that must stay as they were."""

import pytest

from tests.unit.analysis.probes import FLAGGED, claims_score, kinds
from workers.analysis import claim_forms, claims, domains, techniques
from workers.analysis.factcheck_store import read_fact_checks


@pytest.mark.parametrize(
    "sentence",
    [
        "Police sources say 8 in 10 burglaries in the city are committed by foreign nationals.",
        "Illegal immigrants commit 40% of all violent crime in this country, everyone knows it.",
        "Anchetatorii spun că 7 din 10 furturi din cartier sunt comise de persoane venite din "
        "alte țări.",
        "Potrivit unor date ale poliției, 60% dintre violuri sunt comise de imigranți.",
    ],
)
def test_a_share_of_crime_laid_on_a_group_is_a_risky_claim_sourced_or_not(sentence: str) -> None:
    assert "group_blame" in claim_forms.sentence_forms(sentence)
    assert claims_score(sentence) >= FLAGGED


@pytest.mark.parametrize(
    "sentence",
    [
        # a group's share without blame, and blame without a group's share
        "According to the ONS, 62% of refugees from Ukraine were in work by March.",
        "Potrivit INS, 30% dintre imigranți au studii superioare.",
        "Burglaries in the city fell by 12% last year, police said.",
        "Numărul furturilor din locuințe a scăzut cu 12% anul trecut, potrivit Poliției.",
    ],
)
def test_a_group_s_share_without_blame_or_blame_without_a_group_is_no_group_blame(
    sentence: str,
) -> None:
    assert "group_blame" not in claim_forms.sentence_forms(sentence)
    assert claims_score(sentence) < FLAGGED


@pytest.mark.parametrize(
    ("text", "debunked"),
    [
        (
            "That picture going round of a lion on the ring road is fake. A reverse image "
            "search shows it was taken in Kenya in 2016.",
            True,
        ),
        (
            "The image doing the rounds of flooded ballot boxes is fake: the photo first "
            "surfaced in 2019.",
            True,
        ),
        # the writer's own "is fake" with nothing passed around stays a plot
        ("The moon landing is fake and the photos prove it.", False),
    ],
)
def test_a_picture_passed_around_that_the_text_calls_fake_is_a_debunk(
    text: str, debunked: bool
) -> None:
    registers = claim_forms.text_registers([s.strip() + "." for s in text.split(".") if s])
    assert any("debunked" in r for r in registers) is debunked
    assert (claims_score(text) < FLAGGED) is debunked


@pytest.mark.parametrize(
    "sentence",
    [
        "The court heard that the defendant had forged the invoices over six years.",
        "Jurors were told the 34-year-old had sent the messages from a burner phone.",
        "Instanța a reținut că inculpatul a falsificat facturile timp de șase ani.",
        "Potrivit rechizitoriului, cei doi au încasat 240.000 de lei din contracte fictive.",
    ],
)
def test_what_a_court_heard_is_sourced(sentence: str) -> None:
    assert "sourced" in claim_forms.sentence_register(sentence)


@pytest.mark.parametrize(
    ("sentence", "form"),
    [
        ("Scientists demonstrated that humans use only 10% of the brain.", "authority_claim"),
        ("The party has already signed a secret agreement to sell the NHS.", "plot"),
        ("Guvernul a semnat deja un acord secret ca să vândă pădurile.", "plot"),
    ],
)
def test_established_findings_and_secret_pacts_are_read(sentence: str, form: str) -> None:
    assert form in claim_forms.sentence_forms(sentence)


@pytest.mark.parametrize(
    ("text", "pressure"),
    [
        ("Your parcel could not be delivered and will go back to the sender.", True),
        ("Unpaid items are sent back after 48 hours.", True),
        (
            "You can fill gaps in your National Insurance record going back to 2006, after "
            "which you can usually only go back six years.",
            False,
        ),
        ("After the holidays the children go back to school on Monday.", False),
    ],
)
def test_going_back_is_a_loss_only_to_a_sender(text: str, pressure: bool) -> None:
    assert ("pressure" in kinds(text)) is pressure


@pytest.mark.parametrize(
    ("text", "risky"),
    [
        ("connect your wallet at coinbase-airdrop.claims and sign the approval", True),
        ("Read the paper before it's gone: pubmed.ncbi.research-papers.health-truths.net", True),
        ("Claim your free tokens: eth-airdrop.win", True),
        ("Am găsit studiul pe pubmed.ncbi.nlm.nih.gov, merită citit.", False),
        ("The full paper is at https://www.thelancet.com/journals/lancet/article/x", False),
        ("Our team at data.network is hiring analysts.", False),
    ],
)
def test_scam_tlds_are_read_and_the_medical_literature_is_protected(text: str, risky: bool) -> None:
    assert (domains.assess_domains(text, None).score >= FLAGGED) is risky


def test_a_quoted_slogan_s_exclamation_is_not_the_report_s_emotion() -> None:
    quoted = (
        "La protest, câteva sute de oameni au scandat „Moldova nu e de vânzare!” în fața clădirii."
    )
    assert "emotive" not in claim_forms.sentence_register(quoted)
    assert "emotive" in claim_forms.sentence_register("Moldova nu e de vânzare!")
    assert "emotive" not in claim_forms.sentence_register('Fans chanted "WE WANT REFUNDS" outside.')


@pytest.mark.parametrize(
    ("sentence", "viral"),
    [
        ("Tickets are mobile-only, and screenshots won't scan at the entrance.", False),
        ("A screenshot going round says the bank will close on Monday.", True),
        ("Someone posted a screenshot of the memo in the group.", True),
    ],
)
def test_a_screenshot_is_a_viral_source_only_when_passed_on(sentence: str, viral: bool) -> None:
    assert ("viral_sources" in claim_forms.sentence_register(sentence)) is viral


@pytest.mark.parametrize(
    "text",
    [
        "Seeing a screenshot going round saying Amazon will charge £5 for every return. "
        "Consumer groups have flagged it as a phishing lure, so don't click the link.",
        "A apărut iar pe grupul blocului mesajul că WhatsApp devine cu plată de mâine. "
        "Oameni buni, e o țeapă veche, nu-l mai trimiteți.",
    ],
)
def test_a_message_passed_around_that_the_text_calls_a_scam_is_rebutted(text: str) -> None:
    assert claims_score(text) < FLAGGED


def test_a_regulator_urging_the_public_gives_advice() -> None:
    sentence = "The Charity Commission has urged the public to give only to registered charities."
    assert "advice" in claim_forms.sentence_register(sentence)


# What a review of the round found with its own probes, each now a check.


@pytest.mark.parametrize(
    "text",
    [
        "This is NOT satire: vaccines cause autism in children.",
        "Nu este satiră! Vaccinurile provoacă autism la copii.",
        "Satire is dead because reality is worse: vaccines cause autism in children.",
    ],
)
def test_a_satire_label_denied_keeps_the_check_s_rating_as_evidence(text: str) -> None:
    checks = [c.model_dump() for c in read_fact_checks()]
    found = claims.extract_claims(text)
    assert claims.score_claims(found, claims.match_locally(found, checks)) >= FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        "Enter our giveaway.Win a new bike every week.",
        "I lost my wallet.Cam footage showed nothing.",
        "Am primit confirm.Cam atât am avut de zis.",
        "Please verify.Live chat is closed today.",
    ],
)
def test_a_full_stop_without_its_space_makes_no_host(text: str) -> None:
    assert domains.assess_domains(text, None).score == 0


@pytest.mark.parametrize(
    "sentence",
    [
        "Police said 60% of hate crimes recorded last year targeted Muslims.",
        "Only 2% of foreign nationals living here have committed an offence, officials said.",
        "Cifrele oficiale: 90% dintre străinii din România nu au comis nicio infracțiune.",
        "Statistics show 40% of crime victims in the city were foreign nationals.",
        "Raportul arată că 25% dintre romii intervievați au fost victime ale violenței.",
        "The council said 30% of migrants in the borough pay taxes, and crime fell.",
    ],
)
def test_a_group_harmed_cleared_or_a_falling_crime_is_no_group_blame(sentence: str) -> None:
    assert "group_blame" not in claim_forms.sentence_forms(sentence)
    assert claims_score(sentence) < FLAGGED


@pytest.mark.parametrize(
    ("text", "low"),
    [
        ("That photo going round of a shark on the motorway is fake.", True),
        ("That clip going round of the prime minister is fake, it was made with AI.", True),
        ("Clipul care circulă cu premierul e trucat, a fost făcut cu AI.", True),
        ("The moon landing is fake and the photos prove it.", False),
    ],
)
def test_a_picture_passed_around_called_fake_in_its_own_sentence_is_a_debunk(
    text: str, low: bool
) -> None:
    assert (claims_score(text) < FLAGGED) is low


@pytest.mark.parametrize(
    "sentence",
    [
        "The secret pact between Germany and the USSR was signed in August 1939.",
        "Historians have established that the secret pact was signed in August 1939.",
        "The court has established that the secret deal between the two firms broke the law.",
    ],
)
def test_history_and_courts_establishing_a_secret_pact_assert_no_plot(sentence: str) -> None:
    assert claims_score(sentence) < FLAGGED


ALERT_RO = (
    "BCR: Te-ai autentificat în George de pe un dispozitiv nou (Chrome, Windows) astăzi, la "
    "ora 14:32. Dacă nu ai fost tu, intră în aplicație și blochează accesul sau sună la numărul "
    "de pe spatele cardului."
)
ALERT_EN = (
    "Monzo: a new phone signed in to your account at 09:12. If this wasn't you, open the app "
    "and freeze your card, or call us on the number on the back of your card."
)


@pytest.mark.parametrize(
    ("alert", "notice"),
    [
        (ALERT_RO, " Nu îți vom cere niciodată parola prin telefon."),
        (ALERT_EN, " We will never ask for your PIN or password."),
    ],
)
def test_a_service_s_own_notice_weighs_its_lure_words_at_half(alert: str, notice: str) -> None:
    """A sign-in alert that says what the service never asks is its own notice: its "if this
    wasn't you, lock it" counts at half weight (the same alert without that line counts in
    full)."""
    alone = techniques.assess_techniques(alert, learned=False)
    noticed = techniques.assess_techniques(alert + notice, learned=False)
    assert noticed.score < FLAGGED
    assert sum(f.weight for f in noticed.findings) < sum(f.weight for f in alone.findings)


def test_a_lure_that_copies_the_never_ask_line_is_still_flagged() -> None:
    lure = (
        "Your HMRC tax refund of £412.50 is pending. Verify your bank details within 24 hours "
        "at hmrc-refunds.help or the refund will be cancelled and your account suspended. HMRC "
        "will never ask for your password."
    )
    assert techniques.assess_techniques(lure).score >= FLAGGED
