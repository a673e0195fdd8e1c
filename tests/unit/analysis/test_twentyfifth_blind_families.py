"""Forms grown in the twenty-fifth round of issue 19, after two more sets written blind (ids
`*-tt-*`, people arguing about the news: comment threads, group chats, call-ins, vox pops;
`*-uu-*`, money, work and technology messages), measured as written on the twenty-fourth
round's code, then TT tuned on (UU held out). Each is checked on sentences written for this
test (none is in the evaluation set), in Romanian and English, beside texts sharing their
words that must stay as they were."""

import pytest

from tests.unit.analysis.probes import FLAGGED, claims_score, kinds
from workers.analysis import techniques


@pytest.mark.parametrize(
    "text",
    [
        "I'm not racist, but the new estate is a problem.",
        "I'm no racist, but you've seen who moved in.",
        "Nu sunt rasist, dar blocul nou e o problemă.",
    ],
)
def test_the_disclaimer_that_opens_a_group_s_blame_is_collective_blame(text):
    assert "collective_blame" in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "Wherever they put migrants in a hotel, crime goes up within a year.",
        "Wherever the refugees settle, burglaries rise.",
        "Everywhere they house asylum seekers, crime rockets.",
        "Acolo unde se mută romii, criminalitatea crește.",
        "Oriunde vin migranții, furturile au crescut.",
        "Peste tot unde vin migranții crește infracționalitatea.",
    ],
)
def test_crime_laid_at_wherever_a_group_goes_is_collective_blame(text):
    assert "collective_blame" in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "I've nothing against the product itself, but the fees are far too high.",
        "N-am nimic cu noul program, doar că e prea scurt.",
        # said of landlords and neighbours as well (round 25's review)
        "We've got nothing against them, the landlords just need to fix the damp.",
        "Nu am nimic cu ei, sunt vecini buni, doar că parchează pe trotuar.",
        "Wherever the new bus lanes opened, journeys got faster, the council said.",
        "Acolo unde s-au montat camere, accidentele au scăzut cu un sfert.",
        "Crime went up in the city centre last year, wherever you looked in the figures.",
    ],
)
def test_a_disclaimer_about_a_thing_or_a_rise_laid_at_no_group_is_no_collective_blame(text):
    assert "collective_blame" not in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "Struggling with bills? I make £90-£160 a day from my phone rating hotel reviews.",
        "You can earn $200 a day working from home, no experience needed.",
        "Câștig 500 de lei pe zi de acasă, doar de pe telefon.",
    ],
)
def test_a_daily_income_promised_to_the_writer_or_the_reader_presses_like_a_lure(text):
    assert "pressure" in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "Care workers earn £12.60 an hour on average, the survey found.",
        "The new minimum wage means a full-time worker earns about £470 a week.",
        # wages, holidays and counts (round 25's review)
        "Warehouse operatives: we pay £12.50 an hour, so you earn £100 a day on site.",
        "I earn £11.44 an hour on the national living wage.",
        "You earn 25 days of paid holiday a year.",
        "You make 10,000 steps a day if you walk to work.",
    ],
)
def test_a_wage_reported_in_the_third_person_is_no_pressure(text):
    assert "pressure" not in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "Independent studies prove the masts harm children, yet officials downplay the data in "
        "order to protect the interests of the telecom giants.",
        "Studiile arată că antenele fac rău copiilor, dar autoritățile aleg să minimizeze datele "
        "pentru a proteja interesele marilor companii.",
    ],
)
def test_data_played_down_to_protect_interests_is_cover_up_framing(text):
    assert "conspiracy" in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "The regulator said the firm must protect the interests of its customers.",
        "Autoritatea a cerut companiei să protejeze interesele clienților.",
        # a cover-up needs something hidden that the reader should know (round 25's review)
        "Banks must not hide fees; the new rules protect the interests of consumers.",
        "Compania a încercat să minimizeze pierderile pentru a-și proteja profitul.",
    ],
)
def test_protecting_interests_alone_is_no_cover_up(text):
    found = techniques.assess_techniques(text, learned=False).findings
    assert not any(f.kind == "conspiracy" and "inter" in f.text for f in found)


@pytest.mark.parametrize(
    ("text", "urged"),
    [
        ("Citiți și dați mai departe la toată lumea!", True),
        ("E o păcăleală care circulă din 2012. Nu-l mai dați mai departe.", False),
        ("Vă rog, nu dați mai departe mesajul ăsta, e fals.", False),
    ],
)
def test_a_call_to_pass_it_on_counts_unless_it_asks_not_to(text, urged):
    assert ("urgency" in kinds(text)) is urged


@pytest.mark.parametrize(
    "text",
    [
        "Read somewhere, can't remember where, that since the new speed limit road deaths have "
        "gone up by 40%.",
        "Am citit undeva, nu mai știu unde, că de la noua limită de viteză morțile pe șosele au "
        "crescut cu 40%.",
    ],
)
def test_a_figure_read_who_knows_where_is_a_rumour_passed_on(text):
    assert claims_score(text) >= FLAGGED
