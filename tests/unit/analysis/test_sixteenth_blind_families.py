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
    ],
)
def test_a_brand_exact_name_under_a_typed_or_cheap_suffix_still_imitates(host: str) -> None:
    assert assess_host(host).risk >= FLAGGED


def test_regional_suffixes_are_countries_but_not_the_typo_ones() -> None:
    assert regional_suffix("co.uk") and regional_suffix("me") and regional_suffix("ro")
    assert not regional_suffix("co") and not regional_suffix("com") and not regional_suffix("cm")
    assert not regional_suffix("com.co")  # Colombia's .com: .co again


@pytest.mark.parametrize(
    ("host", "flagged"),
    [
        ("ee-billing-support.com.co", True),  # EE and O2, short names, beside a lure
        ("o2-payment-update.com", True),
        ("ee.co.uk", False),
        ("o2.co.uk", False),
        ("coffee-shop.com", False),  # "ee" inside a word is no name
        ("o2-arena-tickets.com", False),
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
        ("pension-protect-uk.click", True),  # elsewhere a cheap name passing as national
        ("heating-support-uk.xyz", True),
    ],
)
def test_a_country_in_a_shops_name_is_where_it_sells(host: str, flagged: bool) -> None:
    assert (assess_host(host).risk >= FLAGGED) is flagged


@pytest.mark.parametrize(
    ("text", "flagged"),
    [
        ("Verifică aici dacă ești eligibil 👉 bit.ly/alocatie-2025-ro", True),
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
    """ "Platforme precum Ghișeul.ro" names the site as Romanians write it (read 80 before);
    with a path it is a link and read as what it is."""
    prose = "Platforme precum Ghișeul.ro au simplificat plata taxelor."
    assert assess_domains(prose).score < FLAGGED
    assert assess_domains("Plătiți aici: ghișeul.ro/amenzi").score >= FLAGGED


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
