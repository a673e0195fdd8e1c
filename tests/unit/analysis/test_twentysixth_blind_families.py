"""Forms grown in the twenty-sixth round of issue 19, after two more sets written blind (ids
`*-vv-*`, a week of one person's phone; `*-ww-*`, what a newsroom's, a city hall's and a
telecom's moderators see), measured as written on the twenty-fifth round's code, then WW
tuned on (VV held out). Each is checked on sentences written for this test (none is in the
evaluation set), in Romanian and English, beside texts sharing their words that must stay
as they were."""

import pytest

from tests.unit.analysis.probes import kinds


@pytest.mark.parametrize(
    "text",
    [
        # advice to whoever already fell for a lure
        "If you've entered your card details on that page, ring your bank.",
        "If you have already entered your bank details, change your password.",
        "Dacă ați introdus datele cardului pe acel site, anunțați banca.",
        "Cei care au introdus deja datele bancare sunt rugați să-și schimbe parola.",
        # what a warning tells the reader never to do
        "Never enter your PIN on a page opened from a text message.",
        "Don't enter your card details on a site you reached from an advert.",
        "Nu introduceți datele cardului pe site-uri primite prin SMS.",
        "Nu introduceți niciodată datele bancare într-un formular din e-mail.",
        "Niciodată nu introduceți datele cardului pe un site primit prin SMS.",
        "Vă rugăm să nu trimiteți datele cardului nimănui.",
    ],
)
def test_data_already_given_or_never_to_be_given_is_no_request(text):
    assert "data_request" not in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "Please enter your card details to release the parcel.",
        "Don't delay, verify your account details today.",
        "You have to confirm your card details within 24 hours.",
        "Introduceți datele cardului pentru a primi rambursarea.",
        "Pentru a debloca contul, confirmați datele cardului aici.",
        "Dacă doriți rambursarea, completați datele cardului.",
    ],
)
def test_a_lure_s_request_for_data_is_still_one(text):
    assert "data_request" in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        # lures whose "not" does not forbid (round 26's review)
        "We noticed a new sign-in. If not, verify your account details here.",
        "Dacă nu, confirmați datele cardului aici.",
        "If you haven't updated your billing information, your subscription ends today.",
        "If you do not verify your account details within 24 hours, access will be lost.",
        "Why not update your billing information today and keep your discount?",
        "Coletul nu poate fi livrat pentru că nu ați confirmat datele de livrare.",
        "Dacă nu confirmați datele cardului în 24 de ore, contul va fi blocat.",
        "Nu uitați să vă actualizați datele cardului până azi.",
        "Don't ignore this message and confirm your card details now.",
    ],
)
def test_a_not_that_does_not_forbid_leaves_the_request(text):
    assert "data_request" in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "Scam alert: texts pretending to be from the pharmacy ask for a delivery fee.",
        "This is a scam, do not click the link.",
        "Police say the scam cost pensioners £40,000 last year.",
        "Atenție, e o înșelătorie: banca nu trimite linkuri prin SMS.",
        "Am luat țeapă pe un site de vânzări, nu mai comand de acolo.",
        # words that name a public matter elsewhere are everyday words here
        "Anyone who falls for this scam should call their bank.",
        "Please pass this scam warning on to your parents.",
        "A passport renewal scam is doing the rounds: the real site is gov.uk.",
    ],
)
def test_the_scam_a_warning_is_about_is_no_conspiracy(text):
    assert "conspiracy" not in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "The whole pandemic was a scam to make us obey.",
        "Covid was a scam from start to finish.",
        "The climate scam is how they tax the air we breathe.",
        "Pandemia a fost o înșelătorie.",
        "Încălzirea globală e cea mai mare țeapă.",
        "Net zero is a scam to control you.",
        "Taxa pe carbon e o țeapă ca să ne controleze.",
        "The moon landing was a hoax.",
    ],
)
def test_a_public_matter_called_a_scam_or_a_hoax_is_conspiracy(text):
    assert "conspiracy" in kinds(text)
