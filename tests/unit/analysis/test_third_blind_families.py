"""Families grown in the third round of issue 19, after a second set of 120 texts written
blind (ids `*-c-*`). Each is checked on sentences written for this test (none is in the
evaluation set), in Romanian and English, beside neutral texts that share their words and
must stay low: a debunk, news about an investigation, an opinion, plain reporting."""

import pytest

from workers.analysis import claims
from workers.analysis.claim_forms import text_registers
from workers.analysis.claims import Claim, Verification, claim_risk, is_risky
from workers.analysis.techniques import assess_techniques

FLAGGED = 50
# The verdict reads a score under this as no evidence (see test_unseen_families.py).
LONE_HINT = 35

# (family, text): the family is found in a sentence leaning on it.
FAMILIES = [
    # insiders who know and keep quiet, or may not speak
    ("conspiracy", "The engineers know it and stay silent."),
    ("conspiracy", "Inginerii știu foarte bine și tac."),
    ("conspiracy", "The pilots are not allowed to talk about what they spray."),
    ("conspiracy", "Medicii nu au voie să spună ce au văzut."),
    # a disaster made on purpose
    ("conspiracy", "The floods were triggered artificially to clear the valley."),
    ("conspiracy", "Seceta a fost provocată artificial ca să cumpere ei pământul."),
    ("conspiracy", "They have been testing weather weapons over the plains."),
    ("conspiracy", "Au folosit arme climatice deasupra Dobrogei."),
    ("conspiracy", "Substanțele sunt pulverizate intenționat peste oraș."),
    # surveillance of everything said at home
    ("conspiracy", "The new routers are listening to everything you say."),
    ("conspiracy", "Contoarele noi înregistrează tot ce vorbiți în casă."),
    # a press that will not touch it; elites who want people cold
    ("conspiracy", "The papers won't touch this story."),
    ("conspiracy", "The bankers want ordinary families to freeze this winter."),
    # a leading question
    ("insinuation", "Have you ever asked yourself why the lake turned green?"),
    ("insinuation", "V-ați întrebat de ce s-a închis fabrica peste noapte?"),
    # dehumanising noun with the demonstrative after it
    ("dehumanisation", "Lipitorile astea din consiliu ne-au luat tot."),
    # collective blame
    ("collective_blame", "Every last one of those councillors is to blame."),
    ("collective_blame", "Toți cei din consiliu sunt vinovați."),
    ("collective_blame", "They live off your taxes and give nothing back."),
    ("collective_blame", "Trăiesc din taxele voastre de treizeci de ani."),
    # stripping a group's rights
    ("us_vs_them", "Take away their right to vote!"),
    ("us_vs_them", "Să le retragem dreptul la vot!"),
    # fear: losing what is dear, accounts emptied, drugs pumped in
    ("fear_appeal", "You could lose every photo of your children tomorrow."),
    ("fear_appeal", "Puteți pierde toate pozele copiilor într-o clipă."),
    ("fear_appeal", "You may wake up to accounts emptied by strangers."),
    ("fear_appeal", "Vă treziți cu conturile golite."),
    ("fear_appeal", "The clinics want to pump your baby full of drugs."),
    # miracle cure: instead of treatment, banned because it works, fever gone
    ("miracle_cure", "Drink it instead of chemo, like my uncle did."),
    ("miracle_cure", "Beți ceaiul în loc de medicamente."),
    ("miracle_cure", "They banned the herb because it works."),
    ("miracle_cure", "Nu îl găsiți în farmacii pentru că nu aduce profit nimănui."),
    ("miracle_cure", "Never give them ibuprofen, whatever the nurse says."),
    ("miracle_cure", "The fever was gone by morning with a potato slice."),
    ("miracle_cure", "Febra trece până dimineață cu o felie de cartof."),
    # pressure: an unauthorised payment, a missed deadline
    ("pressure", "If you did not authorise this transfer, reply STOP."),
    ("pressure", "Dacă nu ați autorizat această tranzacție, sunați-ne."),
    ("pressure", "Ignore this and the late fees will be added to your bill."),
    ("pressure", "Dacă ratați termenul, plătiți penalități de 10%."),
    # urgency
    ("urgency", "Don't leave it until tomorrow, it may be gone."),
    ("urgency", "Nu lăsați pe mâine ce puteți semna azi."),
]

# Flagged: a family together with a second cue, as the texts that were missed had them.
FLAGGED_TEXTS = [
    "The landslide was triggered artificially. The geologists know the truth and stay quiet.",
    "Alunecarea de teren a fost provocată artificial. Geologii știu adevărul, dar nu au voie "
    "să vorbească.",
    "Gargle salt water instead of antibiotics and the infection is gone in a day. They banned "
    "it because it works!",
    "Beți apă cu sare în loc de antibiotice. Nu o găsiți în farmacii pentru că nu aduce profit.",
    "If you did not authorize this payment, cancel it now or your account will be closed.",
    "Dacă nu ați autorizat plata, anulați-o acum, altfel contul va fi blocat.",
]

NEUTRAL = [
    # news about dehumanising leaflets and an investigation
    "Police are investigating leaflets that called the new neighbours 'rats'.",
    "Poliția cercetează afișele care îi numeau pe vecini „șobolani”.",
    # the same words in plain reporting
    "Scientists know the truth of a theory only by testing it.",
    "Medicines are given instead of surgery when the tumour is small, the surgeons said.",
    "Medicii recomandă paracetamol pentru febră la copiii mai mari de trei luni.",
    "Rata dobânzii a rămas neschimbată, a anunțat banca centrală.",
    "Un videoclip distribuit pe TikTok arată o inundație din 2010.",
    "The company said the cameras do not record anything inside homes.",
    # satire, labelled
    "Satire: the mayor admitted the potholes were dug artificially to slow down tourists.",
]


@pytest.mark.parametrize(("family", "text"), FAMILIES)
def test_each_third_round_family_is_found(family: str, text: str) -> None:
    """A sentence leaning on the family, worded for this test, is read as that family."""
    assert family in {f.kind for f in assess_techniques(text).findings}


@pytest.mark.parametrize("text", FLAGGED_TEXTS)
def test_a_family_with_a_second_cue_is_flagged(text: str) -> None:
    """Two cues of these families together reach the flag, as a reviewer would flag them."""
    assert assess_techniques(text).score >= FLAGGED


@pytest.mark.parametrize("text", NEUTRAL)
def test_neutral_texts_with_the_same_words_stay_low(text: str) -> None:
    """Reporting an investigation, medical advice, a participle ("distribuit") and satire
    share the families' words and stay under the noise floor."""
    assert assess_techniques(text).score < LONE_HINT


def _risk(text: str) -> float:
    return max((c.unverified_risk for c in claims.extract_claims(text)), default=0.0)


@pytest.mark.parametrize(
    "text",
    [
        # a man-made disaster and a global scheme
        "The drought was caused artificially by seeding the clouds elsewhere.",
        "Cutremurul a fost provocat artificial cu arme seismice.",
        "Low-traffic zones are part of a global scheme to keep people at home.",
        # planned from the start, a few families deciding
        "The crisis was planned from day one by the same people who profit from it.",
        "Câteva familii de bancheri stabilesc prețul pâinii în toată Europa.",
        # surveillance and selling the data
        "The new meters are recording everything you say and sell it to the government.",
        # a cause inferred from a statistic
        "Thefts fell by 40% after the lights went up, which demonstrates the lights solved it.",
        "Accidentele au scăzut cu 30%, ceea ce demonstrează că radarele au rezolvat problema.",
        # experts said to confirm at last; a study nobody is named for
        "Economists have finally confirmed that the euro would double our wages in a year.",
        "Economiștii au confirmat în sfârșit că euro ar dubla salariile.",
        "Un studiu recent arată că 68% dintre copii nu mai citesc deloc.",
        # a treatment replaced by the body's own cure
        "A fever is the body healing itself, so never give a child paracetamol.",
        "Apa cu argint omoară orice virus în două ore.",
    ],
)
def test_claims_of_these_forms_are_risky_unverified(text: str) -> None:
    """Man-made disasters, secret schemes, surveillance, inferences, confirmations at last,
    anonymous studies and miracle treatments count on their own when nobody checked them."""
    assert _risk(text) >= FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        # debunks: the text reports a claim and rebuts it
        "A viral post claims that tap water causes kidney stones. "
        "Fact-checkers found no evidence for it.",
        "Pe Facebook circulă afirmația că apa de la robinet provoacă pietre la rinichi. "
        "Verificatorii spun că informația este falsă.",
        "A widely shared meme says the bank will freeze all savings by May; Snopes rated it false.",
        # an opinion, hedged
        "In my opinion the new stadium causes more traffic than it brings money.",
        "Părerea mea e că noile parcări aduc bani orașului, dar trebuie un bilanț complet.",
        # news about an investigation into leaflets
        "Police are investigating leaflets about asylum seekers pushed through two doors.",
    ],
)
def test_debunks_opinions_and_investigations_are_not_risky_claims(text: str) -> None:
    """A text that rebuts the claim it reports, an opinion said as one, and news of an
    investigation do not make a risky claim of their own."""
    assert _risk(text) < FLAGGED


def test_a_rebuttal_counts_only_beside_a_reported_claim():
    """ "Is false" after a viral post is a debunk; on its own, "the official figure is
    false" is the writer's claim and keeps its risk."""
    debunk = text_registers(["A viral post says the vaccine has a chip.", "That is false."])
    assert "debunked" in debunk[1]
    (alone,) = text_registers(["The official figure is false and the minister knows it."])
    assert "debunked" not in alone


def test_a_fact_check_that_agrees_with_the_debunk_is_no_evidence_against_the_text():
    """A claim the text rebuts, matched to a check rating it false, is not risky: the text
    and the check say the same thing. Without the rebuttal the rating counts."""
    rated = Verification("matched", "false", 0.8, "tea cures cancer", "sample")
    rebutted = Claim("Tea cures cancer, a post claims.", 0, 30, ("cure",), 0.5, ("debunked",))
    asserted = Claim("Tea cures cancer.", 0, 17, ("cure",), 0.5, ())
    assert not is_risky(rebutted, rated) and claim_risk(rebutted, rated) < FLAGGED
    assert is_risky(asserted, rated) and claim_risk(asserted, rated) == 90
