"""Words of a text with their lemmas, for lexicons written as lemmas ("trădător", "parasite").

Lemmas come from simplemma's Romanian and English dictionaries, shipped in its wheel. A
lexicon lemma then matches every inflection ("trădătorii", "parasites"), and, through the
folded inflections of the lexicon's own lemmas, text typed without diacritics too
("tradatorii": simplemma only knows the spelling with them).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Collection, Iterable, Mapping, Sequence
from functools import cache
from typing import Literal, NamedTuple

from simplemma import Lemmatizer
from simplemma.strategies import DefaultStrategy
from simplemma.strategies.dictionaries import DefaultDictionaryFactory

from workers.analysis.text import fold

Language = Literal["en", "ro"]
LANGUAGES: tuple[Language, ...] = ("en", "ro")

# Letters or digits; hyphens and apostrophes split ("treziți-vă", "don't"), so a clitic
# never hides the word it is attached to. Possessive: linear on any input.
_TOKEN = re.compile(r"[^\W_]++")
# A token that is a number stands for this lemma ("only 24 hours left").
NUMBER = "#number"
# Frequent function words that tell the two languages apart, folded.
_FUNCTION_WORDS: Mapping[Language, frozenset[str]] = {
    "en": frozenset(
        [
            "the",
            "and",
            "of",
            "to",
            "is",
            "are",
            "that",
            "this",
            "it",
            "you",
            "they",
            "we",
            "with",
            "for",
            "was",
            "be",
            "not",
            # short texts (phishing) may hold none of the above: "your", "by", "will"
            "your",
            "our",
            "my",
            "by",
            "from",
            "have",
            "has",
            "will",
            "here",
            "at",
        ]
    ),
    "ro": frozenset(
        [
            "si",
            "in",
            "de",
            "la",
            "ca",
            "nu",
            "este",
            "sunt",
            "sa",
            "pe",
            "cu",
            "din",
            "un",
            "o",
            "ei",
            "noi",
            "vor",
            "care",
        ]
    ),
}
# One language is the text's when it has this many times the other's function words.
_LANGUAGE_MARGIN = 2.0
# A sentence is one language's when it has this many of its function words too: one may
# be the other's word ("in" is English, and Romanian "în" folded).
SENTENCE_LEAST = 2
# Words longer than this are no dictionary's: not worth a lookup (a 100k-letter "word"),
# nor a place in a memo (50,000 of them would hold gigabytes).
MAX_WORD = 40
# Distinct words whose lemma keys a process remembers (about 10 MB at most).
MEMO_LIMIT = 50_000


class Token(NamedTuple):
    """A word's span in the text and the lemma keys it matches (folded lemmas, the word).
    A tuple: a 5,000-character text makes about 800 of them per language."""

    start: int
    end: int
    keys: frozenset[str]


@cache
def _dictionaries() -> DefaultDictionaryFactory:
    """One loaded copy of each language's dictionary per process, shared by every lookup."""
    return DefaultDictionaryFactory(cache_max_size=len(LANGUAGES))


@cache
def lemmatizer() -> Lemmatizer:
    """The process's lemmatiser: its dictionaries load on first use of each language."""
    strategy = DefaultStrategy(dictionary_factory=_dictionaries())
    return Lemmatizer(cache_max_size=65536, lemmatization_strategy=strategy)


def folded_inflections(language: Language, lemmas: Collection[str]) -> dict[str, str]:
    """Folded inflection → folded lemma, for the dictionary's forms of `lemmas` (folded).

    Built once per lexicon: it lets a word typed without diacritics find its lemma.
    """
    found = {lemma: lemma for lemma in lemmas}
    # Each lemma is folded once: the dictionary holds several forms of each.
    folded: dict[str, str] = {}
    for form, lemma in _dictionaries().get_dictionary(language).items():
        key = folded.get(lemma)
        if key is None:
            key = folded[lemma] = fold(lemma)
        if key in lemmas:
            found.setdefault(fold(form), key)
    return found


def prepare() -> None:
    """Load both dictionaries now (the fork server's warm-up), not in the first task."""
    for language in LANGUAGES:
        lemmatizer().lemmatize("a", language)


# Folded function word → the languages it is one of.
_FUNCTION_LANGUAGES: Mapping[str, tuple[Language, ...]] = {
    word: tuple(lang for lang in LANGUAGES if word in _FUNCTION_WORDS[lang])
    for word in frozenset().union(*_FUNCTION_WORDS.values())
}

Tally = dict[Language, int]


def _tally(folded_words: Iterable[str]) -> Tally:
    """How many function words of each language the words hold."""
    counts = dict.fromkeys(LANGUAGES, 0)
    for word in folded_words:
        for language in _FUNCTION_LANGUAGES.get(word, ()):
            counts[language] += 1
    return counts


def languages_of(counts: Tally, least: int = 1) -> tuple[Language, ...]:
    """The language(s) of words with these function-word `counts` (at `least` this many of
    the language they are in); both when unclear."""
    ro, en = counts["ro"], counts["en"]
    if ro >= least and ro > _LANGUAGE_MARGIN * en:
        return ("ro",)
    if en >= least and en > _LANGUAGE_MARGIN * ro:
        return ("en",)
    return LANGUAGES


class WordKeys:
    """Lemma keys of words in one language for one lexicon, remembered across texts (up to
    MEMO_LIMIT words of up to MAX_WORD letters, so no text can grow it without bound)."""

    def __init__(self, language: Language, inflections: Mapping[str, str]) -> None:
        self.language = language
        self.inflections = inflections
        self._memo: dict[str, frozenset[str]] = {}

    def __call__(self, word: str, folded: str) -> frozenset[str]:
        keys = self._memo.get(word)
        if keys is None:
            keys = _keys(word.lower(), folded, self.language, self.inflections)
            if len(self._memo) < MEMO_LIMIT and len(word) <= MAX_WORD:
                self._memo[word] = keys
        return keys


def tokens(
    text: str, folded: str, keys_of: Mapping[Language, WordKeys], sentence_ends: Sequence[int]
) -> dict[Language, list[Token]]:
    """The words of `text` (normalised) with their lemma keys, per language they are read in.

    Sentence by sentence (`sentence_ends`: offsets, sorted): a sentence whose function words
    tell its language is read in it, in a text that mixes both; in a text in one language,
    it is read in the text's language and its own. Any other sentence (short, a list of
    words) is read in the text's language, or in both if the text does not tell either.
    `folded` is `fold(text)` (same offsets); `keys_of` lemmatises each word once per language.
    """
    sentences = _by_sentence(
        [(m.start(), m.end(), m.group()) for m in _TOKEN.finditer(folded)], sentence_ends
    )
    counts = [_tally(word for _, _, word in sentence) for sentence in sentences]
    languages = languages_of({lang: sum(c[lang] for c in counts) for lang in LANGUAGES})
    found: dict[Language, list[Token]] = {}
    for sentence, sentence_counts in zip(sentences, counts, strict=True):
        own = languages_of(sentence_counts, SENTENCE_LEAST)
        if len(own) > 1:
            own = languages
        elif len(languages) == 1 and own != languages:
            own = LANGUAGES
        for language in own:
            keys = keys_of[language]
            found.setdefault(language, []).extend(
                Token(start, end, keys(text[start:end], word)) for start, end, word in sentence
            )
    return found


Word = tuple[int, int, str]  # start, end, folded word


def _by_sentence(words: Sequence[Word], sentence_ends: Sequence[int]) -> list[list[Word]]:
    """`words` in runs of one sentence each, in order (a word's sentence is the first whose
    end lies after its start)."""
    runs: list[list[Word]] = []
    sentence = -1
    for word in words:
        at = bisect_right(sentence_ends, word[0])
        if at != sentence:
            runs.append([])
            sentence = at
        runs[-1].append(word)
    return runs


def _keys(
    word: str, folded: str, language: Language, inflections: Mapping[str, str]
) -> frozenset[str]:
    if folded.isdigit():
        return frozenset((NUMBER,))
    if len(word) > MAX_WORD:
        return frozenset((folded,))
    lemma = lemmatizer().lemmatize(word, language)
    guesses: tuple[str, ...] = ()
    if lemma == word and language == "ro":
        lemma = _without_article(word)
    elif lemma == word:
        guesses = _english_stems(folded)
    keys = (folded, fold(lemma), inflections.get(folded), *guesses)
    return frozenset(k for k in keys if k)


# English endings the dictionary sometimes keeps as a word of their own ("feeding" is a
# noun to it): an unknown word also offers its bare forms as keys.
_ENGLISH_ENDINGS = (("ing", ""), ("ing", "e"), ("ed", ""), ("ed", "e"), ("ies", "y"), ("s", ""))


def _english_stems(word: str) -> tuple[str, ...]:
    return tuple(word[: -len(end)] + rest for end, rest in _ENGLISH_ENDINGS if _strips(word, end))


# Romanian definite endings, longest first: the dictionary lacks some articled plurals
# ("refugiații"), whose bare form it knows ("refugiați" → "refugiat").
_ARTICLES = (("ilor", "i"), ("lor", ""), ("lui", ""), ("ii", "i"), ("ul", ""), ("le", ""))
# Plurals and their singulars, for words it lacks altogether ("pesediști", "feministe").
_PLURALS = (("ști", "st"), ("ți", "t"), ("și", "s"), ("zi", "d"), ("i", ""), ("e", "ă"))


def _without_article(word: str) -> str:
    """The lemma of a Romanian word the dictionary does not know, through its bare form,
    or through the singular of that form if the dictionary lacks it too."""
    bare = next((word[: -len(end)] + rest for end, rest in _ARTICLES if _strips(word, end)), word)
    lemma = lemmatizer().lemmatize(bare, "ro")
    if lemma != bare:
        return lemma
    return next((bare[: -len(end)] + rest for end, rest in _PLURALS if _strips(bare, end)), word)


def _strips(word: str, ending: str) -> bool:
    return word.endswith(ending) and len(word) > len(ending) + 2
