"""Forms grown in the twenty-eighth round of issue 19, after two more sets written blind
(ids `*-zz-*`, food, farming and the countryside; `*-ab-*`, energy, weather and the
environment), measured as written on the twenty-seventh round's code, then AB tuned on (ZZ
held out). Each is checked on sentences written for this test (none is in the evaluation
set), in Romanian and English, beside texts sharing their words that must stay as they were."""

import pytest

from tests.unit.analysis.probes import FLAGGED, claims_score, kinds
from workers.analysis import domains, lemmas, techniques
from workers.analysis.claim_forms import answered_no, sentence_register
from workers.analysis.lemmas import NUMBER
from workers.analysis.text import fold

# --- techniques --------------------------------------------------------------------------


def words_of(text: str) -> list[lemmas.Token]:
    """The words the techniques analyser reads in `text` (one language's reading)."""
    found = lemmas.tokens(text, fold(text), techniques.default_lexicon().words, [len(text)])
    return next(iter(found.values()))


def word_texts(text: str) -> list[str]:
    return [text[t.start : t.end] for t in words_of(text)]


@pytest.mark.parametrize(
    ("text", "number", "unit"),
    [("Accesați linkul în maxim 24h.", "24", "h"), ("Reply within 48hrs", "48", "hrs")],
)
def test_a_number_glued_to_a_unit_of_time_is_two_words(text, number, unit):
    assert [number, unit] == word_texts(text)[-2:]


def test_a_number_glued_to_other_letters_stays_one_word():
    assert {"Antena3", "5G", "covid19", "A1", "24hours"} <= set(
        word_texts("Antena3 a difuzat 5G, covid19 și A1, 24hours.")
    )


def test_a_glued_number_is_still_a_number():
    assert NUMBER in words_of("doar 24h")[1].keys


@pytest.mark.parametrize(
    "text", ["Only 2 H&M stores left in the city centre", "Mai sunt doar 2 magazine H&M"]
)
def test_a_unit_letter_on_its_own_is_no_unit_of_time(text):
    assert "urgency" not in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "Confirmați adresa în 24h, altfel coletul se returnează.",
        "Your parcel is on hold: pay the fee within 48hrs.",
    ],
)
def test_a_glued_deadline_presses_like_a_spelt_one(text):
    assert "urgency" in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "Hurry, only 214 prizes left! Answer the questions and get the money.",
        "Just 47 installation slots left in your postcode this month.",
        "Only 500 vouchers remaining.",
        "Au mai rămas doar 214 premii.",
        "Mai sunt 300 de vouchere, intră acum.",
    ],
)
def test_prizes_and_free_things_running_out_press_the_reader(text):
    assert "urgency" in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "Only 3 left in size 10, the rest of the range is back next week.",
        "Au mai rămas 3 bucăți în stoc la mărimea 42.",
        "The council handed out 214 prizes at the school fair.",
        "Only 3 payments left on the car loan, then it's ours.",
        "Mai sunt 50 de bilete la concertul de caritate de sâmbătă.",
    ],
)
def test_a_shops_stock_or_a_count_of_prizes_is_no_pressure(text):
    assert "urgency" not in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "Answer 3 quick questions and unlock your gift.",
        "Complete a short survey to receive your prize.",
        "Răspunde la 3 întrebări scurte și primești suma direct pe card.",
        "Completează chestionarul de 3 întrebări și ridici premiul.",
    ],
)
def test_the_survey_a_giveaway_hides_behind_presses_the_reader(text):
    assert "pressure" in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "Take our 5-question survey to help us improve our service.",
        "Take a quick survey and get 10% off your next order.",
        "Completați chestionarul scurt și primiți 10% reducere la următoarea comandă.",
        "Vă rugăm să răspundeți la 3 întrebări despre vizita la clinică.",
        "The quiz has 10 questions on the history of the town.",
    ],
)
def test_a_survey_that_offers_nothing_to_claim_is_no_lure(text):
    assert "pressure" not in kinds(text)


@pytest.mark.parametrize(
    "text",
    ["PPC Energie: Aveti de primit 89,20 lei din regularizarea anuala.", "Ai de încasat 340 lei."],
)
def test_a_sum_owed_to_the_reader_is_pressure(text):
    assert "pressure" in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "Save your receipt so you don't lose the warranty.",
        "Salvați documentul des, ca să nu pierdeți modificările.",
    ],
)
def test_advice_against_a_loss_is_no_pressure(text):
    assert "pressure" not in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "Just send me the long card number, expiry and the 3 digits on the back.",
        "Text me the CVV so I can book the engineer.",
        "Trimite-mi și codul CVV, să fac rezervarea.",
        "Dă-mi și cifrele de pe spatele cardului.",
    ],
)
def test_a_cards_security_details_asked_for_are_a_data_request(text):
    assert "data_request" in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "We will never ask you for the 3 digits on the back of your card.",
        "Never give anyone the card number or the CVV code over the phone.",
        "Băncile nu vă cer niciodată numărul cardului sau codul CVV de pe spate.",
        "Nu trimiteți nimănui cele 3 cifre de pe spatele cardului.",
        "I need to cancel my card, what number do I call?",
        "To set up Apple Pay you will need your card number and expiry date.",
        "Pentru plata online veți avea nevoie de numărul cardului.",
        "When you pay by phone, the receptionist will need the card number and the CVV.",
        "If you book by phone, we'll need the long card number and the expiry date.",
        "La telefon, operatorul vă va cere să-i spuneți cele 3 cifre de pe spatele cardului.",
        "Scammers will ask you to read the 3 digits on the back over the phone.",
    ],
)
def test_a_warning_about_card_details_is_no_request(text):
    assert "data_request" not in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "Funding is strictly limited, so check your eligibility.",
        "Funding is allocated on a first-come, first-served basis.",
        "Locurile se acordă pe principiul primul venit, primul servit.",
        "Fondurile sunt strict limitate.",
    ],
)
def test_an_offers_limits_press_the_reader(text):
    assert "urgency" in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "Nu ratați această expoziție de la Muzeul Național de Artă.",
        "Don't miss out on this year's village fete, Saturday from noon.",
    ],
)
def test_an_invitation_not_to_miss_something_is_no_pressure(text):
    assert "urgency" not in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "Nan forwarded me this, is it real?? 'Tesla UK: Congratulations! You have been "
        "selected for a FREE charger. Pay £1.99 to confirm within 24 hours or lose your place'",
        'Uite ce mi-a venit, zice că am bani de primit, intru? "PPC Energie: Aveti de primit '
        '89,20 lei. Accesati linkul in maxim 24h pentru a nu pierde suma."',
        'Fwd from Auntie Pat: "Tesco are giving away £500 vouchers!! Hurry, it closes '
        'TONIGHT, only 12 hours left 👉 tesco-vouchers.club"',
    ],
)
def test_a_lure_forwarded_or_asked_about_is_the_lure(text):
    assert techniques.assess_techniques(text, learned=False).score >= FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        "Frate, am primit asta: „Coletul dvs. este în așteptare, confirmați adresa în 24h, "
        "altfel se returnează”. N-am comandat nimic. E țeapă, nu?",
        "Mum forwarded me the 'don't answer, they'll clone your voice within 24 hours, "
        "act now' message again. Looked it up, it's nonsense.",
        "Police warn of texts reading: 'Your parcel is on hold, pay within 24 hours or it "
        "will be returned'. Do not click the link.",
        "Got this text: 'confirm within 24 hours or your account closes'. Obvious scam, "
        "reported it to 7726.",
        "Has anyone else had this? 'Your account is locked, verify within 24 hours'. Not "
        "falling for it.",
        "Uite ce mi-a venit, intru? „Aveti de primit 89 lei, accesati in 24h” Poliția spune "
        "că PPC nu trimite așa ceva.",
        "Got this from the council today: 'Water off on Friday from 9am, fill containers "
        "within 24 hours'.",
        # a notice or advice forwarded with no link and no sum: told of, not a lure
        "My sister forwarded me this from the vet, is it real? 'Chocolate is toxic to dogs, "
        "even a little can kill them, tell everyone you know!'",
        "Vecina mi-a dat forward la asta, e adevărat? „Primăria: mâine se oprește căldura în "
        "tot sectorul, anunțați-i pe toți!”",
    ],
)
def test_a_lure_quoted_to_warn_of_it_stays_reported(text):
    assert techniques.assess_techniques(text, learned=False).score < FLAGGED


# --- claims ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "FINAL NOTICE: the £300 energy payment closes in 48 hours. If you don't register "
        "your meter number today you will lose your payment permanently. Register now: "
        "https://cost-of-living-energy.uk-claim.net/register",
        "⚠️ Mai aveți doar 3 zile să vă înscrieți pentru compensarea de 1.500 lei! După 30 "
        "iunie lista se închide definitiv și banii se pierd. Verificați acum dacă sunteți "
        "eligibil: compensare-energie-ro.top/verifica",
    ],
)
def test_a_lures_threat_is_its_pressure_not_a_claim(text):
    assert claims_score(text) < FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        # a rumour pointing at its "full story" asks nothing of a lure
        "URGENT: In 48 hours the government will start taking money from every savings "
        "account over £10,000. Move your savings before Friday or lose them for good. Full "
        "story: bbc-news.co.uk.breaking-report.live/savings",
        # the lure's words with no link: a threat passed on as it stands
        "FINAL NOTICE: the £300 energy payment closes in 48 hours. If you don't register "
        "your meter number today you will lose your payment permanently. Register now!",
    ],
)
def test_a_threat_without_a_lures_call_through_a_link_stays_a_claim(text):
    assert claims_score(text) >= FLAGGED


@pytest.mark.parametrize(
    "sentence",
    [
        "La protest, participanții au purtat pancarte cu mesaje precum „Jos dictatura verde”.",
        "IGSU a transmis mesaje RO-ALERT în localitățile vizate.",
        "Pe DN1, între Sinaia și Predeal, se circulă doar cu echipamente de iarnă.",
        "Din 14 iunie circulă trenuri directe spre Constanța și Mangalia.",
        "Trenurile circulă cu întârzieri de până la 40 de minute.",
    ],
)
def test_placards_alerts_and_traffic_are_no_viral_source(sentence):
    assert "viral_sources" not in sentence_register(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "Pe rețelele sociale circulă de câteva zile un mesaj potrivit căruia ploile sunt "
        "provocate.",
        "Circulă iarăși pe grupuri ideea că apa cu lămâie vindecă cancerul.",
        "Mesajul a fost distribuit de mii de ori pe Facebook.",
    ],
)
def test_a_message_that_circulates_is_still_a_viral_source(sentence):
    assert "viral_sources" in sentence_register(sentence)


# --- domain ------------------------------------------------------------------------------


def _reasons(text: str) -> list[str]:
    return [r for h in domains.assess_domains(text).hosts for r, _ in h.reasons]


@pytest.mark.parametrize(
    "host", ["govuk-refund.com", "govro-ajutor-incalzire.com", "energy-govuk-refund.net"]
)
def test_a_government_domain_written_as_one_word_in_another_name_poses(host):
    reasons = _reasons(f"Check your eligibility: https://{host}/check")
    assert any(r.startswith(domains.GOVERNMENT_REASON) for r in reasons)
    assert domains.assess_domains(f"https://{host}/check").score >= FLAGGED


@pytest.mark.parametrize(
    "host",
    [
        "www.gov.uk",
        "govuk.org",
        "gov.ro",
        "www.gov.ro",
        "e-gov.ro",
        "govuk-frontend.netlify.app",
        "govuk-prototype-kit.herokuapp.com",
        "govuk-blog.co.uk",
        "govuk-tech-radar.io",
        "govuk-diaries.me",
        "freesolar-govuk.co",  # glued, but nothing offered and no abused TLD
    ],
)
def test_a_government_domain_or_the_word_alone_is_no_pose(host):
    reasons = _reasons(f"See https://{host}/guidance")
    assert not any(r.startswith(domains.GOVERNMENT_REASON) for r in reasons)


@pytest.mark.parametrize(
    ("text", "brand"),
    [
        ("Tesla UK: claim your charger at tsla-charger-uk.shop/claim", "tesla.com"),
        ("Your Amazon order is waiting: amzon-deals.shop/track", "amazon.com"),
    ],
)
def test_a_brand_the_message_names_with_a_letter_left_out_imitates_it(text, brand):
    assert any(r.startswith(f"imitates {brand}") for r in _reasons(text))


@pytest.mark.parametrize(
    "text",
    [
        "Phone cases from £5: https://iphone-case.shop",  # "case" is Chase less a letter
        "Mono vinyl reissues: https://mono-records.shop",  # Monzo less a letter
        "Protest on Saturday: revolt-romania.online",  # Revolut less a letter
        "Tesla UK: read it at tsla-model.com",  # named, but no second sign
        "Your order is waiting: amzon-deals.shop/track",  # a second sign, the brand unnamed
        # the brand named, but the shortened word written too: a shop called so
        "Pay by card or Revolut at Revolt Records: https://revolt-records.shop",
    ],
)
def test_a_shortening_the_message_does_not_name_or_without_a_second_sign_imitates_nothing(
    text,
):
    assert not any(r.startswith("imitates") for r in _reasons(text))


def test_a_bills_settlement_beside_the_borrowed_name_is_money_asked():
    text = "PPC Energie: Aveti de primit 89,20 lei. Accesati ppc-regularizare.info in 24h."
    assert any(r.startswith(domains.BORROWED_REASON) for r in _reasons(text))


@pytest.mark.parametrize(
    "sentences",
    [
        ["Can you treat an ear infection with vinegar drops?", "No, says the NHS: see a GP."],
        ["Can the flu jab give you flu?", "No, according to doctors: it holds no live virus."],
        ["Ajută oțetul la colesterol?", "Nu, spun medicii: nu are niciun efect."],
        ["Produce vaccinul ROR autism?", "Nu, potrivit studiilor făcute pe milioane de copii."],
    ],
)
def test_a_question_answered_no_by_who_says_so_is_a_rebuttal(sentences):
    assert answered_no(sentences)


@pytest.mark.parametrize(
    "sentences",
    [
        ["Can the flu jab give you flu?", "No.", "The vaccine holds no live virus."],
        ["Is the vaccine safe?", "No.", "They never tested it on anyone."],
        ["Ne spune cineva adevărul despre 5G?", "Nu.", "Antenele ne îmbolnăvesc copiii."],
        ["Are vaccines safe?", "No, they are killing our children."],
        ["Is the tap water safe?", "NO, SAY THE EXPERTS.", "They are paid to say it."],
        ["Is the tap water safe?", "No, say the experts!"],
        ["Do chemtrails exist?", "No, says the government: but they would say that."],
        ["Is it true?", "Nobody knows, they won't tell us."],
        ["No, says the NHS.", "Vaccines are safe?"],
    ],
)
def test_a_bare_shouted_or_taken_back_no_is_no_rebuttal(sentences):
    assert not answered_no(sentences)


def test_a_debunk_that_answers_a_question_no_makes_no_claim_of_it():
    text = (
        "Can the flu jab give you flu? No, says the NHS: the injected vaccine contains "
        "inactivated virus, so it cannot cause an infection. A sore arm for a day is the "
        "immune system working."
    )
    assert claims_score(text) < FLAGGED
