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
from workers.analysis.domains import assess_host
from workers.analysis.technique_context import quotes


@pytest.mark.parametrize(
    ("host", "flagged"),
    [
        # the names of charities and aid agencies on hosts of their own
        ("crucearosie-donatii.top", True),
        ("crucea-rosie-ajutor.com", True),
        ("redcross-ukraine-help.com", True),
        ("unicef-donate.org", True),
        ("unhcr-donations.net", True),
        ("msf-donatii.xyz", True),
        ("salvati-copiii-donatii.com", True),
        ("unlcef.org", True),
        # their real sites, national societies and subdomains
        ("crucearosie.ro", False),
        ("redcross.org.uk", False),
        ("redcross.ie", False),
        ("donate.unicef.org", False),
        ("icrc.org", False),
        ("www.msf.org", False),
        ("salvaticopiii.ro", False),
        # words that only start like one
        ("msfocus.com", False),
        ("donate.wikimedia.org", False),
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
        "Nicio televiziune nu are voie să pomenească asta.",
        "You will never hear this on the news.",
        "You won't hear about it in the mainstream media, of course.",
        "Ask yourself why no journalist is allowed to mention it.",
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
        "I never watch the news anymore.",
        "If you can't see the news feed, refresh the page.",
        "You may not have heard this on the news, but the bridge reopens on Monday.",
        "No journalists were allowed into the hearing.",
    ],
)
def test_the_news_not_seen_or_not_watched_is_no_cover_up(text: str) -> None:
    assert "conspiracy" not in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "Alegerile au fost anulate la comanda Bruxelles-ului, iar dovezile au fost fabricate.",
        "The referendum was rigged and organised by Brussels; the observers were all on the "
        "payroll.",
        "The evidence was fabricated in two nights.",
    ],
)
def test_orders_from_outside_and_evidence_made_up_are_conspiracy_framing(text: str) -> None:
    assert "conspiracy" in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "Comanda a fost livrată la Bruxelles luni.",
        "The conference in Brussels was organised by the university.",
        "Police said the evidence was handed over to the court.",
        "Everyone on the payroll gets the bonus in December.",
    ],
)
def test_brussels_an_order_or_evidence_alone_is_no_conspiracy(text: str) -> None:
    assert "conspiracy" not in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "Sweden's crime rate went up 300% after it let the migrants in.",
        "Infracționalitatea a crescut cu 300% după ce au venit migranții.",
    ],
)
def test_a_rise_in_crime_laid_at_a_groups_arrival_is_collective_blame(text: str) -> None:
    assert "collective_blame" in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "Crime went up after the pandemic as people lost their jobs.",
        "Violent crime has risen since 2019 among young people, the report says.",
        "Violența a crescut după pandemie, când oamenii și-au pierdut locurile de muncă.",
    ],
)
def test_a_rise_in_crime_with_another_cause_blames_no_group(text: str) -> None:
    assert "collective_blame" not in kinds(text)


def test_a_forwards_label_makes_its_quote_the_message_itself() -> None:
    """WhatsApp's "Forwarded many times:" heads the message passed on: its call to share is
    the text's own, not a report's quote. A report of a forward keeps its quote."""
    forwarded = (
        "Forwarded many times: 'My friend works at the border. From Monday all cars with "
        "foreign plates will be confiscated. Tell everyone you know.'"
    )
    assert "urgency" in kinds(forwarded)
    assert quotes("redirectionat de multe ori: „prietenul meu lucreaza la vama.”") == []
    reported = (
        "A message forwarded many times on WhatsApp reads: 'From Monday all cars with "
        "foreign plates will be confiscated. Tell everyone you know.' Police say it is false."
    )
    assert "urgency" not in kinds(reported)


@pytest.mark.parametrize(
    "text",
    [
        "De luni se închid toate benzinăriile! Spuneți la toată lumea!",
        "Avertizați-i pe toți: de luni se închid toate benzinăriile.",
    ],
)
def test_telling_everyone_is_a_call_to_act_in_romanian(text: str) -> None:
    """As "tell everyone!" and "warn everyone": not a plea passed on ("Spuneți la toți, vă
    rog!" for a lost cat, the fourteenth round's test)."""
    assert "urgency" in kinds(text)


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
    ],
)
def test_a_plan_left_without_a_detail_is_no_unsourced_claim(text: str) -> None:
    assert claims_score(text) < FLAGGED


def test_a_warranty_and_an_invoice_are_no_bill_pressed_on_the_reader() -> None:
    assert "pressure" not in kinds("Prețurile includ TVA, garanție 24 de luni și factură pe firmă.")
    assert "pressure" in kinds("Aveți o restanță de 218 lei la factura de energie. Plătiți azi.")
