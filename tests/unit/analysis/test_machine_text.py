"""Signs of machine-generated text: boilerplate, uniformity, repetition, combined probability."""

import pytest

from tests.unit.analysis.evasion import EVASIONS
from workers.analysis.machine_text import assess_machine_text, mattr, report_data
from workers.analysis.normalise import normalise

ASSISTANT_EN = (
    "Artificial intelligence plays a crucial role in modern healthcare. It is important to note "
    "that these systems can analyse large amounts of data quickly. Furthermore, they can help "
    "doctors make more accurate diagnoses in many cases. Moreover, AI tools can reduce the "
    "administrative burden on medical staff every day. Additionally, they can support patients "
    "through personalised recommendations. In conclusion, artificial intelligence offers "
    "significant benefits for healthcare systems worldwide."
)
ASSISTANT_RO = (
    "Energia regenerabilă joacă un rol crucial în dezvoltarea durabilă. Este important de "
    "menționat că aceasta reduce emisiile de carbon în mod semnificativ. În plus, creează locuri "
    "de muncă în comunitățile locale din toată țara. De asemenea, contribuie la independența "
    "energetică a statelor europene. Cu toate acestea, necesită investiții importante în "
    "infrastructură. În concluzie, energia regenerabilă reprezintă o soluție esențială "
    "pentru viitor."
)
HUMAN_NEWS = (
    "The bridge closed at 6 a.m. Nobody told the bus drivers, so by seven the queue of buses "
    "stretched past the market and into Strada Lungă, where a man selling pretzels did better "
    "business than he had all month. City officials said the closure followed an inspection on "
    "Friday that found corrosion in two support cables. Repairs will take at least three weeks. "
    "Drivers were furious."
)


def test_assistant_style_english_scores_high_with_its_signals() -> None:
    """Stock phrases, even sentences and connective openers give a high probability."""
    report = assess_machine_text(ASSISTANT_EN)
    strong = {s.name for s in report.signals if s.strength >= 0.5}
    assert report.probability >= 0.8
    assert {"stock_phrases", "uniform_sentences", "connective_openers"} <= strong


def test_assistant_style_romanian_scores_high() -> None:
    """Romanian stock phrasing ("în concluzie", "este important de menționat") is recognised."""
    report = assess_machine_text(ASSISTANT_RO)
    assert report.score >= 80
    assert {"În concluzie", "Este important de menționat"} <= {f.text for f in report.phrases}


def test_human_news_with_varied_sentences_scores_low() -> None:
    """Varied sentence lengths and no stock phrasing keep the probability low."""
    assert assess_machine_text(HUMAN_NEWS).score < 25


def test_assistant_self_reference_is_strong_evidence_even_in_short_text() -> None:
    """ "As an AI language model" alone is enough; statistics are skipped on short text."""
    for text in (
        "As an AI language model, I cannot share opinions.",
        "Ca model de limbaj, nu pot.",
    ):
        report = assess_machine_text(text)
        assert report.score >= 85
        assert [s.name for s in report.signals] == ["stock_phrases"]


def test_mattr_is_lower_for_repetitive_text() -> None:
    """The moving type-token ratio falls when the same words recur."""
    varied = [f"w{i}" for i in range(100)]
    repetitive = ["a", "b", "c", "d"] * 25
    assert mattr(varied) == 1.0
    assert mattr(repetitive) < 0.2


def test_report_data_shows_every_signal() -> None:
    """The evidence lists each signal with its value, strength and weight, plus summaries."""
    data = report_data(assess_machine_text(ASSISTANT_EN))
    assert set(data["signals"]) == {
        "stock_phrases",
        "uniform_sentences",
        "low_lexical_diversity",
        "repetition",
        "connective_openers",
    }
    assert data["statistics_used"] is True
    assert data["summary"] and len(data["summary"]) == len(data["summary_ro"])


@pytest.mark.parametrize("evasion", EVASIONS)
def test_disguised_assistant_text_scores_the_same(evasion: str) -> None:
    """Hidden or look-alike characters change neither the signals nor the probability."""
    disguised = EVASIONS[evasion](ASSISTANT_RO)
    report = assess_machine_text(disguised)
    assert report.probability == assess_machine_text(ASSISTANT_RO).probability
    assert all(disguised[f.start : f.end] == f.text for f in report.phrases)
    plain = [f.text for f in assess_machine_text(ASSISTANT_RO).phrases]
    assert [normalise(f.text).text for f in report.phrases] == plain
