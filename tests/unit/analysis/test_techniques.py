"""Manipulation techniques: lexicon matches in Romanian and English, evidence spans, scores."""

import json

import pytest

from tests.unit.analysis.evasion import EVASIONS
from workers.analysis.findings import MAX_FINDINGS, MAX_QUOTE_CHARS, saturating_score
from workers.analysis.normalise import normalise
from workers.analysis.techniques import (
    assess_techniques,
    compile_lexicon,
    report_data,
    with_model_findings,
)

RO_PROPAGANDA = (
    "ȘOC! Trădătorii de la guvern vor să ne otrăvească copiii! Nu vor să știți adevărul ascuns. "
    "DISTRIBUIȚI înainte să fie șters!!!"
)
EN_PROPAGANDA = (
    "You WON'T BELIEVE what the corrupt elite is hiding! Wake up: the deep state wants you "
    "silent. Share this before it's deleted!!"
)
NEUTRAL = [
    "Consiliul Local a aprobat ieri bugetul pentru 2024. Totalul cheltuielilor este de "
    "1,2 miliarde de lei, potrivit primăriei, iar cea mai mare parte merge la transport.",
    "The Ministry of Health reported 120 new cases on Tuesday. Officials said vaccination "
    "clinics will stay open through the weekend, and the next update is due on Friday.",
    "Pompierii au intervenit cu opt autospeciale la un incendiu într-un depozit din Ploiești. "
    "Nu au fost victime, potrivit ISU Prahova.",
]


def test_romanian_propaganda_shows_several_techniques_and_scores_high() -> None:
    """A Romanian post with fear, conspiracy, name-calling, urgency and shouting scores high."""
    report = assess_techniques(RO_PROPAGANDA)
    kinds = {f.kind for f in report.findings}
    expected = {"fear_appeal", "conspiracy", "name_calling", "urgency", "shouting", "clickbait"}
    assert expected <= kinds
    assert report.score >= 80


def test_english_propaganda_shows_several_techniques_and_scores_high() -> None:
    """An English post with clickbait, name-calling, conspiracy and urgency scores high."""
    report = assess_techniques(EN_PROPAGANDA)
    assert {"clickbait", "name_calling", "conspiracy", "urgency"} <= {
        f.kind for f in report.findings
    }
    assert report.score >= 80


@pytest.mark.parametrize("text", NEUTRAL)
def test_neutral_news_scores_low(text: str) -> None:
    """News-style reporting with numbers and institutions is not manipulation."""
    assert assess_techniques(text).score < 20


def test_evidence_spans_point_into_the_original_text() -> None:
    """Every finding's (start, end) slices the original text to the quoted evidence."""
    for finding in assess_techniques(RO_PROPAGANDA).findings:
        assert RO_PROPAGANDA[finding.start : finding.end] == finding.text


def test_romanian_without_diacritics_matches_the_same_terms() -> None:
    """Text typed without diacritics is matched like text with them."""
    with_marks = assess_techniques("Nu vor să știți adevărul ascuns, trădătorilor!")
    without = assess_techniques("Nu vor sa stiti adevarul ascuns, tradatorilor!")
    assert {f.kind for f in with_marks.findings} == {f.kind for f in without.findings}
    assert with_marks.score == without.score


def test_repeating_one_word_counts_less_than_using_many_techniques() -> None:
    """Repeats of a technique diminish, so one word said five times is not five techniques
    (the lexicon alone: the learned model's cue is a reading of its own, retrained often)."""
    repeated = assess_techniques(
        "trădători, trădători, trădători, trădători, trădători", learned=False
    )
    varied = assess_techniques(
        "trădători! nu vor să știți! copiii noștri! distribuiți! ȘOC TOTAL", learned=False
    )
    assert repeated.score < varied.score
    assert repeated.score <= saturating_score(2 * 0.26)  # twice one name-calling finding


def test_single_acronyms_are_not_shouting() -> None:
    """NATO or COVID alone is not shouting; a run of capital words is."""
    assert assess_techniques("NATO și UE au discutat despre COVID.").findings == ()
    assert {f.kind for f in assess_techniques("ASTA ESTE RUȘINE").findings} == {"shouting"}


def test_lexicon_comes_from_data() -> None:
    """A lexicon compiled from another spec matches its own terms, with its weights."""
    lexicon = compile_lexicon(
        {
            "techniques": {
                "flattery": {"about": "praise", "weight": 0.5, "terms": {"en": ["dear friend*"]}}
            }
        }
    )
    report = assess_techniques("Hello dear friends of ours", lexicon, learned=False)
    assert [(f.kind, f.text, f.weight) for f in report.findings] == [
        ("flattery", "dear friends", 0.5)
    ]


def test_model_findings_count_only_when_quoted_verbatim() -> None:
    """An LLM proposal adds a finding only if its quote is in the text and its technique known."""
    text = "Guvernul ne minte din nou, iar voi tăceți."
    base = assess_techniques(text)
    merged = with_model_findings(
        text,
        base,
        [("loaded_language", "ne minte din nou"), ("fear_appeal", "invented quote"), ("x", "voi")],
    )
    added = [f for f in merged.findings if f.source == "llm"]
    assert [(f.kind, f.text) for f in added] == [("loaded_language", "ne minte din nou")]
    assert merged.score > base.score


def test_report_data_is_small_json_with_summaries_in_both_languages() -> None:
    """The executor's data serialises to JSON, caps the findings and has EN and RO summaries."""
    data = report_data(assess_techniques(" ".join([RO_PROPAGANDA] * 10)))
    json.dumps(data)
    assert len(data["findings"]) <= MAX_FINDINGS
    assert data["finding_count"] > MAX_FINDINGS
    assert data["summary"] and data["summary_ro"]
    assert any("apel la frică" in s for s in data["summary_ro"])


@pytest.mark.parametrize("evasion", EVASIONS)
@pytest.mark.parametrize("plain", [RO_PROPAGANDA, EN_PROPAGANDA])
def test_unicode_evasion_scores_like_the_plain_text(plain: str, evasion: str) -> None:
    """Zero-width, bidi, fullwidth or Cyrillic rewrites find the same techniques, same score."""
    disguised = EVASIONS[evasion](plain)
    report, baseline = assess_techniques(disguised), assess_techniques(plain)
    assert report.score == baseline.score
    assert [f.kind for f in report.findings] == [f.kind for f in baseline.findings]


@pytest.mark.parametrize("evasion", EVASIONS)
def test_evidence_of_a_disguised_text_quotes_the_original(evasion: str) -> None:
    """Each finding's span slices the text as sent, hidden and look-alike characters included,
    and reads as the plain text's finding."""
    disguised = EVASIONS[evasion](RO_PROPAGANDA)
    found = assess_techniques(disguised).findings
    assert all(disguised[f.start : f.end] == f.text for f in found)
    plain = [f.text for f in assess_techniques(RO_PROPAGANDA).findings]
    assert [normalise(f.text).text for f in found] == plain


def test_model_quotes_are_found_in_a_disguised_text() -> None:
    """A model quoting the readable text is matched to the original span it reads as."""
    text = "Guvernul ne m\u200bіnte din nou."
    merged = with_model_findings(
        text, assess_techniques(text), [("loaded_language", "ne minte din nou")]
    )
    added = [f for f in merged.findings if f.source == "llm"]
    assert [text[f.start : f.end] for f in added] == ["ne m\u200bіnte din nou"]


@pytest.mark.parametrize(
    ("text", "runs"),
    [
        ("Incredibil!! Ce?!?! Da!", ["!!", "?!?!"]),
        ("Ce?? Nu! Hai?!", []),
        ("?!?!?!?!", ["?!?!?!?!"]),
    ],
)
def test_exclamation_runs_need_two_exclamation_marks(text: str, runs: list[str]) -> None:
    """A run of ! and ? is shouting when it holds two "!" at least, quoted whole."""
    found = [f.text for f in assess_techniques(text).findings if f.kind == "shouting"]
    assert found == runs


def test_shouting_runs_end_at_a_word_boundary() -> None:
    """Capital words followed by a mixed-case word are shouting up to the last capital word."""
    found = [f.text for f in assess_techniques("ASTA ESTE RUȘINEx azi", learned=False).findings]
    assert found == ["ASTA ESTE"]


def test_a_flood_of_exclamation_marks_is_one_short_quote() -> None:
    """A 100,000-character run is one finding whose quote is cut to MAX_QUOTE_CHARS."""
    (finding,) = assess_techniques("!" * 100_000).findings
    assert (finding.start, finding.end) == (0, 100_000)
    assert finding.text == "!" * MAX_QUOTE_CHARS
