"""Families grown in the second round of issue 19, after 120 texts written blind showed
what the first round missed. Each is checked on sentences written for this test (none is
in the evaluation set), in Romanian and English, beside neutral texts that share their
words and must stay low: news quoting a message, official advice, satire labelled."""

import pytest

from workers.analysis import claims
from workers.analysis.claim_forms import sentence_forms, text_registers
from workers.analysis.techniques import assess_techniques

FLAGGED = 50
# The verdict reads a score under this as no evidence (see test_unseen_families.py).
LONE_HINT = 35

# (family, text): the family is found in a sentence leaning on it.
FAMILIES = [
    ("conspiracy", "The regulator buried the study that found the problem."),
    ("conspiracy", "Ministerul a îngropat raportul care arăta problema."),
    ("conspiracy", "They fired the researcher who discovered the side effects."),
    ("conspiracy", "A handful of bankers decide who gets elected in this country."),
    ("conspiracy", "Câțiva miliardari decid cine ajunge ministru."),
    ("conspiracy", "The newspapers are paid to keep quiet about it."),
    ("conspiracy", "Posturile de știri sunt plătite să tacă."),
    ("conspiracy", "The flood was no accident."),
    ("conspiracy", "Inundația nu a fost un accident."),
    ("conspiracy", "The rally footage was filmed in a studio."),
    ("conspiracy", "Documentele scurse arată planul."),
    ("conspiracy", "They will rig the election in the capital."),
    ("conspiracy", "Vor să fure voturile din diaspora."),
    ("conspiracy", "The forest fires were started deliberately."),
    ("conspiracy", "Pădurile au fost incendiate și aprinse intenționat."),
    ("fear_appeal", "The new vaccine is an experiment on our kids."),
    ("fear_appeal", "Noul ser e un experiment pe copiii voștri."),
    ("fear_appeal", "The tablets are packed with toxins."),
    ("fear_appeal", "Tabletele sunt pline de toxine."),
    ("fear_appeal", "The new zones will lock residents inside."),
    ("fear_appeal", "Shops will run out and the shelves will be empty."),
    ("fear_appeal", "Rafturile magazinelor vor fi goale."),
    ("miracle_cure", "Forget the jab and build your immunity the natural way."),
    ("miracle_cure", "Imunitatea naturală e tot ce vă trebuie."),
    ("miracle_cure", "Only 2 spoons a day of this mix and your sugar drops."),
    ("miracle_cure", "Doar 2 lingurițe pe zi din acest amestec."),
    ("miracle_cure", "Mama a scăpat de tensiune fără tratament."),
    ("miracle_cure", "Nu mai mergeți la medic pentru atâta lucru."),
    ("pressure", "Your email password expires tonight."),
    ("pressure", "Parola contului expiră azi."),
    ("pressure", "Pachetul nu a putut fi livrat ieri."),
    ("pressure", "Aveți de primit o despăgubire de 300 de lei."),
    ("pressure", "Riscați o amendă de 2.000 de lei."),
    ("data_request", "Sign in here to keep your mailbox."),
    ("data_request", "Autentificați-vă aici pentru a păstra contul."),
    ("dehumanisation", "The rats from that party are everywhere now."),
]

# Flagged: a family together with a second cue, as the texts that were missed had them.
FLAGGED_TEXTS = [
    "Leaked memos show the regulator buried the study. Nobody in the press will ask why.",
    "Documentele scurse arată că ministerul a îngropat raportul. Presa e plătită să tacă.",
    "This tea is an experiment on our kids and it is packed with toxins. Skip the jab!",
    "Nu vă mai duceți la medic: imunitatea naturală și doar 2 linguri pe zi vă vindecă.",
    "Your account password expires today. Keep your account by signing in here: http://x.co",
    "Aveți de primit o rambursare de 300 de lei. Completați datele în formularul de aici.",
]

NEUTRAL = [
    # news quoting a message or a slogan, with the quoted text beginning with "They"/"Ei"
    "The banner, which reads 'They stole our country, we take it back', was taken down.",
    "Un afiș cu mesajul „Ei ne-au furat țara, noi o luăm înapoi” a fost sesizat la BEC.",
    "Users received e-mails with the subject 'Your account will be suspended in 24 hours'.",
    "Utilizatorii primesc e-mailuri cu subiectul „Contul va fi suspendat în 24 de ore”.",
    # advice and plain reporting with the same words
    "Specialiștii recomandă verificarea adresei expeditorului.",
    "Heavy rain in the last 24 hours closed the mountain road.",
    "Ploile din ultimele 24 de ore au închis drumul.",
    "Your card expires in March; the new one is sent by post.",
    "Natural light and a walk help most people sleep better, the survey found.",
    "The hospital said the new scanner was tested on volunteers last year.",
    # satire, labelled
    "Satire: the moon landing was filmed in a studio, says a man who also owns a flat earth.",
]


@pytest.mark.parametrize(("family", "text"), FAMILIES)
def test_each_second_round_family_is_found(family: str, text: str) -> None:
    """A sentence leaning on the family, worded for this test, is read as that family."""
    assert family in {f.kind for f in assess_techniques(text).findings}


@pytest.mark.parametrize("text", FLAGGED_TEXTS)
def test_a_family_with_a_second_cue_is_flagged(text: str) -> None:
    """Two cues of these families together reach the flag, as a reviewer would flag them."""
    assert assess_techniques(text).score >= FLAGGED


@pytest.mark.parametrize("text", NEUTRAL)
def test_neutral_texts_with_the_same_words_stay_low(text: str) -> None:
    """A quoted message is the message's (a quote starting "They" is still attributed to
    the banner that reads it), advice is not a request, a past window is no deadline."""
    assert assess_techniques(text).score < LONE_HINT


def _risks(text: str) -> list[float]:
    found = claims.extract_claims(text)
    return [c.unverified_risk for c in found]


@pytest.mark.parametrize(
    "text",
    [
        "These ministers sold the country for a few donations.",
        "Miniștrii ăștia au vândut țara pe nimic.",
        "Burglaries rose by 200% after the new cameras went up, "
        "which proves the cameras bring thieves.",
        "Furturile au crescut cu 200% după camere, deci clar camerele aduc hoții.",
        "60% of graduates leave within a year, says a survey shared on Facebook.",
    ],
)
def test_accusations_and_inferences_are_risky_unverified_claims(text: str) -> None:
    """A betrayal asserted as fact, a cause concluded from a statistic, and a statistic
    passed around are claims risky enough to count on their own."""
    assert max(_risks(text), default=0) >= 50


@pytest.mark.parametrize(
    "text",
    [
        # a quoted message's sums and deadlines are the message's
        "A fake text reading 'Your parcel is held, pay 1.99 GBP within 6 hours' is circulating.",
        "Circulă un mesaj fals: „Coletul este reținut, plătiți 4,99 lei în 12 ore”.",
        # a quoted slogan's accusation is the speaker's
        "Un afiș cu mesajul „Ne-au vândut țara” a fost sesizat la Biroul Electoral.",
        # official advice about a scam
        "The bank said it never asks for card numbers by text "
        "and urged customers to report such messages to 7726.",
        "Banca a transmis că nu solicită niciodată datele cardului prin SMS "
        "și îi îndeamnă pe clienți să raporteze mesajele.",
    ],
)
def test_reported_messages_and_official_advice_are_not_risky_claims(text: str) -> None:
    """News about a scam or a slogan, and a company's advice against it, do not make the
    text's own risky claim."""
    assert all(r < 50 for r in _risks(text))


def test_quoted_figures_are_not_the_reports_numbers():
    """Inside quotation marks a sum is the message's; outside, it is the report's."""
    assert "number" not in sentence_forms("Oamenii primesc mesajul „plătiți 2,99 lei azi”.")
    assert "number" in sentence_forms("Oamenii au plătit 2,99 lei azi.")


def test_advice_is_a_register_a_viral_source_does_not_undo():
    """ "Urged people to forward such messages": the company's advice stays advice."""
    (register,) = text_registers(["Royal Mail urged people to forward such messages to 7726."])
    assert "advice" in register
