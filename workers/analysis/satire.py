"""Satire credited to its outlet: a text that opens with the outlet's name and a colon
("Times New Roman: Românii cer…") or names the outlet's site. The name alone is not enough:
"the onion", "Times New Roman" (the font) and "a daily mash" are ordinary words elsewhere.
And a satire label taken back at once ("satire obv but: …"), which marks nothing as a joke."""

from __future__ import annotations

import re

# Satire outlets by their folded names (lower case, no diacritics) and their sites.
OUTLETS = (
    "the onion",
    "times new roman",
    "the daily mash",
    "newsthump",
    "the babylon bee",
    "academia catavencu",
    "waterford whispers news",
    "the beaverton",
    "the chaser",
)
SITES = (
    "theonion.com",
    "timesnewroman.ro",
    "thedailymash.co.uk",
    "newsthump.com",
    "babylonbee.com",
    "catavencu.ro",
    "catavencii.ro",
    "waterfordwhispersnews.com",
    "thebeaverton.com",
    "chaser.com.au",
)

_OPENING = re.compile(r"\A\W{0,3}+(?:" + "|".join(re.escape(o) for o in OUTLETS) + r")\s{0,3}+[:|]")
_SITE = re.compile(
    r"(?<![\w.-])(?:www\.)?(?:" + "|".join(re.escape(s) for s in SITES) + r")(?![\w-])"
)


# A satire label taken back at once: "satire obv 😉 but: …", "*satira* (sau nu?? 🤔)",
# "parody (or is it?)". The label then covers what it introduces instead of marking a joke
# (round 20): within a few words of the label, a "but", "or not" or "or is it".
_DISOWNED = re.compile(
    r"\b(?:satire|satirical|parody|satira|satiric\w{0,3}|parodie|pamflet)\b"
    r"(?:\W{1,6}+\w{1,12}+)??\W{1,8}+"
    r"(?:but|dar|insa|(?:sau|or) (?:nu|not)|or is it|sau poate nu)\b"
    # ... or denied before it: "this is NOT satire:", "nu e satiră!", "no parody", and a
    # satire said to be over ("satire is dead: …") (round 23)
    r"|\b(?:not|isn'?t|no|nu e|nu este|nu-i|nu|nicio|niciun)\W{1,3}+(?:a\W{1,3}+|o\W{1,3}+)?"
    r"(?:satire|satirical|parody|joke|satira|satiric\w{0,3}|parodie|pamflet|gluma)\b"
    r"|\b(?:satire|satira) (?:is|e|este) (?:dead|moarta)\b"
)


def satire_disowned(folded: str) -> bool:
    """Whether a satire label in the folded text is taken back within a few words of it
    ("satire obv but:", "satira (sau nu??)"): then it marks nothing as a joke. Pure."""
    return bool(_DISOWNED.search(folded))


def credited_to_satire(folded: str) -> bool:
    """Whether the folded text opens with a satire outlet's credit or names its site. Pure."""
    return bool(_OPENING.match(folded) or _SITE.search(folded))
