"""The analysers remember what they learnt of a word across texts, but never a word no
dictionary holds: a text of 100,000-letter words must not fill a process's memory."""

from __future__ import annotations

from workers.analysis.claim_forms import (
    MEMO_SENTENCE_MAX,
    SENTENCE_MEMO,
    _patterns,
    sentence_forms,
    sentence_register,
)
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


def test_claims_remember_short_sentences_only_and_a_bounded_number_of_them() -> None:
    """A repeated line is read once; a long sentence is never kept, and the memo has a size."""
    before = sentence_forms.memo.cache_info()
    extract_claims("Distribuiți urgent! " * 50)
    after = sentence_forms.memo.cache_info()
    assert after.hits - before.hits >= 49  # the same line, read once
    size = after.currsize
    sentence_forms("Vaccinul " + "a" * (MEMO_SENTENCE_MAX + 1) + " conține 40% aluminiu.")
    assert sentence_forms.memo.cache_info().currsize == size
    assert sentence_forms.memo.cache_info().maxsize == SENTENCE_MEMO
    assert sentence_register.memo.cache_info().maxsize == SENTENCE_MEMO
