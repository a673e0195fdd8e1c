"""Forms grown in the thirty-second round of issue 19, after two more sets written blind (ids
`*-hi-*`, work, money and the household economy; `*-ij-*`, weather, climate, disasters and
the outdoors), measured as written on the thirty-first round's code, then HI tuned on (IJ
held out, then its misses read). Each is checked on sentences written for this test (none
is in the evaluation set), in Romanian and English, beside texts sharing their words that
must stay as they were."""

import pytest

from tests.unit.analysis.probes import FLAGGED, claims_score, kinds
from workers.analysis import domains
from workers.analysis.claim_forms import sentence_register

# --- techniques: "whether … or", scarce places, money doubled, disasters made on purpose ---


@pytest.mark.parametrize(
    "text",
    [
        "Fie că ești student, fie că ești pensionar, oferta e pentru tine.",
        "Fie că sunteți pasionat de cultură, fie că preferați drumețiile, regiunea vă așteaptă.",
    ],
)
def test_whether_this_or_that_is_no_dilemma(text):
    assert "false_dilemma" not in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "Fie ești cu poporul, fie ești cu trădătorii.",
        "Ori ești cu noi, ori ești împotriva noastră!",
    ],
)
def test_either_this_or_that_side_is_still_a_dilemma(text):
    assert "false_dilemma" in kinds(text)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("92% of our users doubled their savings within 60 days.", "pressure"),
        ("Mulți și-au dublat capitalul în mai puțin de trei luni.", "pressure"),
        ("Ordinary Brits are making £3,000 a week from home with this scheme.", "pressure"),
        ("Registration is limited to a small number of new members each month.", "urgency"),
        ("Oportunitatea e pentru puțini, așa că nu amâna decizia.", "urgency"),
        ("Spaces close tonight, so register now.", "urgency"),
        ("Martin Lewis reveals the trick banks hate.", "clickbait"),
        ("Councils are hoping you never find out about this refund.", "conspiracy"),
    ],
)
def test_an_investment_lure_and_a_rant_press_the_reader(text, kind):
    assert kind in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "House prices doubled between 2000 and 2010 in most cities.",
        "Prețurile s-au dublat în zece ani.",
        "By the rule of 72, at 6% a year you double your money in about 12 years.",
        "I hope you never find out how much the wedding cost, darling.",
        "We hope you find the new timetable useful.",
        "We're hoping you never need to claim, but if you do, we're here.",
        "Registration is open to everyone until the end of June.",
        "Tabăra are un număr limitat de locuri, înscrierile se fac la secretariat.",
        "Distribuie ca să afle cât mai mulți donatori de sânge de campania de sâmbătă.",
    ],
)
def test_prices_doubling_or_a_friendly_hope_press_nobody(text):
    assert not {"pressure", "conspiracy", "urgency"} & kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "That's not a wildfire, that's a directed energy weapon. They cleared the land on purpose.",
        "The eco-zealots at the agency stopped dredging. They hate rural people.",
    ],
)
def test_a_disaster_made_on_purpose_or_a_group_said_to_hate_us_is_manipulative(text):
    assert {"conspiracy", "name_calling", "us_vs_them"} & kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "The zealots of the 17th century burned books in the town square, the museum explains.",
        "Some campaigners say rural people hate change, but the survey shows otherwise.",
        "Fermierii au pus aluminiu pe acoperișul grajdului.",
        "Ia cusută și făcută cu mâna de bunica mea, din 1950.",
        "Copiii ne stropesc cu pistoalele cu apă toată după-amiaza.",
        "Fireworks get their green from barium and their sparkle from aluminium and barium salts.",
        "Staff at the food bank say they hate seeing poor families queue in the rain.",
    ],
)
def test_history_or_a_survey_of_attitudes_is_no_name_calling(text):
    assert not {"conspiracy", "name_calling", "us_vs_them"} & kinds(text)


# --- claims: experts nobody names, news that is in no hurry, an authority pointing out ----


@pytest.mark.parametrize(
    "text",
    [
        "According to industry experts, 92% of QuantumYield users doubled their savings.",
        "According to financial experts, 87% of new investors doubled their capital.",
    ],
)
def test_experts_nobody_names_source_nothing(text):
    assert claims_score(text) >= FLAGGED


def test_a_reporters_experts_saying_nothing_is_known_assert_nothing():
    text = "According to experts, it is not yet clear what caused the fire."
    assert claims_score(text) < FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        "Analiștii spun că ratele la creditele în lei nu se vor modifica imediat.",
        "It was not immediately clear who was responsible.",
        "Rates won't change immediately, analysts say.",
    ],
)
def test_a_negated_immediately_is_no_urgency(text):
    assert "urgency" not in sentence_register(text)


@pytest.mark.parametrize(
    "text",
    [
        "Withdraw your money immediately, the banks will freeze accounts on Monday!",
        "Do not hesitate, pay the fee immediately.",
        "Nu ezitați, sunați imediat!",
    ],
)
def test_an_immediately_that_presses_is_still_urgency(text):
    assert "urgency" in sentence_register(text)


def test_a_hoax_answered_by_experts_pointing_out_is_a_debunk():
    text = (
        "A post claims cloud seeding caused the floods. Meteorologists pointed out that "
        "seeding can't create a storm system of that size."
    )
    assert claims_score(text) < FLAGGED


# --- domain: a sports chain, disaster aid, compensation and victims on cheap hosts ---------


@pytest.mark.parametrize(
    "host",
    [
        "fema-disasterrelief.net/verify",
        "donatii-sinistrati-galati.online",
        "https://energie-compensare.click/ro",
        "https://moneysavingexpert-invest.click/uk",
    ],
)
def test_a_borrowed_shop_or_aid_name_or_a_victims_fund_on_a_cheap_host_is_risky(host):
    assert domains.assess_domains(host).score >= FLAGGED


@pytest.mark.parametrize(
    "host",
    [
        "https://www.decathlon.ro/",
        "https://www.decatlon.ro/",
        "https://www.europ-assistance.com/",
        "https://www.fema.gov/assistance",
        "https://www.disasterassistance.gov/",
        "https://forums.moneysavingexpert.com/",
        "https://www.crucearosie.ro/donatii",
    ],
)
def test_the_real_sites_stay_low(host):
    assert domains.assess_domains(host).score < FLAGGED
