"""Pattern families grown for issue 19, each checked on sentences written for this test
(none is in the evaluation set), in Romanian and English, beside neutral texts that use
the same words and must stay low: the families are lemmas and word sets, not phrases."""

import pytest

from workers.analysis import claim_forms, claims, domains
from workers.analysis.techniques import assess_techniques

FLAGGED = 50
# One weak cue alone (a deadline, "finally confirmed") stays under this score, which the
# verdict's calibration reads as no evidence: a lone hint must not make a warning.
LONE_HINT = 35

# (family, text): the family must be found; each text is flagged (with a second cue).
FAMILIES = [
    (
        "collective_blame",
        "Foreigners are behind most of the robberies here, and the police hide it.",
    ),
    ("collective_blame", "Imigranții comit majoritatea furturilor, iar poliția ascunde cifrele."),
    ("fear_appeal", "This syrup weakens your child's immune system. Big Pharma hides the truth."),
    (
        "fear_appeal",
        "Siropul acesta slăbește copiii și autoritățile ascund adevărul de ani de zile.",
    ),
    ("fear_appeal", "Two days left: after that you lose your savings for good. Act now!"),
    ("fear_appeal", "Mai sunt 2 zile, apoi vă pierdeți pensiile. Acționați acum!"),
    (
        "conspiracy",
        "Doctors have at last confirmed what they buried for decades: the truth is out.",
    ),
    ("conspiracy", "Specialiștii au dovedit în sfârșit ce ne-au ascuns atâția ani."),
    ("miracle_cure", "Quit your blood pressure pills: one simple herb normalises it overnight."),
    ("miracle_cure", "Nu vă mai vaccinați copiii: un ceai simplu îi apără definitiv."),
    ("whataboutism", "They preach to us about honesty? What about their own crooked mayors?"),
    ("whataboutism", "Ne critică pe noi de hoție? Dar ei ce au furat? Uite cine vorbește!"),
    ("pressure", "We were unable to deliver your package. Pay 1.20 EUR now or it goes back."),
    (
        "pressure",
        "Factura restantă de 45 lei nu a fost achitată. Plătiți azi, altfel serviciul va fi oprit.",
    ),
    (
        "pressure",
        "A login from a new device was detected. If this was not you, secure it right away.",
    ),
    ("data_request", "Your delivery is on hold. Pay 2.40 GBP and confirm your address today."),
]

NEUTRAL = [
    # research and news about manipulative messages: the message is mentioned, not used
    "Researchers studied posts with the phrase 'act now or lose everything' to map bot networks.",
    "Cercetătorii au analizat mesaje de tipul „nu vă mai vaccinați copiii” "
    "și au găsit conturi false.",
    # a deadline in a legitimate notice
    "Appeals can be filed within 48 hours of the results, the university said.",
    "Contestațiile se depun în 24 de ore de la afișarea rezultatelor.",
    # a plain report of harm to children, attributed
    "Lead paint damages children's brains, the health agency warned in its annual report.",
    # something long awaited, finally confirmed
    "The ministry finally confirmed the date of the entrance exam.",
    "Ministerul a confirmat în sfârșit data examenului de admitere.",
    # adverts and shop notices
    "Spring offer: 30% off selected bikes until Sunday, while stocks last.",
    "Coletul dumneavoastră a fost livrat azi la ora 14, vă mulțumim pentru comandă.",
    # crime statistics stated plainly
    "Migrants are more often victims of crime than perpetrators, the report found.",
    "Poliția a anunțat că numărul furturilor a scăzut cu 10% față de anul trecut.",
]


@pytest.mark.parametrize(("family", "text"), FAMILIES)
def test_each_grown_family_flags_new_wordings(family: str, text: str) -> None:
    """A sentence nobody tuned for, leaning on a family, is flagged with it."""
    report = assess_techniques(text)
    assert family in {f.kind for f in report.findings}
    assert report.score >= FLAGGED


@pytest.mark.parametrize("text", NEUTRAL)
def test_neutral_texts_with_the_same_words_stay_under_the_verdicts_floor(text: str) -> None:
    """Research about slogans, real deadlines, attributed warnings, ads: at most one weak
    hint, which the verdict does not count."""
    assert assess_techniques(text).score < LONE_HINT


def _claim_risks(text: str) -> list[float]:
    found = claims.extract_claims(text)
    verified = claims.match_locally(found, [])
    return [claims.claim_risk(c, v) for c, v in zip(found, verified, strict=True)]


@pytest.mark.parametrize(
    "text",
    [
        "The bureaucrats have already decided the next curfew. Do your own research.",
        "Guvernanții au decis deja carantina de iarnă, în secret. "
        "Informați-vă înainte să fie șters!",
        "Pediatricians are paid to stay silent: this tea gets rid of asthma for good.",
        "Medicii sunt plătiți să tacă: ceaiul acesta te scapă de astm definitiv.",
    ],
)
def test_plots_cover_ups_and_cures_are_risky_unverified_claims(text: str) -> None:
    """A decided-in-secret measure or a cure with a cover-up is a claim risky enough to
    raise the score on its own when nobody could verify it."""
    risks = _claim_risks(text)
    assert risks and max(risks) >= 50


@pytest.mark.parametrize(
    "text",
    [
        "Journalists analysed 2,000 viral posts claiming that garlic cures the flu.",
        "Jurnaliștii au analizat 2.000 de postări virale care susțin că usturoiul vindecă gripa.",
    ],
)
def test_research_into_viral_posts_is_not_a_viral_source(text: str) -> None:
    """Studied posts are the object of the sentence: it loses the viral-source register."""
    assert "viral_sources" not in claim_forms.sentence_register(text)
    assert "studied" in claim_forms.sentence_register(text)


@pytest.mark.parametrize(
    "url",
    [
        "https://chase-verify-account.com/login",
        "https://wellsfarg0-online.net/",
        "https://ing-l0gin.com/ro",
        "https://otpbank-securitate.com/",
        "https://raiffeisen-homebank.xyz/",
        "https://kaufland-voucher.top/castig",
        "http://news.bbc.com.skynews-breaking.click/",
    ],
)
def test_new_protected_brands_and_folded_lure_words_are_lookalikes(url: str) -> None:
    """Banks, shops and outlets added to the protected list, and lure words spelt with a
    digit ("l0gin"), make a lookalike host."""
    report = domains.assess_domains("", url)
    assert report.score >= 80, domains.report_data(report)["summary"]


@pytest.mark.parametrize(
    "url",
    [
        "https://secure.chase.com/web/auth",
        "https://www.otpbank.ro/ro/persoane-fizice",
        "https://www.lidl.ro/oferte",
        "https://news.sky.com/uk",
        "https://visa-application-help.com/schengen",
        "https://chasethedream.com/",
        "https://www.timesnewroman.ro/politic",
    ],
)
def test_real_brand_sites_and_ordinary_words_are_not_lookalikes(url: str) -> None:
    """Real domains and subdomains of the new brands, a travel visa site, an ordinary
    word and a satire site stay under the verdict's noise floor."""
    assert domains.assess_domains("", url).score <= 20
