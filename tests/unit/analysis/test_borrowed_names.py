"""A host that borrows the name the message gives (workers/analysis/borrowed_names.py): the
shop, lab, party or office a lure names, set in front of a selling or asking word. Texts
written for this test (none is in the evaluation set), in Romanian and English, beside
texts sharing their words that must stay as they were."""

import time

import pytest

from workers.analysis import domains
from workers.analysis.borrowed_names import written_names

BORROWED = domains.BORROWED_REASON


def borrowing(text: str, url: str | None = None) -> list[str]:
    report = domains.assess_domains(text, url)
    return [r for h in report.hosts for r, _ in h.reasons if r.startswith(BORROWED)]


def score(text: str, url: str | None = None) -> float:
    return domains.assess_domains(text, url).score


@pytest.mark.parametrize(
    "text",
    [
        # a shop's name on a cheap TLD posing as its outlet, or with a country off a shop's TLD
        "CLEARANCE: Breville Barista Pro at £49. Order now 👉 breville-uk-outlet.shop",
        "Husqvarna robot mowers, 80% off while stock lasts: husqvarna-official.store",
        "Dyson's biggest clearance ever: dyson-outlet.shop",
        "Medicamentul Wegovy fără rețetă, livrare în 24h: wegovy-romania.online",
        # a lab, a bank, an office, with a word that asks for a sign-in or money, on any TLD
        "Regina Maria: rezultatele analizelor expiră în 12 ore: reginamaria-rezultate.live",
        "Labour: your membership lapsed. Renew today at labour-membership-pay.com",
        "Biroul Electoral Central: confirmați înscrierea la electoral-confirmare.com",
        "Tata: am câștigat un telefon de la Orange, plătesc transportul pe orange-premii.net",
        # two words of the message run together
        "Green Valley Farms is giving away hampers: greenvalley-giveaway.com",
        # the name set over another's domain, as the subdomain next to it
        "AIB: a payment of EUR 1,950 is scheduled. Cancel at aib-ie.secure-review.info",
        "Vodafone: factura nu a fost plătită, achitați pe vodafone.plata-factura.com",
        # the name's foreign letter in the host: Árgos read as argos
        "Argos is clearing its last consoles: https://árgos-clearance.shop/ps5",
    ],
)
def test_a_host_borrowing_the_messages_name_beside_a_lure_word_is_risky(text):
    assert borrowing(text), domains.assess_domains(text)
    assert score(text) >= 50


@pytest.mark.parametrize(
    "text",
    [
        # a coined product's own shop: the analyser does not judge a shop by its goods
        "SlimFit Forte arde grăsimea: comandă pe slimfit-forte-romania.shop",
        "GlowDerm serum, official store: glowderm-official.shop",
        "KETOSLIM FORTE arde grăsimea: https://ketoslim-forte-romania.shop/comanda",
        # a country on a shop's TLD says where it sells
        "Flexijoint rebuilds cartilage in weeks: https://flexijoint-uk.shop",
        # the name only in the host, or written in lower case
        "order at breville-uk-outlet.shop today",
        "visit Breville-uk-outlet.shop today",
        # a country is nobody's name
        "Romania travel tips and itineraries: romania-travel.online",
        "UK weather, hour by hour: uk-weather.online",
        # the words an honest outlet, shop or campaign names itself with
        "Cambridge News: the A14 is closed tonight, details at https://www.cambridge-news.co.uk/news",
        "ABC 7 News: live updates at abc7news.com",
        "People's Vote march on Saturday: sign up at peoples-vote.uk",
        "Crumbs Bakery: cakes to order at crumbs-online.shop",
        "Hobbs & Hound: dog beds in our spring sale at hobbs-store.online",
        "Atelierul Mara: genți lucrate manual pe mara-magazin.online",
        "Read the Guardian's long read: guardian-longreads.com",
        "Taylor's bakery has a new branch: taylors-bakery-leeds.co.uk",
        "Dedeman: catalogul lunii pe dedeman-oferte.ro",
        # a name over a platform's domain, which asks nothing
        "Acme Gazette: our latest issue is at https://acme-news.wordpress.com",
        "Vlad Dumitrescu scrie săptămânal pe vlad-news.substack.com",
        "Acme's status page: acme.statuspage.io",
        "Cursurile Moodle sunt pe moodle.upb.ro",
        # a host that is no name: this machine
        "Acme: sign in at http://acme-login.localhost:8080/",
    ],
)
def test_a_name_not_borrowed_or_borrowed_for_nothing_is_no_sign(text):
    assert not borrowing(text)


def test_names_are_words_written_as_names_single_and_in_pairs():
    names = written_names("Vouchers from Green Valley Farms and QUANTUM AI; see KetoSlim, Dyson's.")
    assert {"green", "valley", "farms", "greenvalley", "valleyfarms"} <= names
    assert "quantumai" in names  # two capitals side by side
    assert "ketoslim" not in names  # a coined name, a capital inside
    assert "dyson" in names and "dysons" not in names  # the possessive dropped
    assert "vouchers" in names and "from" not in names


def test_the_reason_is_told_in_romanian_too():
    text = "Synevo: rezultatele dvs. sunt gata: https://synevo-rezultate.live/acces"
    data = domains.report_data(domains.assess_domains(text))
    assert any("împrumută un nume dat în mesaj (synevo)" in s for s in data["summary_ro"])


def test_names_are_read_from_the_first_words_only():
    """The names are read from the first MAX_WORDS words: a name written only past them is
    not read, so a text of any length costs one bounded read of names."""
    early = "Breville clearance " + "more words here " * 2_000 + "breville-uk-outlet.shop"
    late = "more words here " * 2_000 + "Breville clearance: breville-uk-outlet.shop"
    assert borrowing(early)
    assert not borrowing(late)
    started = time.process_time()
    written_names("Breville Barista " * 200_000)
    assert time.process_time() - started < 5  # a bound on runaway cost, not a benchmark
