"""What the blind-round tests ask of the pure analysers, in one place."""

from __future__ import annotations

from workers.analysis import claims, techniques
from workers.analysis.wording_model import WordingModel

# The flag threshold of every component (scripts/evaluate.py).
FLAGGED = 50


def claims_score(text: str, learned: WordingModel | None = None) -> float:
    """The claims component's score of `text` with no fact check matching any claim."""
    found = claims.extract_claims(text, learned=learned)
    return claims.score_claims(found, [claims.UNVERIFIABLE] * len(found))


def kinds(text: str) -> set[str]:
    """The technique families the lexicon alone finds in `text` (no learned cue)."""
    return {f.kind for f in techniques.assess_techniques(text, learned=False).findings}
