"""Forms grown in the twentieth round of issue 19, after two more sets written blind (ids
`*-ll-*`, the noisy register: text typed fast on phones and in comment sections, Romanian
without diacritics, code-mixing, text-speak, capitals, emojis, forwards, voice-message
transcripts; `*-mm-*`, the long and mixed: 5–8 sentence texts where one sentence decides),
measured as written on the nineteenth round's code, then LL tuned on (MM held out). Each is
checked on sentences written for this test (none is in the evaluation set), in Romanian and
English, beside texts sharing their words that must stay as they were."""

import pytest

from tests.unit.analysis.probes import FLAGGED, claims_score, kinds
from workers.analysis import claims, techniques
from workers.analysis.chat_speak import spelled_out
from workers.analysis.normalise import normalise
from workers.analysis.satire import satire_disowned
from workers.analysis.text import fold


@pytest.mark.parametrize(
    ("typed", "read"),
    [
        ("SHARE to protect ur loved ones", "SHARE to protect your loved ones"),
        ("U MUST see this", "YOU MUST see this"),
        ("pls dont click it, ppl", "please don't click it, people"),
        ("nush daca e adevarat, trb verificat", "nu știu daca e adevarat, trebuie verificat"),
        ("e bun pt copii", "e bun pentru copii"),
        # links, hosts, handles, hashtags and paths stay as they are
        ("see bit.ly/u and u.nu/x", "see bit.ly/u and u.nu/x"),
        ("r/conspiracy and #ppl", "r/conspiracy and #ppl"),
        ("mail u@example.com", "mail u@example.com"),
        # capitals that mean something else stay
        ("300 BC, Washington DC, CV-ul meu, plan R", "300 BC, Washington DC, CV-ul meu, plan R"),
    ],
)
def test_chat_spellings_are_read_in_full_and_nothing_else_is(typed: str, read: str) -> None:
    assert spelled_out(normalise(typed)).text == read


def test_evidence_in_a_spelled_out_text_quotes_what_was_typed() -> None:
    text = "⚠️ pls SHARE to protect ur loved ones!!"
    clean = spelled_out(normalise(text))
    at = clean.text.index("your loved")
    assert clean.quote(at, at + len("your loved")) == "ur loved"


def test_a_models_quote_and_a_tenants_term_in_chat_spelling_are_found_as_typed() -> None:
    """A language model quotes the text as typed and a tenant writes its terms as it likes:
    both are read as the text is, chat spellings in full, and evidence quotes the original."""
    text = "WARNING!! they r coming 4 ur kids, SHARE to protect ur loved ones"
    report = techniques.assess_techniques(text, learned=False)
    proposed = techniques.with_model_findings(text, report, [("fear_appeal", "they r coming")])
    assert ("fear_appeal", "they r coming", "llm") in {
        (f.kind, f.text, f.source) for f in proposed.findings
    }
    termed = techniques.with_tenant_terms(text, report, {"fear_appeal": ["ur kids"]})
    assert ("fear_appeal", "ur kids") in {(f.kind, f.text) for f in termed.findings}
    assert [c.text for c in claims.with_model_claims(text, [], ["they r coming"])] == [
        "they r coming"
    ]


@pytest.mark.parametrize(
    "text",
    [
        "WARNING from a cop friend: they spray u in parking lots. SHARE to protect ur loved ones",
        "pls forward this to every1 u know b4 they delete it!!",
    ],
)
def test_text_speak_no_longer_hides_a_call_to_spread(text: str) -> None:
    assert "urgency" in kinds(text)


@pytest.mark.parametrize(
    ("text", "taken_back"),
    [
        ("satire obv 😉 but: the mayor finally admits the water is poisoned", True),
        ("*satira* (sau nu?? 🤔) ministrul a recunoscut ca a furat tot", True),
        ("Parody (or is it?) — the vaccine has a chip", True),
        ("Satiră, dar doar pe jumătate: guvernul ascunde adevărul", True),
        # a label that marks a joke
        ("Satire: the minister, but only on Tuesdays, works from a hammock", False),
        ("Pamflet. Ministrul a declarat că drumurile se repară singure", False),
        ("This is satire, obviously. The mayor was not abducted by geese.", False),
    ],
)
def test_a_satire_label_taken_back_at_once_marks_nothing_as_a_joke(
    text: str, taken_back: bool
) -> None:
    assert satire_disowned(fold(text)) is taken_back


def test_a_taken_back_satire_label_no_longer_hides_the_claim_or_its_pressure() -> None:
    disowned = (
        "satire obv 😉 but: Bill Gates finally admits the jabs have chips."
        " share b4 they delete it!!"
    )
    labelled = (
        "Satire: Bill Gates finally admits the jabs have chips. Nobody was harmed, it's a joke."
    )
    assert claims_score(disowned) >= FLAGGED
    assert techniques.assess_techniques(disowned).score >= FLAGGED
    assert claims_score(labelled) < FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        "circula pe grup ca vaccinul da autism, am intrebat-o pe doctorita, zice ca nu e adevarat",
        "Se zice că ceaiul de pelin vindecă diabetul; farmacista spune că nu este adevărat.",
        "saw a post saying garlic cures strep, asked my GP and she said nope, u need antibiotics",
        "My aunt shared that lemons cure cancer; the oncologist says it's a myth.",
    ],
)
def test_a_rumour_answered_no_by_whoever_was_asked_is_a_debunk(text: str) -> None:
    assert claims_score(text) < FLAGGED


@pytest.mark.parametrize(
    "text",
    [
        "Medicul zice că ceaiul de pelin vindecă diabetul în două săptămâni.",
        "My GP says lemons cure cancer, 100% of the time.",
    ],
)
def test_a_claim_told_by_whoever_was_asked_still_counts(text: str) -> None:
    assert claims_score(text) >= FLAGGED


@pytest.mark.parametrize(
    ("text", "urgent"),
    [
        ("nu mai dati share la prostii, e fals", False),
        ("Vă rog, să nu dați share la poza aia", False),
        ("Dați share la toți, până nu îl șterge!", True),
        ("Dă share urgent, poate îl găsim!", True),
    ],
)
def test_a_call_not_to_share_is_no_call_to_spread(text: str, urgent: bool) -> None:
    assert ("urgency" in kinds(text)) is urgent


@pytest.mark.parametrize(
    "text",
    [
        "logged in at the bank directly and the transfer went through fine, the app was glitching",
        "the parcel arrived fine, the account works fine too",
    ],
)
def test_fine_as_in_all_right_is_no_penalty(text: str) -> None:
    assert "pressure" not in kinds(text)


@pytest.mark.parametrize(
    ("text", "urgent"),
    [
        ("Forward this to warn your loved ones before it happens to them.", True),
        ("Distribuiți ca să-i protejați pe cei dragi!", True),
        ("Share our guide to protect your family from scams.", False),
        ("Am distribuit ajutoare ca să protejăm familiile sinistrate.", False),
    ],
)
def test_spreading_a_warning_to_protect_ones_loved_ones_is_a_call_to_spread(
    text: str, urgent: bool
) -> None:
    assert ("urgency" in kinds(text)) is urgent


@pytest.mark.parametrize(
    ("text", "miracle"),
    [
        ("Din experiența mea, tumora se retrage, fără să mai fie nevoie de chimioterapie.", True),
        ("Brățara vindecă artrita, eliminând nevoia de antiinflamatoare.", True),
        ("The cleanse resets the pancreas, eliminating the need for metformin.", True),
        ("Most of my patients get well without the need for insulin.", True),
        # real procedures and a GP's advice
        ("A new procedure treats it without the need for open surgery.", False),
        ("Pentru o viroză, medicul a recomandat odihnă, fără nevoie de antibiotice.", False),
        ("There is no need for antibiotics for a cold, the GP said.", False),
    ],
)
def test_a_treatment_made_needless_is_a_miracle_cure_cue(text: str, miracle: bool) -> None:
    assert ("miracle_cure" in kinds(text)) is miracle


@pytest.mark.parametrize(
    ("text", "framed"),
    [
        ("Ceea ce nu vi se spune este că rezervele au fost vândute pe ascuns.", True),
        ("What they don't tell you is that the reserves were sold in secret.", True),
        ("Ce nu vi se spune la ghișeu: formularul se poate depune și online.", False),
    ],
)
def test_what_the_reader_is_not_told_is_conspiracy_framing(text: str, framed: bool) -> None:
    assert ("conspiracy" in kinds(text)) is framed
