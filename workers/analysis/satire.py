"""Satire credited to its outlet: a text that opens with the outlet's name and a colon
("Times New Roman: Românii cer…") or names the outlet's site. The name alone is not enough:
"the onion", "Times New Roman" (the font) and "a daily mash" are ordinary words elsewhere."""

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
)
SITES = (
    "theonion.com",
    "timesnewroman.ro",
    "thedailymash.co.uk",
    "newsthump.com",
    "babylonbee.com",
    "catavencu.ro",
)

_OPENING = re.compile(r"\A\W{0,3}+(?:" + "|".join(re.escape(o) for o in OUTLETS) + r")\s{0,3}+[:|]")
_SITE = re.compile(
    r"(?<![\w.-])(?:www\.)?(?:" + "|".join(re.escape(s) for s in SITES) + r")(?![\w-])"
)


def credited_to_satire(folded: str) -> bool:
    """Whether the folded text opens with a satire outlet's credit or names its site. Pure."""
    return bool(_OPENING.match(folded) or _SITE.search(folded))
