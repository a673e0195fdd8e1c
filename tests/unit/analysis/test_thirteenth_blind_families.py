"""Forms grown in the thirteenth round of issue 19, after two more sets written blind (ids
`*-a-*`, legal and money voices, tuned on; `*-aa-*`, young people's online life, held out).
Each is checked on sentences written for this test (none is in the evaluation set), in
Romanian and English, beside texts sharing their words that must stay as they were."""

import pytest

from tests.unit.analysis.probes import FLAGGED, claims_score, kinds
from workers.analysis import techniques


@pytest.mark.parametrize(
    ("unsourced", "sourced"),
    [
        (
            "A guest said that 40% of tenants lose their deposit, without specifying where "
            "the figure came from.",
            "A guest said that 40% of tenants lose their deposit.",
        ),
        (
            "Un invitat a spus că 40% dintre chiriași pierd garanția, fără să precizeze de unde "
            "are datele.",
            "Un invitat a spus că 40% dintre chiriași pierd garanția.",
        ),
    ],
)
def test_a_figure_reported_without_saying_where_it_comes_from_is_a_risky_claim(
    unsourced: str, sourced: str
) -> None:
    """ "Without specifying", "fără să precizeze": the speaker gave no source, as "without
    citing" says; the same report without those words stays a report."""
    assert claims_score(unsourced) >= FLAGGED
    assert claims_score(sourced) < FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        "The bakery reopened on Monday without specifying its new opening hours.",
        "Magazinul s-a redeschis luni, fără să precizeze noul program.",
        # a detail left out is no source left out
        "The government announced that 5,000 civil service jobs will be cut, without "
        "specifying which departments.",
        "Guvernul a anunțat că 5.000 de posturi vor fi tăiate, fără să precizeze din ce ministere.",
    ],
)
def test_without_specifying_a_detail_makes_no_claim(text: str) -> None:
    assert claims_score(text) < FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        "Those people on benefits are living off our taxes while pensioners freeze.",
        "Asistații ăștia trăiesc din banii noștri, iar pensionarii numără bănuții.",
        "Landlords are bleeding this country dry and the council lets them.",
        "Avocații ăștia sunt trădători de neam, toți.",
    ],
)
def test_a_group_said_to_live_off_the_others_is_an_accusation_to_check(text: str) -> None:
    assert claims_score(text) >= FLAGGED


def test_living_off_one_s_own_savings_is_no_accusation() -> None:
    assert claims_score("I have lived off my savings since the layoff, and it is hard.") < FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        "Dear friend, I am a solicitor in Madrid. A deceased client left 4.2 million euros in a "
        "dormant account, and I wish to present you as next of kin. Kindly reply in strict "
        "confidence with your full name and phone number.",
        "Stimate domn, sunt avocat la Londra. Un client decedat a lăsat 2,7 milioane de lire "
        "fără moștenitori, iar eu vă pot prezenta drept rudă apropiată pentru suma întreagă. Vă "
        "rog să răspundeți confidențial cu numele complet și o copie după pașaport.",
    ],
)
def test_a_stranger_s_fortune_offered_in_confidence_is_pressure(text: str) -> None:
    """The advance-fee letter: no link and no threat, but a fortune offered to a stranger
    as next of kin, unclaimed funds, and a reply asked for in confidence."""
    assert "pressure" in kinds(text)
    assert techniques.assess_techniques(text, learned=False).score >= FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        "The court ruled that the late singer's heirs will share his 12 million pound fortune "
        "equally.",
        "Instanța a decis că moștenitorii actorului vor împărți în mod egal averea de 3 milioane "
        "de lei.",
        "Make a will: it protects your heirs and keeps the inheritance out of court, our "
        "notaries explain.",
        "Please bring your passport to the appointment and send us your full name and date of "
        "birth in advance so we can prepare the file.",
        # a notary and a fraud line use the same words honestly
        "Your aunt's will is clear: she decided to make you and your brother her heirs, so "
        "the notary will contact you both next week.",
        "Notarul vă va trece drept moștenitor în certificatul de succesiune.",
        "Dacă ați fost victima unei fraude, ne puteți contacta confidențial la numărul de pe "
        "spatele cardului.",
    ],
)
def test_inheritance_news_and_honest_paperwork_are_no_pressure(text: str) -> None:
    assert "pressure" not in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "Conform legii, băncile transferă sumele din conturile inactive după 10 ani; ASF "
        "amintește că puteți verifica pe site-ul oficial dacă aveți fonduri nerevendicate.",
        "The regulator reminds savers that dormant accounts can be reclaimed at any time "
        "through their own bank.",
    ],
)
def test_a_regulator_s_notice_of_dormant_accounts_stays_under_the_flag(text: str) -> None:
    """One sign of the advance-fee letter alone (the scam borrows the notice's words) is
    not enough to flag a text."""
    assert techniques.assess_techniques(text, learned=False).score < FLAGGED


def test_tell_everyone_as_a_call_is_urgency_and_as_an_invitation_is_not() -> None:
    assert "urgency" in kinds(
        "From Monday cash deposits are reported to the tax office. "
        "Tell everyone, they kept it quiet!"
    )
    assert "urgency" not in kinds(
        "Tell everyone you see at the fair that the cake stall opens at noon!"
    )
    assert "urgency" not in kinds("Tell all your friends about our new bakery on Main Street.")
