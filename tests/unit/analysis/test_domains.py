"""Domains: the shipped source list, lookalikes, shorteners, IP hosts, risky TLDs."""

import pytest

from workers.analysis.domains import (
    MAX_CANDIDATES,
    MAX_HOSTS,
    SHORTENER_SLUG_REASON,
    assess_domains,
    assess_host,
    edit_distance,
    extract_hosts,
    ip_address_of,
    is_dns_name,
    posing_domain,
    report_data,
    shortener_request,
)
from workers.analysis.registrable import host_parts


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
        ("https://goo.gl/abc", "link shortener", 30, 40),  # a brand's shortener too
        ("https://pixel-garden.xyz/a", "top-level domain .xyz", 30, 40),
        # a news site that needs no outlet to borrow, on a cheap TLD
        ("https://news-today.xyz/a", "a name made of bait words", 65, 75),
        ("https://stiri-adevarate-azi.top/a", "a name made of bait words", 65, 75),
        # not inside a longer word: a newsroom or a newsletter on a cheap TLD is only that
        ("https://newsroom.live/a", "top-level domain .live", 30, 40),
        ("https://breakingviews.online/a", "top-level domain .online", 30, 40),
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


@pytest.mark.parametrize(
    ("url", "address"),
    [
        ("http://127.0.0.1/x", "127.0.0.1"),
        ("http://2130706433/x", "127.0.0.1"),
        ("http://0x7f000001/x", "127.0.0.1"),
        ("http://0x7f.0.0.1/x", "127.0.0.1"),
        ("http://0177.0.0.1/x", "127.0.0.1"),
        ("http://0x7F.1/x", "127.0.0.1"),
        ("http://127.1/x", "127.0.0.1"),
        ("http://10.1.1/x", "10.1.0.1"),
        ("http://[::1]:8080/x", "::1"),
        ("http://[2001:db8::7]/x", "2001:db8::7"),
        ("http://[::ffff:127.0.0.1]/x", "::ffff:7f00:1"),
    ],
)
def test_raw_ip_hosts_are_flagged_in_every_notation(url: str, address: str) -> None:
    """Dotted, decimal, hex, octal, short and bracketed IPv6 hosts are raw IPs, named plainly."""
    report = assess_domains("", url)
    assert report.score == 55
    assert report.hosts[0].reasons == ((f"raw IP address ({address})", 55.0),)


@pytest.mark.parametrize(
    ("url", "address"),
    [
        ("http://[::1]:8080/admin", "::1"),
        ("http://[::ffff:127.0.0.1]/", "::ffff:7f00:1"),
        ("http://2130706433/x", "127.0.0.1"),
    ],
)
def test_raw_ip_links_written_in_the_text_are_flagged_too(url: str, address: str) -> None:
    """The same hosts inside the text (IPv6 in brackets included) are found and flagged as in
    the url field; the brackets used to end the link before its host."""
    report = assess_domains(f"Visit {url} now, before it is gone.", None)
    assert report.score == 55
    assert report.hosts[0].reasons == ((f"raw IP address ({address})", 55.0),)


@pytest.mark.parametrize("url", ["http://localhost:8000/admin", "https://api.localhost/x"])
def test_localhost_is_flagged_like_a_raw_ip(url: str) -> None:
    """`localhost` and its subdomains name this machine: flagged like a raw IP."""
    reasons = assess_domains("", url).hosts[0].reasons
    assert reasons[0][0].startswith("raw IP address (localhost")
    assert reasons[0][1] == 55


@pytest.mark.parametrize("host", ["1.2.3.4.5", "0x7g.0.0.1", "127.0.0.256", "08.1.1.1", "1.2.com"])
def test_names_that_only_look_numeric_are_not_ips(host: str) -> None:
    """Five parts, bad hex or octal digits, an overflowing part or a suffix: not an address."""
    assert ip_address_of(host) is None


def test_a_host_longer_than_dns_allows_is_flagged_and_shown_short() -> None:
    """A 4,900-character label is an impossible name: flagged, shown cut, never compared."""
    report = assess_domains(" ".join(f"https://{'a' * 4900}{i}.com/x" for i in range(20)))
    assert len(report.hosts) == MAX_HOSTS
    for host in report.hosts:
        assert host.reasons == (("host name longer than DNS allows", 55.0),)
        assert len(host.display) <= 80
    assert "mai lung decât permite DNS" in report_data(report)["summary_ro"][0]


def test_a_long_host_of_short_labels_is_flagged() -> None:
    """A name over 253 characters is impossible even when each label is short."""
    host = ".".join(["abcdefgh"] * 40) + ".ro"
    assert not is_dns_name(host)
    assert assess_host(host).reasons[0][0] == "host name longer than DNS allows"


def test_a_flood_of_links_is_read_up_to_a_bound() -> None:
    """Only the first MAX_CANDIDATES links are read: a host named after them is not reached."""
    text = "https://bit.ly/x " * (MAX_CANDIDATES + 5) + "https://rt.com/x"
    assert extract_hosts(text) == ["bit.ly"]


def test_hidden_and_fullwidth_characters_do_not_hide_a_host() -> None:
    """Zero-width characters inside a link and a fullwidth bare domain are still read."""
    assert extract_hosts("Citiți https://r\u200bt.com/x și ｓｐｕｔｎｉｋｎｅｗｓ．ｃｏｍ") == [
        "rt.com",
        "sputniknews.com",
    ]


@pytest.mark.parametrize(
    ("text", "url", "applicable", "evidence"),
    [
        ("Guvernul a anunțat ieri noi măsuri.", None, False, 0),
        ("Nothing here.", "https://agerpres.ro/x", True, 1),  # listed: known, score 0
        ("Nothing here.", "https://", True, 0),  # a url field without a host still applies
        ("Vezi https://some-blog.example.com/a", None, True, 0),  # unknown: no finding
        ("Vezi https://paypa1-secure-login.xyz/a", None, True, 3),  # cheap TLD, lookalike, bait
    ],
)
def test_data_says_whether_the_component_applies_and_how_much_evidence(
    text: str, url: str | None, applicable: bool, evidence: int
) -> None:
    """`applicable` is false only without any host or url field; `evidence_count` counts the
    findings behind the score, not the "not in the source list" default."""
    data = report_data(assess_domains(text, url))
    assert data["applicable"] is applicable
    assert data["evidence_count"] == evidence


@pytest.mark.parametrize(
    "host",
    [
        "5g-truth-now.xyz",  # one bait word is enough on a cheap TLD
        "free-gift-card.top",
        "colet-livrare-taxa.org",  # two in a name of three tokens, any TLD
        "energy-rebate-claim.net",
        "confirmare-plata-colet.com",
        "cadou-gratuit.click",
        "login.my-site.top",  # on a cheap TLD, a subdomain's words count too
        "verify-payment-center.net",
    ],
)
def test_a_name_assembled_from_bait_words_is_flagged(host):
    """Phishing and clickbait hosts no list knows, built from account, money, parcel or
    "hidden truth" words (English and Romanian): high risk, with the words named."""
    assessed = assess_host(host)
    assert assessed.risk >= 50
    assert any("bait words" in reason for reason, _ in assessed.reasons)


@pytest.mark.parametrize(
    "host",
    [
        "adevarul.ro",  # a newspaper: words only count as whole tokens of the name
        "plati.ro",
        "some-blog.example.com",
        "free-software.org",  # words too common in real names are not bait
        "free-cash-flow.com",
        "login-payments.com",  # two tokens only: a name too short to call assembled
        "account-security.mybank.ro",  # an organisation names its own subdomains
        "login.secure.free.fr",
        "my-cooking-blog.xyz",  # a cheap TLD without any bait word
        "login.microsoftonline.com",  # a brand's own domain is never judged by its words
        "posta-romana.ro",
    ],
)
def test_ordinary_names_and_brand_domains_are_not_bait(host):
    """Real sites stay below the flag: one bait word elsewhere than on a cheap TLD, two
    tokens only, no bait word, or a protected brand's own domain."""
    assert assess_host(host).risk < 50


def test_the_bait_reason_has_a_romanian_summary():
    """Readers of either language see why: the Romanian summary translates the reason."""
    data = report_data(assess_domains("Vezi https://cadou-premiu.click/x", None))
    assert data["summary_ro"] == [
        "cadou-premiu.click: nume compus din cuvinte-momeală (cadou, premiu) pe un domeniu ieftin"
    ]


@pytest.mark.parametrize(
    ("host", "posed"),
    [
        ("e-zpass.com-tollpay.icu", "e-zpass.com"),  # "com-" right after the name it poses
        ("mytax.gov-refund.info", "mytax.gov"),
        ("shop.com.pay-now.xyz", "shop.com"),  # a whole domain as the subdomain
        ("www.plata.net.factura-online.ro", "plata.net"),
    ],
)
def test_a_domain_name_set_before_another_domain_is_risky(host: str, posed: str) -> None:
    """The reader sees the first name, the link goes to the last: 70, the posed name said."""
    parts = host_parts(host)
    assert parts is not None and posing_domain(parts) == posed
    assessment = assess_host(host)
    assert assessment.risk >= 50
    assert any(posed in r for r, _ in assessment.reasons)


@pytest.mark.parametrize(
    "host",
    [
        "blog.de-bijenkorf.nl",
        "ro.wikipedia.org",
        "net-a-porter.com",
        "api.co-op.example.org",
        "shop.ro.example.com",  # country codes are language subdomains too
        "portal.uk.example.com",
        "cache.net-a-porter.com",  # co-, net-, info- start real names
        "online.co-operativebank.co.uk",
        "m.info-trafic.ro",
    ],
)
def test_suffix_words_in_ordinary_names_pose_as_nothing(host: str) -> None:
    parts = host_parts(host)
    assert parts is not None and posing_domain(parts) is None


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("Hi mum, new number, can u pay my rent, it's £940 https://is.gd/Qm4pLt", True),
        ("Buna mama, am o factura de 1.850 lei de platit azi: https://tinyurl.com/x1", True),
        ("Verify your card today or lose access https://bit.ly/3xYz", True),  # two words
        ("Mama, plătește te rog chiria azi, 900 lei https://cutt.ly/abc", True),  # folded
        ("Read the annual report: https://bit.ly/report-2024", False),
        ("Programul complet al festivalului: https://bit.ly/festival-cluj", False),
        ("I'm fine, thanks! see https://bit.ly/3abcXyz", False),  # ambiguous words left out
        ("Bill said hi https://bit.ly/abc", False),
        ("Apel la cod rosu de vant https://bit.ly/abc", False),
        ("Photos: https://bit.ly/3Pin7aB", False),  # a random slug holds no words
        ("Bitcoin hits $60k https://bit.ly/xyz", False),  # a sum alone asks nothing
    ],
)
def test_a_shortener_in_a_message_asking_to_pay_or_sign_in_is_risky(text: str, asks: bool) -> None:
    """A shortened link hides the page; in a message asking for money or a sign-in it is
    risky (60), elsewhere it keeps the shortener's own risk (35)."""
    assert shortener_request(text, default_words()) is asks
    report = assess_domains(text)
    assert (report.score >= 50) is asks


def test_a_shortener_slug_of_bait_words_is_risky_though_the_message_asks_too_little() -> None:
    """ "Pay here" is one request word, no request; the slug's own words (login, verify) are
    no request words either (a link's letters are left out), yet they say what the hidden
    page is: the shortener reads risky by its slug."""
    text = "Pay here https://bit.ly/login-verify-card"
    assert not shortener_request(text, default_words())
    report = assess_domains(text)
    assert report.score >= 50
    (host,) = report.hosts
    assert any(reason.startswith(SHORTENER_SLUG_REASON) for reason, _ in host.reasons)


def default_words() -> frozenset[str]:
    from workers.analysis.domains import default_reputation

    return default_reputation().request_words


def test_a_request_without_a_shortener_changes_no_host() -> None:
    """The request words raise shorteners only: a real bank's link in a payment reminder
    stays the bank's."""
    report = assess_domains("Plătiți factura de 120 lei pe https://www.bancatransilvania.ro")
    assert report.score < 50


@pytest.mark.parametrize(
    ("host", "word"),
    [
        ("cerul-otravit.info", "otravit"),
        ("sanatate-fara-cenzura.info", "cenzura"),
        ("cerul-otravit.xyz", "otravit"),  # a cheap TLD without a bait word: still said
        ("adevar-necenzurat.click", "necenzurat"),
        ("uncensored-health.com", "uncensored"),
        ("adevarnecenzurat.net", "necenzurat"),  # run together: the end of a token
    ],
)
def test_a_name_that_sells_a_hidden_truth_or_a_poison_is_risky(host: str, word: str) -> None:
    """On any TLD, one alarm word in the registrable name: 60, the word said."""
    assessment = assess_host(host)
    assert assessment.risk >= 50
    assert any(f"({word})" in r for r, _ in assessment.reasons)


@pytest.mark.parametrize(
    "host",
    [
        "truthout.org",
        "truthsocial.com",
        "poisoncontrol.org",
        "wakeupcoffee.com",
        "indexoncensorship.org",
        "censorship.ai",
        "redpillow.com",  # "redpill" beside two letters is another word
    ],
)
def test_real_sites_with_words_near_the_alarm_words_stay_low(host: str) -> None:
    assert assess_host(host).risk < 50


@pytest.mark.parametrize(
    ("host", "flagged"),
    [
        ("reuters-world.news", True),  # an outlet's name with a word on a cheap TLD
        ("lidl-anniversary.club", True),  # a shop's name, likewise
        ("truthseekerdaily.info", True),  # a bait word run together on a cheap TLD
        ("unibuc.ro.burse-studenti.info", True),  # a domain with its country code set before
        ("mentalhealth.info", False),
        ("travel.info", False),
        ("weather.news", False),
        ("golf-club.club", False),
        ("uk-weather.info", False),  # ordinary words too: a country alone is no service
        ("romania-travel.info", False),
        ("local-news.news", False),  # the TLD's word said again is no second sign
    ],
)
def test_info_news_and_club_are_cheap_tlds(host: str, flagged: bool) -> None:
    """.info, .news and .club are among the TLDs most registered for phishing and spam: a
    name on them is read as on .xyz, where a plain name stays under 50."""
    assessment = assess_host(host)
    assert any(r.startswith("top-level domain") for r, _ in assessment.reasons)
    assert (assessment.risk >= 50) is flagged


def test_bait_words_run_together_count_at_a_token_edge_on_a_cheap_tld_only() -> None:
    """ "truthjabfiles.live": a bait word starting a token on a cheap TLD, beside a word of
    four letters or more; the same name on .com is no evidence, and neither are words that
    merely contain one ("premium", "designing", "promotion")."""
    assert assess_host("truthjabfiles.live").risk >= 50
    assert assess_host("truthjabfiles.com").risk < 50
    for host in ("premium.xyz", "designing.live", "promotion.shop", "secretary.top"):
        assert assess_host(host).risk < 50, host


@pytest.mark.parametrize(
    ("host", "flagged"),
    [
        # pensions, consulates and benefits: a lure names the portal and what it promises
        ("https://cnpp-recalculare.info/plata", True),
        ("https://econsulat-ro.com/reprogramare", True),
        ("https://dwp-pension-payment.com", True),
        # the portals themselves and their subdomains
        ("https://www.cnpp.ro/pensii", False),
        ("https://www.econsulat.ro/", False),
        # a programme's name many carry by right is not protected
        ("https://www.medicare.com.au/", False),
        ("https://medicare-supplement-plans.org/", False),
        ("https://www.gov.uk/government/organisations/department-for-work-pensions", False),
        # a pension word alone on an honest host is nothing
        ("https://pensii-calculator.ro", False),
    ],
)
def test_pension_consular_and_benefit_portals_are_protected(host: str, flagged: bool) -> None:
    """The portals the elderly and the diaspora use (CNPP, e-Consulat, DWP) are
    brands: their names beside a lure word or on another domain are look-alikes, their own
    domains are not."""
    assert (assess_domains(host).score >= 50) is flagged
