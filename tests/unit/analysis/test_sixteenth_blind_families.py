"""Forms grown in the sixteenth round of issue 19, after two more sets written blind (ids
`*-dd-*`, voices of public bodies: benefits, pensions, grants, taxes, councils, regulators;
`*-ee-*`, the links and hosts of everyday messages: couriers, banks, marketplaces, telecoms,
fines, shorteners), measured as written on the fifteenth round's code, then tuned on. Each
is checked on hosts and sentences written for this test (none is in the evaluation set),
beside hosts sharing their shape that must stay as they were."""

import pytest

from tests.unit.analysis.probes import FLAGGED
from workers.analysis.domains import assess_domains, assess_host, extract_hosts
from workers.analysis.lookalikes import regional_suffix


@pytest.mark.parametrize(
    "host", ["monzo.me", "airbnb.co.uk", "paypal.de", "netflix.ro", "booking.com.ro"]
)
def test_a_brand_exact_name_under_a_country_suffix_is_its_regional_site(host: str) -> None:
    """A brand's own name under a country's suffix is most often its own site there (a
    Monzo payment link, Airbnb UK): not a look-alike without another sign."""
    assert assess_host(host).risk < FLAGGED


@pytest.mark.parametrize(
    "host",
    [
        "lloydsbank.co",  # .co typed for .com: the classic typo-squat
        "paypal.com.co",
        "amazon.tk",  # an abused TLD is a sign
        "paypal.xyz",
        "airbnb-payments.co.uk",  # with a lure, a country suffix changes nothing
        "paypal.pw",  # country codes sold as generic suffixes are no region
        "coinbase.pw",
        "binance.cc",
        "netflix.cc",
        "monzo.io",
        "paypal.ru",  # nor where look-alikes are registered in bulk
    ],
)
def test_a_brand_exact_name_under_a_typed_or_cheap_suffix_still_imitates(host: str) -> None:
    assert assess_host(host).risk >= FLAGGED


def test_regional_suffixes_are_countries_but_not_the_typo_or_generic_ones() -> None:
    assert regional_suffix("co.uk") and regional_suffix("de") and regional_suffix("ro")
    assert not regional_suffix("co") and not regional_suffix("com") and not regional_suffix("cm")
    assert not regional_suffix("com.co")  # Colombia's .com: .co again
    assert not regional_suffix("me") and not regional_suffix("io") and not regional_suffix("ru")


@pytest.mark.parametrize(
    ("host", "flagged"),
    [
        ("ee-billing-support.com.co", True),  # EE and O2, short names, beside a lure
        ("o2-payment-update.com", True),
        ("ee.co.uk", False),
        ("o2.co.uk", False),
        ("coffee-shop.com", False),  # "ee" inside a word is no name
        ("o2-arena-tickets.com", False),
        ("o2online.de", False),  # two letters run together with a lure: too common
        ("o2online.es", False),
        ("eenews.net", False),
        ("eeweb.com", False),
        ("rayban-uk-outlet.shop", True),  # the brands counterfeit shops borrow
        ("nike-outlet.shop", True),
        ("ray-ban.com", False),
        ("nike.com", False),
    ],
)
def test_telecoms_and_counterfeited_brands_are_protected(host: str, flagged: bool) -> None:
    assert (assess_host(host).risk >= FLAGGED) is flagged


@pytest.mark.parametrize(
    "host", ["anaf-restituiri.info", "anaf-restituirea.ro", "anaf-restituirile.com"]
)
def test_a_romanian_noun_in_ire_inflects_as_a_lure(host: str) -> None:
    """ "Restituire" (a refund) in its plural and articled forms, as "rambursare" before."""
    assert assess_host(host).risk >= FLAGGED


@pytest.mark.parametrize(
    ("host", "flagged"),
    [
        ("flexijoint-uk.shop", False),  # a shop's TLD: the country says where it sells
        ("ketoslim-forte-romania.store", False),
        ("reduceri-haine.shop", False),  # and its discounts and vouchers are its business
        ("discount-anvelope.shop", False),
        ("vouchere-spa.shop", False),
        ("romania-travel.online", False),  # a country beside no service's word
        ("uk-weather.online", False),
        ("eu-startups.site", False),
        ("ajutor-teme.online", False),  # aid words are no bait alone
        ("pension-protect-uk.click", True),  # a cheap name passing as a national service
        ("heating-support-uk.xyz", True),
        ("plata-colet-uk.shop", True),  # bait other than a shop's still counts there
    ],
)
def test_a_country_in_a_shops_name_is_where_it_sells(host: str, flagged: bool) -> None:
    assert (assess_host(host).risk >= FLAGGED) is flagged


@pytest.mark.parametrize(
    ("text", "flagged"),
    [
        ("Verifică-ți contul aici 👉 bit.ly/login-verificare-cont", True),
        ("Full details: tinyurl.com/kaufland-voucher-500", True),
        ("Programul e pe bit.ly/festival-cluj-2025", False),
        ("Detalii pe anaf.ro/servicii-online.", False),
    ],
)
def test_a_bare_host_with_a_path_is_a_link_and_its_path_is_read(text: str, flagged: bool) -> None:
    """Written without a scheme, a host with a path is still typed to be followed: a
    shortener's words are read there as in a link with its scheme."""
    assert (assess_domains(text).score >= FLAGGED) is flagged


def test_a_brands_name_in_romanian_letters_in_prose_is_the_brand_named() -> None:
    """ "Platforme precum Ghișeul.ro" names the site as Romanians write it, with a capital
    (read 80 before); in lower case, or with a path, it is a host to follow and read as
    what it is."""
    prose = "Platforme precum Ghișeul.ro au simplificat plata taxelor."
    assert assess_domains(prose).score < FLAGGED
    assert assess_domains("Plătiți aici: ghișeul.ro/amenzi").score >= FLAGGED
    assert assess_domains("Achitați în 24h pe ghișeul.ro sau veți fi executat.").score >= 50
    assert assess_domains("Plătiți taxa pe posta-romană.ro azi.").score >= FLAGGED


@pytest.mark.parametrize(
    "text", ["Please find invoice.zip attached", "The clip is promo.mov, 20 MB", "payment.zip"]
)
def test_a_file_name_on_an_abused_tld_is_no_host(text: str) -> None:
    """.zip and .mov are file extensions too: read as hosts only in a link with a scheme."""
    assert extract_hosts(text) == []
    assert assess_domains("Download https://invoice.zip/login now").score >= FLAGGED


@pytest.mark.parametrize(
    ("text", "host"),
    [
        (
            "Pay now: royalmail.parcel-fee.uk-redelivery.help'.",
            "royalmail.parcel-fee.uk-redelivery.help",
        ),
        ("Go to dvla-refund.support today", "dvla-refund.support"),
        ("Detalii: plata-colet.cyou acum", "plata-colet.cyou"),
    ],
)
def test_bare_hosts_on_the_tlds_of_lures_are_found(text: str, host: str) -> None:
    """Hosts written without a scheme on every abused TLD (and .help, .support…) are read."""
    assert extract_hosts(text) == [host]
    assert assess_domains(text).score >= FLAGGED


@pytest.mark.parametrize(
    ("host", "flagged"),
    [
        ("quick-cash-uk.icu", True),  # a country on an abused TLD poses as a national offer
        ("sunfix-max-ro.top", True),
        ("bitcoin-profit-romania.site", True),  # on a word TLD beside a money word
        ("energy-support-uk.online", True),  # or a service's word
        ("garden-club-uk.online", False),  # a country beside other words on a word TLD
        ("romania-hiking.site", False),
        ("ro.xyz", False),  # the country alone is no name
    ],
)
def test_a_country_in_a_cheap_domain_poses_as_a_national_offer(host: str, flagged: bool) -> None:
    """A cheap domain naming a country passes for a national service or offer; on the TLDs
    that are ordinary words small honest sites name their country too, so there it needs a
    service's or a money word beside it."""
    assert (assess_host(host).risk >= FLAGGED) is flagged


@pytest.mark.parametrize(
    ("host", "flagged"),
    [
        ("heating-subsidy-2026.online", True),  # help with heating offered on a cheap name
        ("ajutor-caldura-iarna.xyz", True),
        ("ajutor-meditatii.online", False),  # help alone is an honest name (tutoring help)
        ("energy-drinks.online", False),
    ],
)
def test_help_with_heating_on_a_cheap_domain_offers_aid(host: str, flagged: bool) -> None:
    assert (assess_host(host).risk >= FLAGGED) is flagged


@pytest.mark.parametrize(
    ("text", "flagged"),
    [
        ("Secretul e aici 👉 bit.ly/ulei-minune-artrita", True),  # a miracle names it alone
        ("Full story: tinyurl.com/leaked-lab-files", True),
        ("Apply before Friday: bit.ly/grant-uk-2026", True),  # bait and a country: two signs
        ("Our gift exchange: bit.ly/secret-santa-office", False),  # honest words alone
        ("Trip notes: bit.ly/romania-hiking-2026", False),
    ],
)
def test_a_shortened_address_naming_a_cure_or_a_leak_is_risky(text: str, flagged: bool) -> None:
    assert (assess_domains(text).score >= FLAGGED) is flagged
