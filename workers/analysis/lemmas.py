"""Words of a text with their lemmas, for lexicons written as lemmas ("trădător", "parasite").

Lemmas come from simplemma's Romanian and English dictionaries, shipped in its wheel. A
lexicon lemma then matches every inflection ("trădătorii", "parasites"), and, through the
folded inflections of the lexicon's own lemmas, text typed without diacritics too
("tradatorii": simplemma only knows the spelling with them).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Collection, Mapping, Sequence
from functools import cache
from typing import Literal, NamedTuple

from simplemma import Lemmatizer
from simplemma.strategies import DefaultStrategy
from simplemma.strategies.dictionaries import DefaultDictionaryFactory

from workers.analysis.text import fold

Language = Literal["en", "ro"]
LANGUAGES: tuple[Language, ...] = ("en", "ro")

# Letters or digits; hyphens and apostrophes split ("treziți-vă", "don't"), so a clitic
# never hides the word it is attached to. A number glued to a unit of time is two words
# ("in 24h", "within 48hrs", "doar 30min": a deadline as SMS lures write it). Possessive:
# linear on any input. (The learned models' features split words their own way:
# text_features.py.)
_TOKEN = re.compile(r"\d++(?=(?:h|hrs?|min|mins)(?![^\W_]))|[^\W_]++")
# ... and the unit glued to a number is read as the unit spelt out, in either language's
# lexicons (`time_unit`); "H&M" or "min" on their own stay what they are.
_GLUED_UNITS = {"h": "hours", "hr": "hours", "hrs": "hours", "min": "minutes", "mins": "minutes"}
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
# A sentence is one language's when it has this many of its function words and none of
# the other's: one may be the other's word ("in" is English, and Romanian "în" folded).
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
    # Words of one run are contiguous in the text: a text read in one language is one run;
    # a sentence read in the other language only starts a new run after it.
    run: int = 0


@cache
def _dictionaries() -> DefaultDictionaryFactory:
    """One loaded copy of each language's dictionary per process, shared by every lookup."""
    return DefaultDictionaryFactory(cache_max_size=len(LANGUAGES))


class WordStrategy(DefaultStrategy):
    """simplemma's default search, asking only the two of its steps that can answer for a
    Romanian or English word of letters and digits: the dictionary, then the rules.

    The others look for an apostrophe (Turkish), a hyphen or an English contraction
    ("n't", "'s"; a word with the modifier letter "ʼ", a letter to Python, is searched in
    full), or decompose prefixes, affixes and morphemes of other languages, so for such a
    word they return nothing, and asking them cost about half of each unknown word's time
    (a text of 2,000 made-up words paid it 4,000 times). Any other token, or language,
    takes the whole search. The same lemmas: tests/unit/analysis/test_lemmas.py
    compares the two on every word of the labelled texts and on made-up ones.
    """

    def _search_pipeline(self, token: str, lang: str) -> str | None:
        # "ʼ" (U+02BC) is a letter to Python and an apostrophe to the contractions' step.
        if lang in LANGUAGES and token.isalnum() and not token.isnumeric() and "ʼ" not in token:
            return self._dictionary_lookup.get_lemma(token, lang) or self._rules_search.get_lemma(
                token, lang
            )
        return super()._search_pipeline(token, lang)


@cache
def lemmatizer() -> Lemmatizer:
    """The process's lemmatiser: its dictionaries load on first use of each language."""
    strategy = WordStrategy(dictionary_factory=_dictionaries())
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


def languages_of(counts: Tally) -> tuple[Language, ...]:
    """The language(s) of words with these function-word `counts`; both when unclear."""
    ro, en = counts["ro"], counts["en"]
    if ro > _LANGUAGE_MARGIN * en:
        return ("ro",)
    if en > _LANGUAGE_MARGIN * ro:
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

    Sentence by sentence (`sentence_ends`: offsets, sorted): a sentence clearly in one
    language (`_sentence_languages`) is read in it, in a text that mixes both; in a text in
    one language, in the text's language and its own. Any other sentence (short, a list of
    words, switching) is read in the text's language, or in both if the text does not tell.
    `folded` is `fold(text)` (same offsets); `keys_of` lemmatises each word once per language.
    """
    words = _words(folded)
    # Function words per sentence, for the sentences that hold any.
    counts: dict[int, Tally] = {}
    for start, _, word in words:
        for language in _FUNCTION_LANGUAGES.get(word, ()):
            sentence = bisect_right(sentence_ends, start)
            counts.setdefault(sentence, dict.fromkeys(LANGUAGES, 0))[language] += 1
    languages = languages_of({lang: sum(c[lang] for c in counts.values()) for lang in LANGUAGES})
    found: dict[Language, list[Token]] = {}
    runs: dict[Language, tuple[int, int]] = {}  # language → its run, where its words stop
    for lo, hi, own in _readings(words, sentence_ends, counts, languages):
        for language in own:
            run, stop = runs.get(language, (0, lo))
            run += stop != lo
            runs[language] = (run, hi)
            keys = keys_of[language]
            found.setdefault(language, []).extend(
                Token(start, end, keys(_surface(text, folded, start, end, word), word), run)
                for start, end, word in words[lo:hi]
            )
    return found


def _words(folded: str) -> list[tuple[int, int, str]]:
    """(start, end, folded word) of each word; a unit glued to a number spelt out."""
    found: list[tuple[int, int, str]] = []
    for match in _TOKEN.finditer(folded):
        word = match.group()
        unit = _GLUED_UNITS.get(word)
        if unit and found and found[-1][1] == match.start() and found[-1][2].isdigit():
            word = unit
        found.append((match.start(), match.end(), word))
    return found


def _surface(text: str, folded: str, start: int, end: int, word: str) -> str:
    """The word as written, to lemmatise; a glued unit's spelt-out word instead."""
    return text[start:end] if folded[start:end] == word else word


Word = tuple[int, int, str]  # start, end, folded word
Reading = tuple[int, int, tuple[Language, ...]]  # words [lo, hi), the languages read in


def _readings(
    words: Sequence[Word],
    sentence_ends: Sequence[int],
    counts: Mapping[int, Tally],
    languages: tuple[Language, ...],
) -> list[Reading]:
    """The text's words in ranges, in order, each with the languages it is read in: the
    text's `languages`, but for the sentences whose function words (`counts`) say otherwise.
    A word's sentence is the first whose end lies after its start."""
    starts = [start for start, _, _ in words]
    readings: list[Reading] = []
    at = 0
    for sentence, tally in sorted(counts.items()):
        own = _sentence_languages(tally)
        if len(own) > 1:
            own = languages
        elif len(languages) == 1 and own != languages:
            own = LANGUAGES
        if own == languages:
            continue
        lo = bisect_left(starts, sentence_ends[sentence - 1]) if sentence else 0
        ends = sentence < len(sentence_ends)
        hi = bisect_left(starts, sentence_ends[sentence]) if ends else len(words)
        if at < lo:
            readings.append((at, lo, languages))
        readings.append((lo, hi, own))
        at = hi
    if at < len(words):
        readings.append((at, len(words), languages))
    return readings


def _sentence_languages(counts: Tally) -> tuple[Language, ...]:
    """The one language a sentence is clearly in (SENTENCE_LEAST of its function words and
    none of the other's), else both: a sentence that switches ("Ei spun că globalists are
    parasites") is read in both."""
    ro, en = counts["ro"], counts["en"]
    if ro >= SENTENCE_LEAST and not en:
        return ("ro",)
    if en >= SENTENCE_LEAST and not ro:
        return ("en",)
    return LANGUAGES


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
    keys = {folded, fold(lemma), *guesses}
    inflected = inflections.get(folded)
    if inflected:
        keys.add(inflected)
    keys.discard("")
    return frozenset(keys)


# English endings the dictionary sometimes keeps as a word of their own ("feeding" is a
# noun to it): an unknown word also offers its bare forms as keys.
_ENGLISH_ENDINGS = (("ing", ""), ("ing", "e"), ("ed", ""), ("ed", "e"), ("ies", "y"), ("s", ""))
_ENDING_LETTERS = tuple({end[-1] for end, _ in _ENGLISH_ENDINGS})


def _english_stems(word: str) -> tuple[str, ...]:
    if not word.endswith(_ENDING_LETTERS):  # most words: no ending to take off
        return ()
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
    if bare != word:  # the word itself the dictionary was asked about already
        lemma = lemmatizer().lemmatize(bare, "ro")
        if lemma != bare:
            return lemma
    return next((bare[: -len(end)] + rest for end, rest in _PLURALS if _strips(bare, end)), word)


def _strips(word: str, ending: str) -> bool:
    return word.endswith(ending) and len(word) > len(ending) + 2
