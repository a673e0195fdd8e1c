"""Forms grown in the thirty-first round of issue 19, after two more sets written blind (ids
`*-gh-*`, technology in the age of AI; `*-fg-*`, leisure and hobbies), measured as written
on the thirtieth round's code, then GH tuned on (FG held out, then its misses read). Each is
checked on sentences written for this test (none is in the evaluation set), in Romanian and
English, beside texts sharing their words that must stay as they were."""

import pytest

from tests.unit.analysis.probes import FLAGGED, claims_score, kinds
from workers.analysis import domains
from workers.analysis.claim_forms import states_statistic

# --- techniques: the cloud lure, the hijacked chat account, sure profits, chips in people --


@pytest.mark.parametrize(
    "text",
    [
        "iCloud: Your storage is full. Photos and videos will be deleted on 14 March.",
        "Your saved chats will be permanently removed unless you update your payment method.",
        "Spațiul de stocare este plin. Fișierele dvs. vor fi șterse definitiv.",
        "Spatiul de stocare iCloud este plin, pozele nu se mai salveaza.",
    ],
)
def test_a_full_storage_or_a_removal_unless_you_pay_threatens_a_loss(text):
    assert "pressure" in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "The hard drive was full so I bought another one.",
        "Unless you tell me otherwise, I'll book the table for eight.",
        "Stocarea în cloud e plătită lunar; o poți anula oricând din setări.",
        "Stocarea din iCloud e plină de poze cu pisica, trebuie să fac curat.",
        "Unless you upgrade to Windows 11, your PC will stop getting security updates.",
        "My inbox is full of newsletters I never signed up for.",
    ],
)
def test_a_full_disk_or_an_ordinary_unless_presses_on_nobody(text):
    assert "pressure" not in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "Hi, sorry, I sent a 6-digit code to your number by mistake, can you forward it to me?",
        "Bună! Ți-a venit din greșeală un cod de 6 cifre pe SMS. Mi-l poți trimite rapid?",
        "Salut, ți-am trimis din greșeală un cod de confirmare pe SMS, mi-l trimiți te rog?",
    ],
)
def test_a_code_that_came_by_mistake_asked_back_is_a_data_request(text):
    assert "data_request" in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "If you received a code by mistake, never share it with anyone.",
        "Dacă ați primit din greșeală un cod prin SMS, nu-l dați nimănui.",
        "Ți-am trimis codul de la interfon, mi-l dai și lui Dan?",
        "Ți-am trimis pe SMS codul de la interfon. Poți trimite un mesaj când ajungi?",
        "I typed the wrong code by mistake twice and the app locked me out.",
        "If you see error code 0x80070005, send us a screenshot of the error.",
    ],
)
def test_a_warning_or_a_door_code_asks_for_no_one_time_code(text):
    assert "data_request" not in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "Guaranteed returns of 20% a month with our AI trading bot.",
        "Algoritmul nostru generează profituri garantate de până la 3.000 de lei pe zi.",
        "I went from stacking shelves to making £38,000 a month with ChatGPT.",
    ],
)
def test_sure_profits_and_an_income_made_with_an_ai_tool_are_bait(text):
    assert "pressure" in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "Past performance is no guide; returns are not guaranteed.",
        "Randamentul nu este garantat, iar valoarea investiției poate scădea.",
        "The shop guarantees a refund within 30 days.",
        "An annuity gives you a guaranteed income for life.",
        "We guarantee returns are processed within 5 days.",
        "Venitul minim garantat a crescut de la 1 ianuarie.",
        "I made 5 birthday cards this month with an AI image app for the grandkids.",
    ],
)
def test_a_risk_warning_promises_no_profit(text):
    assert "pressure" not in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "The vaccines contain microchips to track us all.",
        "Bill Gates wants to microchip the population.",
    ],
)
def test_chips_put_in_people_frame_a_conspiracy(text):
    assert "conspiracy" in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "In England, dogs must be microchipped by the time they're eight weeks old.",
        "Our vet microchipped the kitten in two minutes and it didn't even flinch.",
    ],
)
def test_a_pet_microchipped_is_the_law_not_a_plot(text):
    assert "conspiracy" not in kinds(text)


def test_a_biopsy_being_done_is_no_whataboutism():
    text = "Vet thinks the lump is most likely a fatty one, but they're doing a biopsy to be safe."
    assert "whataboutism" not in kinds(text)


# --- claims: "No, …" answers a claim; hoaxes named; research into posts; vague studies -----


@pytest.mark.parametrize(
    "text",
    [
        "No, your earbuds aren't giving you brain cancer. Bluetooth earbuds emit a tiny "
        "fraction of a phone's radio energy. Large studies haven't found a rise in tumours.",
        "Nu, routerul nu scade fertilitatea. Puterea emisă e de mii de ori sub limitele legale, "
        "iar studiile mari nu au găsit vreo legătură.",
        "That post telling you to switch your phone off tonight because of cosmic rays is a "
        "hoax. It has been doing the rounds since 2013.",
        "Circulă din nou mesajul că un clip le cere copiilor să se rănească. Redacțiile nu au "
        "găsit niciun astfel de clip; e o farsă reciclată din 2019.",
        "Mama a primit un video cu guvernatorul BNR care garanta randamente de 30%. Era clar "
        "deepfake, vocea suna a robot.",
        "Mesajul cu amenda de 5.000 de lei pentru ciuperci culese fără autorizație e o farsă.",
        "O analiză publicată de o organizație de monitorizare arată că sute de conturi au "
        "distribuit clipuri identice cu mesajul „Ei ne vând țara”.",
    ],
)
def test_a_rebuttal_or_research_into_what_circulates_asserts_nothing(text):
    assert claims_score(text) < FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        # the denial speaks of the text itself, and the claim follows
        "No, this is not a joke: the government will seize every savings account on Monday. "
        "Share this now!",
        "Nu, asta nu e o glumă: de luni guvernul confiscă toate economiile. Distribuiți!",
        # a monitoring said to be done is the claim, not research
        "From Monday ALL calls are recorded and WhatsApp and Facebook are monitored by the "
        "government. Forward this to all your contacts!",
        # a post's "No," that says to share, or whose "experts" deny nothing
        "No, the vaccine isn't safe. Doctors are paid to lie. Share before they delete it!",
        "No, the moon landing didn't happen. Experts know it was filmed in a studio.",
        # "it's a hoax" thrown at what a source says
        "Guvernul spune că vaccinul e sigur. E o farsă, distribuiți!",
        "The government says the jab is safe. It's a hoax, share!",
        # a message called fake to open a plot of one's own
        "The official message is fake: the real death toll is ten times higher, they hide it!",
    ],
)
def test_a_denial_of_a_joke_or_a_surveillance_rumour_still_asserts(text):
    assert claims_score(text) >= FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        "Daily use of AI chatbots shrinks short-term memory by up to 20 per cent within six "
        "months, a new study has found.",
        "A new survey shows that 87% of over-65s have received an AI voice-clone call.",
        "Un studiu nou arată că 70% dintre adolescenți și-au pierdut capacitatea de concentrare.",
        "Peste jumătate dintre mașinile second-hand aduse din Germania au kilometrajul dat înapoi.",
        "More than half of the used cars imported from Germany have had their mileage clocked.",
    ],
)
def test_a_share_or_a_study_nobody_is_named_for_is_a_claim(text):
    assert claims_score(text) >= FLAGGED


@pytest.mark.parametrize(
    ("text", "share"),
    [
        ("More than half of the lenses sold online have fungus.", True),
        ("Nearly half of dog owners ignore the rules.", True),
        ("Two thirds of the salmon have vanished.", True),
        ("Aproape jumătate din oraș a rămas fără apă.", True),
        ("Trei sferturi dintre pensionari nu au economii.", True),
        ("I ate half of the cake.", False),
        ("Wait a quarter of an hour before serving.", False),
        ("Leave it for three quarters of an hour.", False),
        ("Jumătate din tort a rămas pe masă.", False),
    ],
)
def test_a_share_in_words_is_a_statistic(text, share):
    assert states_statistic(text) is share


@pytest.mark.parametrize(
    "text",
    [
        "I ate half of the cake and left the rest for you.",
        "A new study by King's College London found that 12% of teenagers sleep less than six "
        "hours, the authors said, urging caution in reading the figure.",
    ],
)
def test_a_plain_half_or_a_named_study_stays_low(text):
    assert claims_score(text) < FLAGGED


# --- domain: an AI brand borrowed, tickets and inspections on cheap hosts, the RAR -------


@pytest.mark.parametrize(
    "host",
    [
        "https://chatgpt-plus-billing.com/ro/update",
        "https://chatgpt.account-billing.help/update",
        "glastonbury-resale-tickets.live",
        "rar-itp-online.icu",
    ],
)
def test_an_ai_brand_borrowed_or_tickets_and_inspections_on_a_cheap_host_are_risky(host):
    assert domains.assess_domains(host).score >= FLAGGED


@pytest.mark.parametrize(
    "host",
    [
        "https://chatgpt.com/",
        "https://help.openai.com/en/articles/1",
        "https://www.rarom.ro",
        # one letter from "openai": the OpenAL audio library's own site
        "https://www.openal.org/documentation/",
    ],
)
def test_the_real_ai_and_vehicle_registry_sites_stay_low(host):
    assert domains.assess_domains(host).score < FLAGGED
