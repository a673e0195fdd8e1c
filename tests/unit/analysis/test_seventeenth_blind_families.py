"""Forms grown in the seventeenth round of issue 19, after two more sets written blind (ids
`*-ff-*`, calm voices that sound knowledgeable or official: advice columns, pharmacists and
GPs, pseudo-official notices, parents' forums, neighbourhood chats, radio call-ins; `*-gg-*`,
the diaspora, villages, churches, fans, farmers and forwards), measured as written on the
sixteenth round's code, then FF tuned on (GG held out). Each is checked on sentences written
for this test (none is in the evaluation set), in Romanian and English, beside texts sharing
their words that must stay as they were."""

import pytest

from tests.unit.analysis.probes import FLAGGED, claims_score, kinds
from workers.analysis import techniques
from workers.analysis.domains import assess_domains, assess_host


@pytest.mark.parametrize(
    "text",
    [
        "Pharmacist's advice: most coughs are caused by viruses and clear up on their own in "
        "about three weeks. Honey and warm drinks help; see your GP if it lasts longer or you "
        "cough up blood.",
        "Sfatul medicului: majoritatea durerilor de gât sunt cauzate de virusuri și trec în "
        "cinci până la șapte zile fără antibiotic. Sunați medicul dacă apare febră mare sau "
        "copilul nu mai poate înghiți.",
    ],
)
def test_advice_that_sends_the_reader_to_a_doctor_is_no_risky_claim(text: str) -> None:
    """A professional's tip that names a cause and a course and refers to a doctor is the
    advice of someone accountable, not a health claim to check (a pharmacist's read 95)."""
    assert claims_score(text) < FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        "A clove of raw garlic twice a day clears a chest infection within a week, so there "
        "is no need for antibiotics.",
        "Un cățel de usturoi crud de două ori pe zi vindecă pneumonia într-o săptămână, fără "
        "antibiotice.",
    ],
)
def test_a_remedy_with_no_doctor_in_sight_is_still_a_claim(text: str) -> None:
    assert claims_score(text) >= FLAGGED


def test_a_rumour_rebutted_by_whoever_was_asked_is_a_debunk() -> None:
    """ "Mi-au zis că nu e adevărat": the asker reports the rebuttal, not the rumour."""
    rebutted = (
        "Se zice pe grupul blocului că de luni se oprește gazul o lună. Am sunat la "
        "distribuitor și mi-au zis că nu e adevărat, e doar o revizie de două ore."
    )
    passed_on = (
        "Se zice pe grupul blocului că de luni se oprește gazul o lună în tot sectorul. "
        "Dați mai departe."
    )
    assert claims_score(rebutted) < FLAGGED
    assert claims_score(passed_on) >= FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        "The water board knows all about it and its engineers have been told not to comment.",
        "Inspectorii știu, dar au primit instrucțiuni să nu comenteze.",
        "Nu s-a anunțat încă oficial ca să nu fie panică.",
        "The additive is there to keep the population docile.",
    ],
)
def test_those_who_know_told_to_say_nothing_is_a_cover_up_cue(text: str) -> None:
    assert "conspiracy" in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "We decided to let our youngest catch chickenpox naturally this winter.",
        "Mai bine îl las să facă varicela natural, e mai sănătos.",
        "A spoonful of honey cures bronchitis in three days.",
    ],
)
def test_a_disease_caught_naturally_or_cleared_by_a_remedy_is_a_miracle_cue(text: str) -> None:
    assert "miracle_cure" in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "The hospital said staff had been told not to comment while the inquiry continues.",
        "Vaccination protects children against measles, which can cause pneumonia.",
        "The plumber was told not to touch the boiler until the part arrives.",
    ],
)
def test_reports_and_advice_sharing_those_words_stay_low(text: str) -> None:
    assert techniques.assess_techniques(text).score < FLAGGED


def test_the_coward_is_not_the_verb_to_leave_typed_without_diacritics() -> None:
    """ "Laș" folds to "las", as "las" (I leave) is typed: only forms no verb shares count."""
    assert "name_calling" not in kinds("Mai bine il las acasa azi, ca e frig.")
    assert "name_calling" not in kinds("Te las la gara la 8.")
    assert "name_calling" in kinds("Lașii ăștia au fugit de la primul vot.")


@pytest.mark.parametrize(
    ("host", "flagged"),
    [
        ("paypal.com.co", True),  # a brand's real .com with a country code appended
        ("www.bbc.net.co", False),  # bbc.net is no BBC domain
        ("amazon.com.br", False),  # a brand's own regional site
        ("tesla-bonus24.live", True),  # the name crypto giveaways borrow
        ("teslaclub.ro", False),
        ("nikola-tesla-museum.org", False),
        ("discord-boost.gift", True),  # .gift: gift-card and Nitro lures
        ("psoriazis-gata.xyz", True),  # a chronic illness on an abused TLD sells its cure
        ("arthritis-care.online", False),  # on a TLD that is a word, a patients' group may sit
        ("diabet-info.ro", False),
    ],
)
def test_hosts_that_borrow_a_real_domain_a_giveaway_name_or_an_illness(
    host: str, flagged: bool
) -> None:
    assert (assess_host(host).risk >= FLAGGED) is flagged


@pytest.mark.parametrize(
    ("text", "flagged"),
    [
        (
            "The shelter closes on Friday unless we raise £8,000. Please send it through this "
            "link only: bit.ly/3helpPaws",
            True,
        ),
        ("Donați 50 de lei doar prin acest link: tinyurl.com/3bisericaX", True),
        ("Donate £5 if you can: bit.ly/pta-fundraiser", False),
        ("Send me the photos from Saturday: bit.ly/3xPhotos", False),
        ("Donate to the food bank here: bit.ly/foodbank-winter", False),
    ],
)
def test_a_shortener_asked_to_carry_money_sent_or_given(text: str, flagged: bool) -> None:
    """Money sent, or donated through the link itself, with a sum: the request of a "hi mum"
    or a charity scam on a page the reader cannot see; a school's "donate if you can" and a
    word alone are ordinary messages."""
    assert (assess_domains(text).score >= FLAGGED) is flagged


@pytest.mark.parametrize(
    "text",
    [
        "A message circulating on WhatsApp claims that tap water in Leeds has been contaminated "
        "with lead. Yorkshire Water said the supply meets every standard and no contamination "
        "was found.",
        "Un mesaj distribuit pe Facebook susține că apa de la robinet din Iași e contaminată cu "
        "plumb. Apavital a precizat că apa respectă toate normele și nu a fost găsită nicio "
        "contaminare.",
    ],
)
def test_a_reported_claim_a_source_denies_is_a_debunk(text: str) -> None:
    """A claim passed around, answered by whoever is accountable with a denial in one of
    the next two sentences: the report and its rebuttal, whatever words the denial uses."""
    assert claims_score(text) < FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        "A message circulating on WhatsApp claims that tap water in Leeds has been contaminated "
        "with lead. Yorkshire Water had not responded by the time of publication.",
        "Un mesaj distribuit pe Facebook susține că apa de la robinet din Iași e contaminată cu "
        "plumb. Apavital nu a răspuns până la ora publicării.",
        "A video claims the floods were caused by cloud seeding. The government says there was "
        "no seeding, but they lie to us every day.",
        "Mi-a zis vecina că de luni se taie apa caldă în tot orașul pentru o lună. Nu așteptați "
        "anunțul oficial, umpleți cada și dați mai departe!",
    ],
)
def test_no_answer_an_answer_thrown_back_or_an_official_to_await_is_no_debunk(text: str) -> None:
    assert claims_score(text) >= FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        "Garlic cures pneumonia within a week, no antibiotics needed. See your GP if symptoms "
        "persist.",
        "Colloidal silver clears pneumonia in 48 hours without antibiotics. Ask a pharmacist if "
        "you want to buy it.",
        "5G masts cause cancer in 90% of nearby residents, the government is covering it up. "
        "Seek medical advice if symptoms persist.",
        "Ei spun că vaccinurile sunt sigure. Nu e adevărat! Vaccinul provoacă autism și guvernul "
        "ascunde asta. Distribuiți!",
    ],
)
def test_a_referral_or_a_bare_denial_does_not_hide_a_dangerous_claim(text: str) -> None:
    """A referral counts only with a symptom's course, not beside a cure, a plot or a
    rumour pressed on; "nu e adevărat" rebuts only when whoever was asked said it."""
    assert claims_score(text) >= FLAGGED


def test_viral_infections_are_no_viral_source() -> None:
    """ "Most colds are viral", "infecții virale": a virus, not a post gone round."""
    assert claims_score("Most sore throats are viral and get better in a week.") < FLAGGED
    assert claims_score("Majoritatea infecțiilor respiratorii sunt virale.") < FLAGGED


@pytest.mark.parametrize(
    ("host", "flagged"),
    [
        ("romania-trading-cards.live", False),  # a country beside ordinary words on a word TLD
        ("uk-care-home.site", False),
        ("eu-credit-union.online", False),
        ("winter-fuel-uk.online", True),  # beside a public service's or money's word
        ("edu-ro-burse.online", True),
        ("smart-heating-energy.online", False),  # a topic without help
        ("energie-incalzire.shop", False),
        ("ajutorincalzire.online", True),  # help with heating, run together
        ("tinnitus-forum.xyz", False),  # an illness with no cure offered
    ],
)
def test_cheap_domains_need_an_offer_beside_a_country_help_or_an_illness(
    host: str, flagged: bool
) -> None:
    assert (assess_host(host).risk >= FLAGGED) is flagged


@pytest.mark.parametrize(
    ("text", "flagged"),
    [
        ("Info: bit.ly/free-school-meals-uk", False),  # "free" and a country: one offer
        ("Run with us: bit.ly/cure-cancer-run-2026", False),
        ("Program: bit.ly/minune-de-craciun", False),
        ("Apply: bit.ly/heating-grant-2026", True),  # help with heating
        ("Rețeta: bit.ly/ulei-minune-14zile", True),  # a miracle, a remedy, days
        ("Watch: bit.ly/leaked-footage-pfizer", True),
    ],
)
def test_a_slug_word_names_a_page_alone_only_with_what_it_sells(text: str, flagged: bool) -> None:
    assert (assess_domains(text).score >= FLAGGED) is flagged


def test_a_message_someone_received_and_tells_of_is_reported() -> None:
    """ "Mi-a venit SMS că mi-e blocat contul": the scam's pressure is told of, not applied;
    the scam message itself still presses."""
    told = (
        "Frate, mi-a venit SMS că mi-e blocat contul la bancă și trebuie să plătesc azi, dar "
        "am sunat la ei și era țeapă."
    )
    scam = (
        "Contul dvs. a fost blocat. Plătiți taxa de deblocare azi sau pierdeți accesul "
        "definitiv: https://bt-deblocare.top"
    )
    assert techniques.assess_techniques(told).score < FLAGGED
    assert techniques.assess_techniques(scam).score >= FLAGGED
