"""The analysers remember what they learnt of a word across texts, but never a word no
dictionary holds: a text of 100,000-letter words must not fill a process's memory."""

from __future__ import annotations

from workers.analysis.claim_forms import _patterns
from workers.analysis.claims import extract_claims
from workers.analysis.lemmas import MAX_WORD
from workers.analysis.techniques import assess_techniques, default_lexicon
from workers.analysis.term_index import MEMO_WORD_MAX


def _longest(keys) -> int:
    return max((len(k) if isinstance(k, str) else max(map(len, k), default=0)) for k in keys)


def test_a_hundred_thousand_letter_word_is_analysed_but_not_remembered() -> None:
    words = ["cur" + "a" * 100_000, "trădător" + "i" * 50_000, "secret" + "e" * 70_000]
    text = "Ei sunt trădători, " + " ".join(words) + " și paraziți. They are traitors."
    assess_techniques(text)
    extract_claims(text)
    lexicon = default_lexicon()
    for language in ("ro", "en"):
        assert _longest([*lexicon.words[language]._memo, "x"]) <= MAX_WORD
        assert _longest([*lexicon.cues[language]._memo, frozenset({"x"})]) <= MAX_WORD
    assert _longest([*lexicon.term_index._memo, "x"]) <= MEMO_WORD_MAX
    assert _longest([*_patterns().index._memo, "x"]) <= MEMO_WORD_MAX
    # … and the short words of the same text are remembered.
    assert "paraziți" in lexicon.words["ro"]._memo
