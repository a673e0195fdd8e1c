"""Families grown in the fifth round of issue 19, after two more sets written blind (ids
`*-f-*`, leaning on how claims are made, and `*-g-*`, leaning on link tricks). Each is
checked on sentences written for this test (none is in the evaluation set), in Romanian
and English, beside neutral texts sharing their words that must stay low."""

import pytest

from tests.unit.analysis.probes import FLAGGED, claims_score
from workers.analysis import claims, domains
from workers.analysis.claim_forms import rumoured, sentence_register, text_registers
from workers.analysis.wording_model import WordingModel

# A learned claims model that reads every text at 0.01: what the forms alone make of a text.
FORMS_ONLY = WordingModel(buckets=8, bias=-4.595, weights=[0.0] * 8)


@pytest.mark.parametrize(
    "sentence",
    [
        "The figures were in a report the ministry tried to bury.",
        "It is the statistic the BBC refuses to report.",
        "School never tells you who really built it.",
        "The industry paid scientists to change the results.",
        "Istoricii oficiali au ascuns asta decenii întregi.",
        "Ce ne-au ascuns: fabrica a fost vândută pe un leu.",
        "Statistica pe care n-o vezi la televizor.",
        "Rezultatele au fost ținute sub tăcere.",
    ],
)
def test_a_fact_kept_from_the_reader_is_cover_up_framing(sentence: str) -> None:
    assert "conspiracy" in sentence_register(sentence)


@pytest.mark.parametrize(
    "text",
    [
        "One in three teenagers in the UK is now addicted to vaping, all down to the flavours.",
        "Unul din trei copii nu mai citește, iar cauza sunt telefoanele.",
        # a cause named outright ("the cause is"), the same claim in English
        "One in three children no longer reads a single book, and the cause is phones.",
        "Kids who drink oat milk are twice as likely to hit puberty early, and the industry "
        "paid scientists to hide it.",
        "Ce ne-au ascuns: barajul Vidra a fost golit în 2019. Distribuiți până nu ne șterg!",
        "Heads up, from Monday the banks will only take cash from people with a digital ID. "
        "Withdraw whatever you can this weekend and forward this to everyone!",
    ],
)
def test_invented_statistics_and_rumours_nobody_sourced_are_risky_claims(text: str) -> None:
    assert claims_score(text) >= FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        # the same shapes, sourced, hedged or rebutted
        "One in three households heats with wood, according to the 2021 census by INS.",
        "Unul din trei copii citește zilnic, potrivit sondajului realizat de Ministerul Educației.",
        "A viral post claimed that banks will only take cash from people with a digital ID. "
        "The central bank said the claim was false.",
        "Afirmația că vaccinul ar provoca infertilitate a fost analizată în studii mari, fără să "
        "se găsească vreo legătură. Vaccinarea este gratuită pentru copiii de 11 ani.",
        "Primăria a anunțat că strada Horea va fi închisă pe 3 mai pentru lucrări.",
        # everyday urgency, sharing and secrets are no rumour (review of this round)
        "Please stay quiet, the baby is sleeping. Dinner is at 8, tell your parents!",
        "Only 3 left in stock! Grab the Nike Air Max before it disappears, act now.",
        "Concert moved to the O2 on Saturday! Share this post with your friends, act now.",
        "Suspectul s-a ascuns în pădurea de lângă Bistrița. Poliția cere localnicilor să sune "
        "imediat la 112.",
        "Mum kept it secret until today! Tell your family: Dan's party is on Saturday at 7pm.",
        "Nu vă spun cât de frumos a fost la nunta lui Mihai pe 12 iulie! Spuneți-le și "
        "părinților că pozele sunt gata.",
        # a named source is not undone, and idioms are no ratios
        "According to experts at Oxford University, the vaccine is 90% effective.",
        "It took twice as long to reach the hospital because of the roadworks on Monday!",
        "Two in one: our Dove shampoo cleans and conditions, and it's on offer until Sunday!",
        "The club won one in 2019 and a second one in 2005.",
        # a debunk worded "without evidence", and gossip done "in secret"
        "The WHO said claims circulating online that a painkiller causes heart failure in young "
        "people are without evidence.",
        "Ana și Mihai s-au căsătorit în secret la Sibiu! Dați mai departe!",
        "We'll celebrate in private on Saturday, tell your parents!",
        # sound advice and a paint job (review of round 5)
        "Eat more fruit and vegetables this winter; a balanced diet boosts your immune system.",
        "Mănâncă fructe și legume iarna: o dietă echilibrată întărește imunitatea.",
        "The paint was chipped, so we spent £40 on Saturday covering it up.",
    ],
)
def test_sourced_figures_debunks_and_plain_news_stay_low(text: str) -> None:
    """By their forms. The learned claims model retrained in round 6 reads some of these
    as claim-like: short exclamatory lines (a learned claim of their own) and the health
    advice (its `learned_wording` support turns the forms' claim risky); docs/analysis.md,
    "Learned claims", lists the cost."""
    assert claims_score(text, FORMS_ONLY) < FLAGGED


def test_a_rumour_needs_something_concrete_said_to_be_hidden_and_passed_on() -> None:
    assert rumoured(["named_entity"], ("conspiracy", "viral_sources"))
    assert rumoured(["number"], ("conspiracy", "urgency"))
    assert not rumoured(["named_entity"], ("viral_sources", "urgency"))  # an ad, a party
    assert not rumoured(["named_entity"], ("conspiracy",))
    assert not rumoured([], ("conspiracy", "viral_sources"))
    assert not rumoured(["date"], ("conspiracy", "viral_sources", "debunked"))


def test_a_debunk_is_not_read_by_the_learned_model() -> None:
    text = (
        "Zvonul că apa de la robinet ar conține fluor toxic a fost analizat de specialiști, "
        "fără să se găsească vreo legătură cu bolile. Apa este verificată zilnic de 12 laboratoare."
    )
    registers = text_registers([text])
    assert "debunked" in registers[0]
    for claim in claims.extract_claims(text):
        assert "learned_wording" not in claim.register


# A model that reads every text as manipulative: only the debunk gate can keep it out.
ALWAYS_RISKY = WordingModel(buckets=1, bias=50.0, weights=[0.0])


@pytest.mark.parametrize(
    ("claim", "debunk"),
    [
        (
            "Tap water contains toxic fluoride that causes cancer in children.",
            "The rumour that tap water is toxic was false.",
        ),
        (
            "Apa de la robinet conține fluor toxic care provoacă cancer la copii.",
            "Zvonul că apa de la robinet ar conține fluor toxic a fost analizat de specialiști, "
            "fără să se găsească vreo legătură cu bolile.",
        ),
    ],
)
def test_the_learned_model_supports_a_claim_but_not_one_beside_its_debunk(
    claim: str, debunk: str
) -> None:
    alone = claims.extract_claims(claim, ALWAYS_RISKY)
    assert any("learned_wording" in c.register for c in alone)
    rebutted = claims.extract_claims(f"{claim} {debunk}", ALWAYS_RISKY)
    assert rebutted and all("learned_wording" not in c.register for c in rebutted)


def host_score(host: str) -> float:
    return domains.assess_domains(f"see https://{host}/x", f"https://{host}/x").score


@pytest.mark.parametrize(
    "host",
    [
        "faceboook-appeal.com",  # a repeated letter beside an account-appeal word
        "instagram-copyright-violation.com",
        "dlscord.gift",  # l for i in a brand added this round
        "discord-giveaway.com",
        "temu-refund.xyz",
    ],
)
def test_account_appeals_government_posing_and_new_brands_are_flagged(host: str) -> None:
    assert host_score(host) >= FLAGGED


@pytest.mark.parametrize(
    "host",
    [
        "www.amazon.com.au",  # the brands' own regional storefronts
        "www.amazon.co.jp",
        "www.google.com.au",
        "www.ebay.com.au",
        "discord.com",
        "media.discordapp.net",  # the brand's own image links
        "discord.gift",
        "review.university-press.org",  # a lure word with no brand
        "bbc-review.com",  # a review site is no appeal
        "data.gov.ro",
        "gov.wales",  # governments' own domains are no posing (review of this round)
        "gov.bc.ca",
        "www.google.pl",
        "www.amazon.ie",
        "worldbank.org",
        "dw-world.de",  # "world", "international" are no lure words (review of round 5)
        "cnn-international.com",
        "tvrinternational.ro",
        "neel.xyz",  # swapped letters are other words as often (not enel)
        "whoo.shop",  # nor a three-letter name doubled (not who)
    ],
)
def test_brands_regional_domains_and_lure_words_alone_stay_low(host: str) -> None:
    assert host_score(host) < FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        "It was in a survey the big brands tried to bury.",
        "The cosmetics lobby kept it quiet for twenty years.",
        "School never tells you who really sank the ship.",
        "Patronii știu asta și vă țin intenționat în neștiință.",
        "Patronii au ascuns asta ani de zile.",
        "Au încercat să îngroape raportul.",
    ],
)
def test_someone_keeping_a_fact_from_the_reader_is_conspiracy_framing(text: str) -> None:
    from workers.analysis.techniques import assess_techniques

    assert "conspiracy" in {f.kind for f in assess_techniques(text).findings}


@pytest.mark.parametrize(
    "text",
    [
        "Please stay quiet, the baby is sleeping.",
        "The school kept the children inside during the storm.",
        "The power cut kept the whole street in the dark until midnight.",
        "Patronul a anunțat că fabrica se închide vineri.",
        "Copiii au ascuns ouăle de Paște în grădină.",
        # everyday silences, hiding and darkness (review of round 5)
        "Our teacher never told us the trip was cancelled, so we waited at the gate.",
        "My boss kept quiet during the whole meeting, and I tried to hide my surprise.",
        "The school stayed silent for a minute on Friday; the children tried to hide their tears.",
        "The airline kept us in the dark for three hours about the delay.",
        "She tried to suppress a laugh.",
        "Pisica a încercat să se ascundă sub pat.",
        "Istoricii au găsit scrisorile ascunse în pod.",
        "Școala a ascuns ouăle de Paște în curte.",
        "Am ținut-o în neștiință despre petrecerea surpriză.",
    ],
)
def test_quiet_rooms_dark_streets_and_hidden_eggs_are_no_cover_up(text: str) -> None:
    from workers.analysis.techniques import assess_techniques

    assert "conspiracy" not in {f.kind for f in assess_techniques(text).findings}


def link_score(link: str) -> float:
    return domains.assess_domains(f"Open {link} now", None).score


@pytest.mark.parametrize(
    "link",
    [
        "https://www.emaag.ro/cont/verificare",  # a letter doubled, on a sign-in page
        "https://anaff.ro/login",
        "https://enell.top/factura",  # ... or on a cheap TLD
    ],
)
def test_a_short_name_with_a_letter_doubled_counts_beside_a_sign_in_page(link: str) -> None:
    assert link_score(link) >= FLAGGED


@pytest.mark.parametrize(
    "link",
    [
        "https://emaag.ro/produse/telefoane",  # the slip alone: a coincidence as often
        "https://dhll.com/tracking",
        "https://www.emag.ro/user/login",  # the brand's own sign-in page
        "https://blog.example.com/how-to-reset-your-password",  # sign-in words, no brand
        "https://wiki.openstreetmap.org/wiki/Login",
        # a sign-in page is no second sign for anything but a doubled letter (review)
        "https://www.ing.be/login",
        "https://www.dhl.co.uk/account",
        "https://www.ebay.fr/signin",
        "https://doctor-who.net/forum/login",
        "https://start-ups.ro/contul-meu/",
        "https://www.supps.com/my-account/",
        "https://dhll.com/account/verify",  # three letters doubled: too many ordinary names
    ],
)
def test_sign_in_paths_alone_and_the_brands_own_stay_low(link: str) -> None:
    assert link_score(link) < FLAGGED


def test_the_sign_in_page_is_named_in_the_evidence_in_both_languages() -> None:
    data = domains.report_data(domains.assess_domains("https://anaff.ro/login", None))
    assert "on a sign-in page" in data["summary"][0]
    assert "pe o pagină de autentificare" in data["summary_ro"][0]


def test_a_sign_in_link_counts_after_the_host_limit_for_a_host_already_found() -> None:
    """Past MAX_HOSTS no new host is read, but a later link of a host already found still
    shows it asking to sign in (an attacker cannot hide the sign-in page behind 20 others)."""
    others = " ".join(f"https://site{i}.example.org/a" for i in range(domains.MAX_HOSTS + 5))
    text = f"https://emaag.ro/x {others} https://emaag.ro/cont/verificare"
    report = domains.assess_domains(text)
    assert len(report.hosts) == domains.MAX_HOSTS
    assert report.score >= FLAGGED
