"""Ways a text is rewritten to slip past a lexicon while reading the same to a person."""

from collections.abc import Callable

# Latin letters and the Cyrillic letters that look like them.
_CYRILLIC = str.maketrans("aeopcxyiAEOPCXYHKMTBSIj", "аеорсхуіАЕОРСХҮНКМТВЅІј")


def zero_width(text: str) -> str:
    """A zero-width space between every two characters."""
    return "\u200b".join(text)


def cyrillic_look_alikes(text: str) -> str:
    """Every Latin letter that has a Cyrillic twin replaced by it."""
    return text.translate(_CYRILLIC)


def fullwidth(text: str) -> str:
    """Every printable ASCII character in its fullwidth form (ＳＨＯＣＫ)."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def bidi_controls(text: str) -> str:
    """Bidi embeddings around the text and an isolate after every space."""
    return "\u202a" + text.replace(" ", " \u2066") + "\u202c"


EVASIONS: dict[str, Callable[[str], str]] = {
    "zero_width": zero_width,
    "cyrillic": cyrillic_look_alikes,
    "fullwidth": fullwidth,
    "bidi": bidi_controls,
}
