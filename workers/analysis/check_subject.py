"""Whether a sentence speaks of what a fact check checked: the check's subject words.

Trigram similarity rewards shared wording, and two sentences about Romania in the EU in
2023 share most of theirs whatever they are about: "Inflația din România a fost cea mai
mare din Uniunea Europeană în 2023" and "România a avut în 2023 cea mai ridicată rată a
deceselor rutiere din Uniunea Europeană" score 0.53, over the match threshold; so do a
check that pensions will be cut "from 1 January" and a satire whose prices change "from
1 January". What a check is about lies in its less common words ("inflația", "pensiile",
"tăiate"), not in the country, the union or the date: a match needs at least half of
them in the sentence (`speaks_of`).

A word's commonness is its Zipf frequency in `wordfreq`'s word list of the check's
language (English or Romanian; for a check of another or unknown language, the larger of
the two; the lists ship in the package), looked up folded. Both texts are normalised and
folded, and words are compared by their first STEM letters (four for a four-letter word),
so an inflected form counts ("pensiile", "pensii"). Pure; each check's subject words are
remembered.
"""

from __future__ import annotations

import math
import re
from functools import cache, lru_cache

from wordfreq import freq_to_zipf, get_frequency_dict

from workers.analysis.text import comparison_form, fold

# A word at least this common (Zipf 4.5: some 30 times per million words) in the check's
# language says little of its subject: "România", "Uniunea", "mare", "January", "people".
SUBJECT_ZIPF = 4.5
# Words shorter than this are function words, figures' units or names' initials.
MIN_LETTERS = 4
# Letters compared: enough to tell words apart, few enough that inflections agree (a
# four-letter subject word, "lung", is compared by its four).
STEM = 5
# Where every word of a check is common, its rarest ones are its subject.
FALLBACK_WORDS = 2
LANGUAGES = ("en", "ro")
_WORD = re.compile(r"[^\W\d_]+")


@cache
def _zipf_table(language: str) -> dict[str, float]:
    """Folded word → Zipf frequency in `wordfreq`'s small list of `language`: a check typed
    without diacritics ("Inflatia din Romania") finds its words' frequencies too."""
    table: dict[str, float] = {}
    for word, frequency in get_frequency_dict(language, wordlist="small").items():
        key = fold(word)
        table[key] = max(table.get(key, 0.0), freq_to_zipf(frequency))
    return table


def _commonness(folded_word: str, language: str) -> float:
    languages = (language,) if language in LANGUAGES else LANGUAGES
    return max(_zipf_table(lang).get(folded_word, 0.0) for lang in languages)


@lru_cache(maxsize=4096)
def subject_words(checked_claim: str, language: str = "und") -> tuple[str, ...]:
    """The words of a checked claim (in `language`) that say what it is about: stems,
    rarest first. Read like the sentences it is compared with (normalised, folded)."""
    words = {w for w in _WORD.findall(comparison_form(checked_claim)) if len(w) >= MIN_LETTERS}
    common = {w: _commonness(w, language) for w in words}
    ranked = sorted(words, key=lambda w: (common[w], w))
    subject = [w for w in ranked if common[w] < SUBJECT_ZIPF] or ranked[:FALLBACK_WORDS]
    return tuple(dict.fromkeys(w[:STEM] for w in subject))


def speaks_of(checked_claim: str, sentence: str, language: str = "und") -> bool:
    """Whether `sentence` holds at least half of the subject words of the checked claim (in
    `language`); a check with no word to judge by is not held against the sentence."""
    subject = subject_words(checked_claim, language)
    if not subject:
        return True
    # Normalised first: hidden, fullwidth or look-alike letters hide no word.
    words = _WORD.findall(comparison_form(sentence))
    present = {w[:STEM] for w in words} | {w[: STEM - 1] for w in words}
    return sum(stem in present for stem in subject) >= math.ceil(len(subject) / 2)


def prepare() -> None:
    """Load the word lists now (the fork server's warm-up), not in the first task."""
    for language in LANGUAGES:
        _zipf_table(language)
