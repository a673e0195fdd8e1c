"""Forms grown in the thirtieth round of issue 19, after two more sets written blind (ids
`*-de-*`, education, children and young people; `*-ef-*`, faith, history, tradition and
national identity), measured as written on the twenty-ninth round's code, then EF tuned on
(DE held out). Each is checked on sentences written for this test (none is in the
evaluation set), in Romanian and English, beside texts sharing their words that must stay as
they were."""

import pytest

from tests.unit.analysis.probes import FLAGGED, claims_score, kinds
from workers.analysis import domains

# --- techniques: gift cards for "the priest", hidden figures, silence as complicity --------


@pytest.mark.parametrize(
    "text",
    [
        "Sorry to bother you, I'm stuck in a meeting. Could you buy three Steam gift cards of "
        "£50 and text me the codes? I'll sort you out tomorrow.",
        "Grab two Apple gift cards on your way home and send me pictures of the codes please.",
        "Purchase six iTunes gift cards and reply with the card numbers and PINs.",
        "Sunt părintele Vasile, nu pot vorbi acum. Poți să cumperi 4 carduri cadou Google Play "
        "de 100 de lei și să-mi trimiți pozele cu codurile? Îți dau banii după slujbă.",
    ],
)
def test_gift_cards_asked_for_and_their_codes_sent_back_ask_for_money(text):
    assert "data_request" in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "Buy a digital gift card today and we'll email the code to you within minutes.",
        "Never buy gift cards for someone who asks you to send them the codes: it is a scam.",
        "Cumpără un card cadou de la orice casă de marcat; codul apare pe bon.",
        "I bought her a gift card for her birthday and she loved it.",
        # one card for a grandchild, and a food bank that wants none of the codes
        "Mum, could you get a Steam gift card for Jake's birthday? Just text me the code.",
        "Bunico, ia doar cardul cadou de la Altex și trimite-mi o poză cu codul.",
        "Please buy supermarket gift cards for the hampers. There's no need to send me the "
        "codes, the physical cards are fine.",
    ],
)
def test_a_shop_selling_gift_cards_or_a_warning_about_them_asks_for_nothing(text):
    assert "data_request" not in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "The statistics office hides the real numbers, and everyone can see why.",
        "The government is covering up the real migration numbers.",
        "Institutul ascunde cifrele reale ale emigrației.",
        "Jurnaliștii plătiți de Soros vă spun altceva.",
        "These so-called experts are paid by foreigners to rewrite our past.",
    ],
)
def test_hidden_figures_and_voices_paid_from_abroad_frame_a_conspiracy(text):
    assert "conspiracy" in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "The census figures will be published in March, the statistics office said.",
        "She hid the numbers of the winning ticket under her pillow.",
        "No, the ONS does not hide the real immigration numbers.",
        "Cifrele recensământului au fost publicate joi de INS.",
        "Mâna liberă ascunde cifrele de eventualele camere când introduceți PIN-ul.",
        "WhatsApp ascunde de acum numerele de telefon ale membrilor din comunități.",
        "Angajații plătiți de firmă primesc bonusul în decembrie.",
        "The nurses were paid by the agency, not the hospital.",
        "A third of the rent in the Old Town is now paid by foreigners.",
        "Chiriile din centru sunt plătite de străini, arată datele agenției.",
    ],
)
def test_published_figures_and_ordinary_pay_are_no_conspiracy(text):
    assert "conspiracy" not in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "They are taking our land town by town. Whoever stays silent is complicit.",
        "Anyone who stays quiet about this is complicit.",
        "Se închid școlile românești din Covasna. Cine tace e complice!",
        "Cine mai tace după asta este complice.",
    ],
)
def test_silence_made_complicity_is_a_false_dilemma(text):
    assert "false_dilemma" in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "Please stay silent during the minute's silence.",
        "Cine tace la examen primește nota pe care o merită.",
        # the campaigns' slogan asks for a call, not for a side
        "Domestic abuse thrives in the dark. Silence is complicity: call the 24-hour helpline.",
        "Tăcerea e complicitate: dacă auziți țipete la vecini, sunați la 112.",
    ],
)
def test_a_quiet_reader_or_a_helpline_slogan_is_no_dilemma(text):
    assert "false_dilemma" not in kinds(text)


# --- domain: donations, memberships, heritage and faith bodies ----------------------------


@pytest.mark.parametrize(
    "host",
    [
        "https://patriarhia-donatii.top/confirma",
        "https://english-heritage-members.top/renew",
        "https://royalmint-heritage-gold.xyz",
        "https://nationaltrust-renewal.com/login",
        "https://patriarhia-cotizatie.com/plata",
    ],
)
def test_a_heritage_or_faith_bodys_name_beside_a_donation_or_membership_word_is_risky(host):
    assert domains.assess_domains(f"Detalii: {host}").score >= FLAGGED


@pytest.mark.parametrize(
    "host",
    [
        "https://www.patriarhia.ro/",
        "https://basilica.ro/",
        "https://www.english-heritage.org.uk/membership/",
        "https://www.nationaltrust.org.uk/renew",
        "https://www.royalmint.com/gold/",
        "https://www.justgiving.com/campaign/church-roof",
        "https://donate.redcross.org.uk/appeal",
        # other bodies' own sites, and honest clubs and churches on cheap or word TLDs
        "https://www.patriarchia.ru",
        "https://www.nationaltrust.gg",
        "https://members.brightonchess.club",
        "https://donate.standrewschurch.online",
        "https://gift-aid-donate.org.uk",
    ],
)
def test_the_real_sites_of_churches_and_heritage_bodies_stay_low(host):
    assert domains.assess_domains(f"Detalii: {host}").score < FLAGGED


# --- claims: a speaker's own channel is no viral source -----------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Because of the Met Office yellow warning for ice, the 10am service moves to the hall "
        "and will be livestreamed on our Facebook page.",
        "Din cauza codului galben de ninsoare, slujba de la ora 10 va fi transmisă live pe "
        "pagina noastră de Facebook.",
        "Slujba va fi transmisă pe pagina de Facebook a parohiei, pentru cei care nu pot veni.",
        "Got my DNA results back: apparently I'm 11% Norwegian, which explains a lot.",
    ],
)
def test_a_notice_pointing_to_its_own_page_makes_no_claim(text):
    assert claims_score(text) < FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        "A post on Facebook says the snow warning is fake and the council caused the floods.",
        "Pe Facebook circulă un mesaj că vaccinul din școli îi sterilizează pe copii.",
        "Our WhatsApp group says the water in Leeds is poisoned.",
        "Apparently we were lied to for fifty years about the Moon landings.",
    ],
)
def test_a_post_someone_else_shared_is_still_a_viral_source(text):
    assert claims_score(text) >= FLAGGED


# --- domain, from the held-out set's misses read after its measure: school and student lures


@pytest.mark.parametrize(
    "host",
    [
        "https://studentaid-forgiveness-gov.com",
        "https://rblx-free-robux.icu/claim",
        "https://vbucks-giveaway.top",
        "https://parentpay-uk.balance-topup.com",
    ],
)
def test_a_game_currency_a_forgiven_loan_or_the_school_payments_app_borrowed_is_risky(host):
    assert domains.assess_domains(f"Detalii: {host}").score >= FLAGGED


@pytest.mark.parametrize(
    "host",
    [
        "https://www.parentpay.com/login",
        "https://app.parentpay.com",
        "https://www.roblox.com/upgrades/robux",
        "https://robux-calculator.com",
        "https://www.theforgivenessproject.com",
        "https://studentaid.gov/manage-loans/forgiveness-cancellation",
    ],
)
def test_the_real_payments_app_and_honest_game_and_loan_pages_stay_low(host):
    assert domains.assess_domains(f"Detalii: {host}").score < FLAGGED
