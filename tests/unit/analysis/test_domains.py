"""Domains: the shipped source list, lookalikes, shorteners, IP hosts, risky TLDs."""

import pytest

from workers.analysis.domains import (
    assess_domains,
    assess_host,
    edit_distance,
    extract_hosts,
    report_data,
)


def test_hosts_come_from_the_url_and_from_the_text() -> None:
    """URLs, www. links and bare domains are found; emails and file names are not hosts."""
    text = (
        "Vezi https://www.Digi24.ro/stiri?id=1, www.rt.com și hotnews.ro. "
        "Scrie la a@b.com, file.txt"
    )
    assert extract_hosts(text, "https://agerpres.ro/x") == [
        "agerpres.ro",
        "digi24.ro",
        "rt.com",
        "hotnews.ro",
    ]


@pytest.mark.parametrize(
    ("host", "category", "risky"),
    [
        ("agerpres.ro", "reliable", False),
        ("factual.ro", "fact-checker", False),
        ("rt.com", "state-propaganda", True),
        ("ro.sputnik.md", "state-propaganda", True),
        ("infowars.com", "unreliable", True),
    ],
)
def test_listed_domains_and_their_subdomains_take_their_category(
    host: str, category: str, risky: bool
) -> None:
    """A listed domain (or a subdomain of one) gets the category's risk."""
    assessment = assess_host(host)
    assert assessment.category == category
    assert (assessment.risk >= 50) is risky


@pytest.mark.parametrize(
    "host",
    [
        "digi24-ro.stiri-live.xyz",  # listed name with dashes inside another domain
        "digi24.ro.breaking.com",  # listed domain as a subdomain of another
        "reuters.co",  # same name, other suffix
        "reutres.com",  # one transposition off
        "xn--dgi24-n2e.ro",  # Cyrillic і in punycode
        "hotnevvs.ro",  # vv for w
        "reuters-breaking.com",  # listed name with added words
    ],
)
def test_lookalikes_of_listed_domains_score_high(host: str) -> None:
    """Hosts imitating a listed domain are flagged with the domain they imitate."""
    assessment = assess_host(host)
    assert assessment.risk >= 75
    assert any(reason.startswith("imitates") for reason, _ in assessment.reasons)


def test_unicode_homoglyph_in_text_is_caught() -> None:
    """A Cyrillic letter in a domain written in the text is converted and flagged."""
    report = assess_domains("Citiți pe dіgi24.ro (i chirilic)")
    assert report.score >= 75
    assert report_data(report)["hosts"][0]["ascii"].startswith("xn--")


@pytest.mark.parametrize(
    ("text", "reason", "low", "high"),
    [
        ("http://203.0.113.7/news", "raw IP address", 50, 60),
        ("https://bit.ly/abc", "link shortener", 30, 40),
        ("https://news-today.xyz/a", "top-level domain .xyz", 30, 40),
        ("https://some-blog.example.com/a", "not in the source list", 10, 20),
    ],
)
def test_host_shapes_carry_their_risk(text: str, reason: str, low: float, high: float) -> None:
    """IP hosts, shorteners, abused TLDs and unknown hosts each get a bounded, explained risk."""
    report = assess_domains(text)
    assert low <= report.score <= high
    assert any(r.startswith(reason) for r, _ in report.hosts[0].reasons)


def test_no_domain_means_no_risk() -> None:
    """Text that names no URL or domain scores zero with an empty summary."""
    report = assess_domains("Guvernul a anunțat ieri noi măsuri.")
    assert report.score == 0.0
    assert report_data(report)["summary"] == []


def test_short_listed_names_are_not_matched_by_typo_distance() -> None:
    """ "at.com" is one edit from "rt.com" but short names collide by chance, so no lookalike."""
    assert not any(r.startswith("imitates") for r, _ in assess_host("at.com").reasons)


def test_summaries_exist_in_both_languages() -> None:
    """Each risky host is summarised in English and Romanian."""
    data = report_data(assess_domains("https://bit.ly/x și rt.com"))
    assert data["summary"][0] == "rt.com: state propaganda outlet"
    assert data["summary_ro"][0] == "rt.com: canal de propagandă de stat"
    assert "scurtător" in data["summary_ro"][1]


def test_edit_distance() -> None:
    """Insertions, deletions, substitutions and neighbour swaps each count one."""
    assert edit_distance("reuters", "reutres") == 1
    assert edit_distance("reuters", "reuter") == 1
    assert edit_distance("digi24", "digi25") == 1
    assert edit_distance("", "abc") == 3
