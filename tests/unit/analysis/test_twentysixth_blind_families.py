"""Forms grown in the twenty-sixth round of issue 19, after two more sets written blind (ids
`*-vv-*`, a week of one person's phone; `*-ww-*`, what a newsroom's, a city hall's and a
telecom's moderators see), measured as written on the twenty-fifth round's code, then WW
tuned on (VV held out). Each is checked on sentences written for this test (none is in the
evaluation set), in Romanian and English, beside texts sharing their words that must stay
as they were."""

import pytest

from tests.unit.analysis.probes import FLAGGED, claims_score


@pytest.mark.parametrize(
    "text",
    [
        "Readers have asked us about posts claiming the new smart bins on Mill Lane record "
        "conversations. They don't. The bins have a fill sensor that tells the crews when to "
        "empty them, so they contain no microphone and no camera.",
        "A message going round WhatsApp says the new water meters cause headaches because of "
        "their radio signal. False. The meters send one reading a month and carry no "
        "transmitter of the kind the message describes.",
        "Mesajul care circulă pe WhatsApp spune că noile contoare inteligente provoacă dureri "
        "de cap din cauza radiațiilor. Nu e adevărat. Contoarele transmit consumul o dată pe "
        "zi și nu emit nimic între două citiri.",
    ],
)
def test_a_claim_passed_around_denied_flatly_and_explained_in_a_calm_text_is_a_debunk(text):
    assert claims_score(text) < FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        # a denial that goes on to press a plot of its own
        "Posts on Facebook claim the new lampposts are just lights. They aren't. They film "
        "everyone and the council is hiding it. Share before they delete this!",
        "Pe Facebook circulă că vaccinul e sigur. Nu e adevărat. Ne ascund efectele adverse, "
        "distribuiți urgent!",
        # a denial that asserts a claim of its own instead
        "Everyone on WhatsApp is saying the new vaccine is safe. It isn't. It causes heart "
        "damage in young men.",
        "Toată lumea de pe Facebook zice că apa de la robinet e bună. Nu e. Provoacă "
        "infertilitate la femei.",
        # a denial of an official line, not of what circulates
        "The government says the new ID cards carry no tracking chip. They do. Every scan is "
        "stored and sold to the banks.",
    ],
)
def test_a_denial_that_presses_or_asserts_its_own_claim_is_no_debunk(text):
    assert claims_score(text) >= FLAGGED
