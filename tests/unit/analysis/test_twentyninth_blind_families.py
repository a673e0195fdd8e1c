"""Forms grown in the twenty-ninth round of issue 19, after two more sets written blind
(ids `*-bc-*`, crime, justice and public safety; `*-cd-*`, celebrities, entertainment and
culture), measured as written on the twenty-eighth round's code, then BC tuned on (CD held
out). Each is checked on sentences written for this test (none is in the evaluation set), in
Romanian and English, beside texts sharing their words that must stay as they were."""

import pytest

from tests.unit.analysis.probes import FLAGGED, claims_score, kinds
from workers.analysis import domains

# --- techniques: the fake officer, the fake court ----------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "The outstanding fine can be settled today in Apple gift cards at any supermarket.",
        "Your bail of $900 is payable in prepaid gift cards before 5 pm.",
        "To avoid being taken into custody tonight, stay on the line with the duty officer.",
        "Thank you for your patience, and do not tell anyone about this call.",
        "Vă rugăm să vă prezentați până vineri, în caz contrar veți fi arestat.",
        "Poliția a deschis un dosar penal pe numele dumneavoastră pentru fraudă informatică.",
        "Plătiți cauțiunea cu carduri cadou Google Play.",
    ],
)
def test_an_arrest_or_a_case_in_the_readers_name_presses_the_reader(text):
    assert "pressure" in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "Detectives said a warrant for his arrest was issued on Monday.",
        "This is not a warrant for your arrest: it is a civil matter.",
        "He fled to Spain to avoid arrest, prosecutors told the court.",
        "Can I pay the deposit with gift cards? Yes, up to three gift cards per order.",
        "Please do not discuss this letter with anyone other than your union representative.",
        "La magazinele noastre puteți plăti cu carduri cadou, vouchere de masă și card bancar.",
        "Eliberați apartamentul până pe 30, în caz contrar garanția va fi reținută integral.",
        "Altfel spus, fostul primar rămâne arestat preventiv încă 30 de zile.",
        "Dosarul de pensie depus pe numele dumneavoastră a fost înregistrat.",
        "Remember: no police force will ever ask you to pay a fine in gift cards.",
        "The court heard that she never paid with gift cards, only by bank transfer.",
        "Procurorii au emis joi un mandat de arestare pe numele fostului primar.",
        "Nu plătiți niciodată amenzi cu carduri cadou: nicio instituție nu vă cere asta.",
        "Dosarul penal deschis pe numele lui a fost clasat anul trecut.",
    ],
)
def test_a_report_of_an_arrest_or_a_warning_about_gift_cards_is_no_pressure(text):
    assert "pressure" not in kinds(text)


# --- domain: courts, police and fraud desks -------------------------------------------------


@pytest.mark.parametrize(
    "host",
    [
        "https://hmcts-hearing-summons.site/ref/A1",
        "https://actionfraud-refund.co.uk/case",
        "https://dnsc-recuperare.xyz/formular",
        "https://politiarutiera-amenzi.net/plata",
    ],
)
def test_a_court_police_or_fraud_desk_name_beside_a_lure_is_a_lookalike(host):
    assert domains.assess_domains(f"Detalii: {host}").score >= FLAGGED


@pytest.mark.parametrize(
    "host",
    [
        "https://www.gov.uk/government/organisations/hm-courts-and-tribunals-service",
        "https://tfl.gov.uk/modes/driving/ultra-low-emission-zone",
        "https://www.ic3.gov/Home/FileComplaint",
        "https://www.actionfraud.police.uk/reporting-fraud",
        "https://dnsc.ro/citeste/alerta-sms",
        "https://www.politiaromana.ro/ro/politia-rutiera",
        # third parties trading on a scheme's or a certificate's name are left alone
        "https://ulez-news.co.uk",
        "https://tfl-live.com",
        "https://ic3-online-training.com",
    ],
)
def test_the_real_sites_of_courts_police_and_fraud_desks_stay_low(host):
    assert domains.assess_domains(f"Detalii: {host}").score < FLAGGED


# --- claims: a figure someone gave, set against the record --------------------------------


@pytest.mark.parametrize(
    "text",
    [
        'In a video, the influencer claimed that "one in three drivers is uninsured". DVLA '
        "figures do not support this figure: the share is under 2 percent.",
        "Senatorul a afirmat marți, în plen, că „o treime din furturile din Iași sunt comise de "
        "romi”. Datele Inspectoratului nu susțin însă această cifră: etnia nu este înregistrată.",
    ],
)
def test_a_figure_set_against_the_record_is_a_rebuttal_not_a_claim(text):
    assert claims_score(text) < FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        "Crime in our cities is up 300 percent and the media won't tell you.",
        "Furturile de mașini s-au dublat într-un an, dar nimeni nu vă spune adevărul.",
        # a post that turns the rebuttal round keeps its own claim
        "The government claims that the vaccine is completely safe. Their own data do not "
        "support the claim. The jab has killed more people than covid and they are hiding it!",
    ],
)
def test_the_same_figure_asserted_is_still_a_claim(text):
    assert claims_score(text) >= FLAGGED
