"""Forms grown in the nineteenth round of issue 19, after two more sets written blind (ids
`*-jj-*`, world affairs and the information war: wires and correspondents, war and
sanctions, Ukraine and Moldova, EU and NATO, diplomats, Telegram war channels, fact-check
desks, embassy notices, donations for war victims; `*-kk-*`, the very short and the
fragmented: headlines, push notifications, posts and replies, comments, captions, one-line
chats, SMS, subject lines, reviews), measured as written on the eighteenth round's code, then
JJ tuned on (KK held out). Each is checked on sentences written for this test (none is in the
evaluation set), in Romanian and English, beside texts sharing their words that must stay as
they were."""

import pytest

from tests.unit.analysis.probes import FLAGGED, claims_score, kinds
from workers.analysis.domains import assess_domains, assess_host


@pytest.mark.parametrize(
    ("host", "flagged"),
    [
        # the names of charities and aid agencies on hosts of their own
        ("crucearosie-donatii.top", True),
        ("crucea-rosie-ajutor.com", True),
        ("redcross-ukraine-help.com", True),
        ("redcross-donations.top", True),
        ("salvati-copiii-donatii.com", True),
        ("doctorswithoutborders-gaza.help", True),
        # their real sites, national societies and subdomains
        ("crucearosie.ro", False),
        ("redcross.org.uk", False),
        ("redcross.ie", False),
        ("redcross.am", False),
        ("icrc.org", False),
        ("donate.msf.org", False),
        ("salvaticopiii.ro", False),
        # names of others that are one letter or a word away (the review's)
        ("unice.fr", False),
        ("unicer.pt", False),
        ("msfaccess.org", False),
        ("app.msf.gov.sg", False),
        ("donate.who.foundation", False),
        ("donate.redcross.org.ph", False),
        ("worldvision-optica.ro", False),
    ],
)
def test_a_charity_name_is_protected_and_its_own_sites_are_not_lookalikes(
    host: str, flagged: bool
) -> None:
    assert (assess_host(host).risk >= FLAGGED) is flagged


@pytest.mark.parametrize(
    "text",
    [
        "Evident, la televizor n-o să auziți asta niciodată.",
        "Nu veți vedea asta la știri, garantat.",
        "You will never hear this on the news.",
        "You'll never read about it in the mainstream media, of course.",
    ],
)
def test_news_said_to_keep_it_from_the_reader_is_conspiracy_framing(text: str) -> None:
    assert "conspiracy" in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "La știri n-am auzit nimic despre asta, voi știți ceva?",
        "Nu mă mai uit la știri de un an.",
        "Dacă nu vezi știrea pe site, reîncarcă pagina.",
        "Nu ai auzit la știri de inundațiile de la Galați?",
        "La televizor n-o să vezi meciul, se dă doar pe Prima Sport.",
        "I never watch the news anymore.",
        "If you can't see the news feed, refresh the page.",
        "You may not have heard this on the news, but the bridge reopens on Monday.",
        "You won't see this match on TV: the final is streamed only on our app.",
        "No journalists were allowed into the hearing.",
        "By law no TV channel is permitted to discuss exit polls before 9 pm.",
    ],
)
def test_the_news_not_seen_or_not_watched_is_no_cover_up(text: str) -> None:
    assert "conspiracy" not in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "Alegerile au fost anulate la comanda Bruxelles-ului, iar dovezile au fost fabricate "
        "de servicii.",
        "The referendum was rigged, everyone knows it.",
        "The so-called evidence was fabricated by the secret services.",
    ],
)
def test_orders_from_outside_and_evidence_made_up_are_conspiracy_framing(text: str) -> None:
    assert "conspiracy" in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "Comanda a fost livrată la Bruxelles luni.",
        "Tipografia a livrat la timp comanda ambasadei: 500 de invitații.",
        "Comanda serviciilor de catering se face online.",
        "Polițiștii au fabricat probe, a stabilit instanța, iar inculpatul a fost achitat.",
        "Piesele au fost fabricate la uzina din Craiova.",
        "We ordered waffles in Brussels.",
        "The summit was organised by a Brussels-based think tank.",
        "The court found that he had fabricated evidence.",
        "Everyone on the payroll gets the bonus in December.",
        "Poll: fake news worries two thirds of voters.",
    ],
)
def test_brussels_an_order_or_evidence_alone_is_no_conspiracy(text: str) -> None:
    assert "conspiracy" not in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "Sweden's crime rate went up 300% after it let the migrants in.",
        "Since the migrants arrived, crime has tripled in our town.",
        "Infracționalitatea a crescut cu 300% după ce au venit migranții.",
        "De când au venit migranții, furturile s-au triplat în cartier.",
    ],
)
def test_a_rise_in_crime_laid_at_a_groups_arrival_is_collective_blame(text: str) -> None:
    assert "collective_blame" in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "Crime went up after the pandemic as people lost their jobs.",
        "Violent crime has risen since 2019 among young people, the report says.",
        "Hate crimes rose sharply after the attack, Muslim community groups said.",
        "Violența a crescut după pandemie, când oamenii și-au pierdut locurile de muncă.",
        "Violența domestică a crescut, iar refugiații ucraineni sunt printre victime.",
        "Infracțiunile informatice au crescut din 2020; escrocii se dau drept militari străini.",
    ],
)
def test_a_rise_in_crime_with_another_cause_blames_no_group(text: str) -> None:
    assert "collective_blame" not in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "Ambasadorul Rusiei a declarat, într-un interviu, că Occidentul pregătește o provocare "
        "militară în Transnistria. Diplomatul nu a oferit detalii despre sursa acestor "
        "informații.",
        "The Russian ambassador said in an interview that the West is preparing a military "
        "provocation in Transnistria. The diplomat gave no details about the source of this "
        "information.",
    ],
)
def test_a_speaker_named_by_role_who_gave_no_source_leaves_the_claim_unsupported(
    text: str,
) -> None:
    assert claims_score(text) >= FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        "The minister said the new motorway will open in June. The minister did not give "
        "details about the source of the funding.",
        "Ministrul a declarat că autostrada va fi gata în iunie. Ministrul nu a oferit detalii "
        "despre sursa finanțării.",
        # another speaker's silence
        "The foreign minister said two diplomats had been expelled. The spokesman did not say "
        "where they would fly to, but the ministry published their names.",
        "Ministrul a declarat că spitalul se deschide în iunie. Premierul nu a precizat de unde "
        "vor veni banii.",
        # answered in the same breath
        "The Russian ambassador claimed Ukraine was preparing a 'dirty bomb'. The diplomat gave "
        "no details about the source of this information, and IAEA inspectors found no "
        "evidence to support it.",
        "Ambasadorul rus a declarat că Ucraina pregătește o provocare chimică. Diplomatul nu a "
        "oferit detalii despre sursa acestor informații, iar experții OPCW au respins acuzația.",
    ],
)
def test_a_plan_left_without_a_detail_is_no_unsourced_claim(text: str) -> None:
    assert claims_score(text) < FLAGGED


def test_a_warranty_and_an_invoice_are_no_bill_pressed_on_the_reader() -> None:
    assert "pressure" not in kinds("Prețurile includ TVA, garanție 24 de luni și factură pe firmă.")
    assert "pressure" in kinds("Aveți o restanță de 218 lei la factura de energie. Plătiți azi.")


# Learned from set KK once it joined dev (after it had been measured held out).


@pytest.mark.parametrize(
    ("host", "flagged"),
    [
        ("ezpass-tolls.help", True),
        ("e-zpass-toll-pay.com", True),
        ("sunpass-tollservices.com", True),
        ("ezpassnj.com", False),
        ("www.e-zpassny.com", False),
        ("sunpass.com", False),
    ],
)
def test_the_toll_agencies_of_the_unpaid_toll_texts_are_protected(host: str, flagged: bool) -> None:
    assert (assess_host(host).risk >= FLAGGED) is flagged


def test_a_shortened_link_asking_to_unlock_an_account_is_a_request() -> None:
    lure = (
        "PayPal: Your account has been limited. Verify your identity within 24 hrs to avoid "
        "permanent suspension: bit.ly/3PpLmt9"
    )
    assert assess_domains(lure, None).score >= FLAGGED
    assert (
        assess_domains("Create an account to save your favourites: bit.ly/3PpLmt9", None).score
        < FLAGGED
    )
    assert assess_domains("Our report is out, read it here: bit.ly/3PpLmt9", None).score < FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        "At Saturday's rally the senator claimed that 'illegal immigrants are voting by the "
        "millions,' without offering evidence.",
        "Ceaiul de păpădie vindecă diabetul, eliminând necesitatea insulinei.",
        "Dandelion tea is a complete cure for type 1 diabetes, eliminating the need for insulin.",
    ],
)
def test_a_claim_left_without_evidence_and_a_treatment_made_needless_are_claims(text: str) -> None:
    assert claims_score(text) >= FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        "The senator claimed the bill would pass, citing three committee votes.",
        "Nu există încă o vindecare completă a diabetului de tip 1; insulina rămâne esențială.",
        "Noul sistem elimină necesitatea hârtiei la ghișeu, spune primăria.",
    ],
)
def test_a_sourced_claim_a_cure_denied_and_a_paperless_desk_are_no_claims(text: str) -> None:
    assert claims_score(text) < FLAGGED
