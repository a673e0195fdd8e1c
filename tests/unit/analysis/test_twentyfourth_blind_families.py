"""Forms grown in the twenty-fourth round of issue 19, after two more sets written blind (ids
`*-rr-*`, health, medicine and science in everyday life; `*-ss-*`, politics, elections and
public money), measured as written on the twenty-third round's code, then SS tuned on (RR
held out). Each is checked on sentences written for this test (none is in the evaluation
set), in Romanian and English, beside texts sharing their words that must stay as they
were."""

import pytest

from tests.unit.analysis.probes import FLAGGED, claims_score, kinds
from workers.analysis import claim_forms, claims, techniques


@pytest.mark.parametrize(
    "text",
    [
        "The minister unveiled the scheme live on air. The central bank tried to stop the "
        "broadcast! Places are limited, so register today.",
        "Ministrul a prezentat platforma în direct. Banca centrală a încercat să oprească "
        "emisiunea! Locurile sunt limitate, înscrie-te azi.",
    ],
)
def test_a_broadcast_someone_tried_to_stop_and_limited_places_press_the_reader(text):
    found = kinds(text)
    assert {"conspiracy", "urgency"} <= found
    assert techniques.assess_techniques(text).score >= FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        # who tried to stop it decides (round 24's review)
        "The singer's lawyers tried to stop the broadcast, but a judge allowed it. The "
        "documentary is screened on Friday; places are limited, so book on the festival site.",
        "Avocații cântăreței au încercat să oprească emisiunea, dar judecătorul a permis "
        "difuzarea. Documentarul e proiectat vineri; locurile sunt limitate.",
        "Places are limited at the library's Saturday coding club; ask at the front desk.",
        "Locurile sunt limitate la atelierul de sâmbătă al bibliotecii; întrebați la intrare.",
        "Police tried to stop the car on the ring road, but the driver fled.",
        "Poliția a încercat să oprească mașina pe centură, dar șoferul a fugit.",
    ],
)
def test_an_honest_notice_of_limited_places_or_a_stop_on_the_road_stays_low(text):
    assert "conspiracy" not in kinds(text)
    assert techniques.assess_techniques(text).score < FLAGGED


@pytest.mark.parametrize(
    "sentence",
    [
        "According to recent statistics, 9 out of 10 burglaries in big cities are committed by "
        "foreign nationals.",
        "Conform unor statistici recente, 9 din 10 spargeri din marile orașe sunt comise de "
        "muncitori străini.",
    ],
)
def test_crime_laid_on_a_group_in_the_passive_is_collective_blame(sentence):
    assert "collective_blame" in kinds(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "Most burglaries are committed by people who know the house, police said.",
        "Cele mai multe spargeri sunt comise de persoane care cunosc casa, spune poliția.",
        "The attack was committed by a lone man, prosecutors said.",
        "The war crimes were committed by foreign mercenaries, the UN commission concluded.",
    ],
)
def test_crime_laid_on_no_group_is_no_collective_blame(sentence):
    assert "collective_blame" not in kinds(sentence)


@pytest.mark.parametrize(
    "text",
    [
        "Your State Pension will rise from April under the triple lock. You do not need to "
        "do anything. DWP will never ask you to pay a fee or share your bank PIN to receive "
        "your pension.",
        "Agenția informează fermierii că plata avansului începe în octombrie. Sumele se "
        "virează direct în conturile declarate. Agenția nu percepe taxe și nu contactează "
        "fermierii telefonic pentru a le cere date bancare.",
    ],
)
def test_a_body_s_notice_of_what_it_never_asks_stays_low_with_its_learned_cue_too(text):
    report = techniques.assess_techniques(text)
    assert report.score < FLAGGED, report.findings


@pytest.mark.parametrize(
    "lure",
    [
        "Your Netflix membership could not be renewed. Update your payment method here: "
        "https://netflix-billing-update.net",
        "Your parcel could not be delivered. Reschedule delivery and pay the small fee: "
        "https://dpd-reschedule.info",
        "Coletul dvs. nu a putut fi livrat. Reprogramați livrarea și achitați taxa de 2 lei: "
        "https://fan-curier-livrare.info",
    ],
)
def test_a_lure_with_a_link_that_copies_a_notice_line_keeps_its_learned_cue(lure):
    """Round 24's review: "… We will never ask you for your PIN" appended took lures with a
    link from 72.6 to 47.7 while the notice halved the learned cue."""
    for line in (" We will never ask you for your PIN.", " Banca nu vă va cere niciodată PIN-ul."):
        assert techniques.assess_techniques(lure + line).score >= FLAGGED


def test_the_learned_cue_counts_half_in_a_notice_and_whole_elsewhere():
    lure = "Your pension payment is on hold. Pay the release fee and confirm your bank PIN today."
    notice = lure + " We will never ask you for your PIN."
    cue = {f.kind: f.weight for f in techniques.assess_techniques(lure).findings}
    halved = {f.kind: f.weight for f in techniques.assess_techniques(notice).findings}
    assert "learned_wording" in cue
    assert halved.get("learned_wording", 0) < cue["learned_wording"]


@pytest.mark.parametrize(
    "text",
    [
        "FALSE: A video that seems to show the finance minister announcing a 20% pension cut "
        "is a deepfake. The ministry confirmed the clip is not genuine.",
        "FALS: Clipul în care ministrul Finanțelor pare să anunțe o tăiere de 20% a pensiilor "
        "este un deepfake. Ministerul a confirmat că materialul nu este autentic.",
    ],
)
def test_a_fact_check_s_false_verdict_on_a_deepfake_is_a_debunk(text):
    registers = claims.extract_claims(text)
    assert any("debunked" in c.register for c in registers)
    assert claims_score(text) < FLAGGED


@pytest.mark.parametrize(
    ("sentence", "plot"),
    [
        ("Closing the route without a plan to raise pay will not fill the jobs.", False),
        ("The council has unveiled a plan to repair the roads by May.", False),
        ("The new low-traffic zones are a plan to lock people inside their districts.", True),
        ("Guvernul a anunțat un plan de a repara drumurile până în mai.", False),
        ("Zonele cu trafic redus sunt un plan de a ține oamenii închiși în cartiere.", True),
    ],
)
def test_a_plan_is_a_plot_only_when_said_to_be_what_something_is(sentence, plot):
    assert ("plot" in claim_forms.sentence_forms(sentence)) is plot


@pytest.mark.parametrize(
    ("sentence", "plot"),
    [
        ("The campaign said it never asks anyone for money in private messages.", False),
        ("Campania a transmis că nu cere niciodată bani în privat.", False),
        ("They never tell us what they decide in private.", True),
        # folded: capitals and diacritics (round 24's review)
        ("The campaign said it NEVER asks anyone for money in private messages.", False),
        ("Compania nu vă contactează niciodată în privat pentru bani.", False),
        # a "does not ask" beside a secret is still a plot
        ("The government does not ask anyone: the vaccine contracts were signed in secret.", True),
    ],
)
def test_what_a_body_never_asks_in_private_is_no_plot(sentence, plot):
    assert ("plot" in claim_forms.sentence_forms(sentence)) is plot
