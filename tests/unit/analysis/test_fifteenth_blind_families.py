"""Forms grown in the fifteenth round of issue 19, from two sets written blind (voices of
figures and institutions: statistics, budgets, pensions, taxes, bills; and the links and hosts
people meet in messages, e-mails and posts), measured as written, then tuned on; both sets
were lost with a machine's scratch space before they could join the evaluation set. Each
form is checked on hosts and sentences written for this test, beside hosts sharing their
shape that must stay as they were."""

import pytest

from tests.unit.analysis.probes import FLAGGED
from workers.analysis.domains import assess_domains, assess_host, posing_domain
from workers.analysis.registrable import host_parts


@pytest.mark.parametrize(
    ("host", "posed"),
    [
        ("dvla.co.uk.vehicle-tax-renew.click", "dvla.co.uk"),  # a country's second level
        ("www.brd.com.ro.securitate-online.com", "brd.com.ro"),
        ("digi24.ro.stiri-ultima-ora.xyz", "digi24.ro"),  # a country code on a cheap TLD
        ("moneyweek.co.crypto-gains.top", "moneyweek.co"),
    ],
)
def test_a_domain_with_a_country_suffix_set_before_another_is_risky(host: str, posed: str) -> None:
    """The reader sees "dvla.co.uk" and the link goes to vehicle-tax-renew.click."""
    assessment = assess_host(host)
    assert assessment.risk >= FLAGGED
    assert any(posed in reason for reason, _ in assessment.reasons)


@pytest.mark.parametrize(
    "host",
    [
        "shop.ro.example.com",  # a country subdomain on an ordinary TLD: a language site
        "help.uk.example.org",
        "ro.example.xyz",  # a language subdomain alone, even on a cheap TLD
        "news.ro.example.xyz",  # "news" is a TLD itself: no name before the code
        "news.bbc.co.uk",
        "www.gov.ro",
    ],
)
def test_country_subdomains_and_real_country_domains_pose_as_nothing(host: str) -> None:
    parts = host_parts(host)
    cheap = host.endswith(".xyz")
    assert parts is None or posing_domain(parts, cheap) is None


@pytest.mark.parametrize(
    "host",
    [
        "gov-heating-grants.org.uk",
        "counciltax-rebate-gov.com",
        "guvern-ajutor-energie.com",
        "govt-refunds.uk.com",
    ],
)
def test_a_government_word_outside_government_domains_poses_as_one(host: str) -> None:
    assert assess_host(host).risk >= FLAGGED


@pytest.mark.parametrize(
    "host",
    [
        "www.gov.uk",
        "anaf.gov.ro",
        "www.irs.gov",
        "governance-institute.org",
        "gouvernail.fr",
        "www.gov.wales",  # the word alone is the name: another country's government
        "www2.gov.bc.ca",
        "mpass.gov.md",
        "e-gov.ro",  # a compound that offers nothing
        "gov-tech.ro",
        "open-gov-partnership.org",
        "digital-gov-summit.com",
    ],
)
def test_government_domains_and_words_that_merely_start_so_stay_low(host: str) -> None:
    assert assess_host(host).risk < FLAGGED


@pytest.mark.parametrize(
    "host",
    [
        "heating-support-uk.click",  # a country as a token of a cheap domain's name
        "credite-rapide-ro.xyz",
        "pensii-recalculate.top",  # pensions, discounts, grants, auctions as bait words
        "reduceri-nebune.icu",
        "solar-grants-now.xyz",
        "licitatii-colete.shop",
    ],
)
def test_cheap_domains_named_as_a_national_service_or_a_bargain_are_risky(host: str) -> None:
    assert assess_host(host).risk >= FLAGGED


@pytest.mark.parametrize(
    "host",
    [
        "uk.xyz",  # the country alone is the whole name
        "reduceri-haine.ro",  # one bait word off a cheap TLD: a shop's own name
        "pensii-private.ro",
        "discount-tyres.co.uk",
        "ro.example.com",
    ],
)
def test_bargains_and_countries_on_ordinary_domains_stay_low(host: str) -> None:
    assert assess_host(host).risk < FLAGGED


@pytest.mark.parametrize(
    "host",
    ["cec-bank-romania-actualizare.com", "posta-romana-colete-retur.com", "wells-fargo-alerts.net"],
)
def test_a_brand_name_written_as_two_words_among_others_is_an_imitation(host: str) -> None:
    reasons = [r for r, _ in assess_host(host).reasons]
    assert any(r.startswith("imitates") for r in reasons), reasons


@pytest.mark.parametrize(
    "host", ["posta-romana.ro", "www.postaromana.ro", "post-office-romania.org.uk"]
)
def test_the_real_domain_and_other_words_beside_each_other_stay_low(host: str) -> None:
    assert assess_host(host).risk < FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        "They deleted it twice, mirror here: https://bit.ly/vaccine-truth-leak",
        "Lidl dă vouchere de 300 de lei de Paște! https://tinyurl.com/lidl-voucher-paste",
        "Claim yours before midnight https://cutt.ly/netflix-free-year",
    ],
)
def test_a_shortener_whose_address_names_a_brand_or_bait_is_risky(text: str) -> None:
    """The sender wrote those words into the short address; a random slug has none. Two
    signs are needed (a brand, bait, alarm or sign-in words, "free")."""
    assert assess_domains(text).score >= FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        "Slides from today's talk: https://bit.ly/3kQz7Wm",
        "Rețeta completă aici: https://bit.ly/supa-de-pui-bunica",
        "Registration form for the school fair: https://tinyurl.com/spring-fair-2025",
        # one sign alone: an honest page's address
        "Ghidul complet: https://bit.ly/ghid-pensie-2025",
        "Lista noastră: https://bit.ly/cadou-nunta",
        "Cum puteți dona: https://bit.ly/ajutor-inundatii",
        "Știrile zilei: https://bit.ly/stiri-locale",
        "Catalogul săptămânii: https://bit.ly/kaufland-oferte",
    ],
)
def test_a_shortener_with_a_random_or_ordinary_address_stays_below_flagged(text: str) -> None:
    assert assess_domains(text).score < FLAGGED


@pytest.mark.parametrize(
    ("host", "risk"),
    [
        ("track.dpd.co.uk", 0),  # DPD's own UK domain
        ("www.vinted.ro", 0),
        ("www.tvlicensing.co.uk", 0),
        ("www.ofgem.gov.uk", 0),
        ("vinted-plata-sigura.com", 80),
        ("tvlicensing-refund.net", 80),
    ],
)
def test_the_brands_added_this_round_own_their_domains_and_are_protected(
    host: str, risk: int
) -> None:
    assert assess_host(host).risk == risk
