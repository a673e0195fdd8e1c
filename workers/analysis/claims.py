"""Check-worthy claims: extraction (text in, claims out) and the risk of verified claims.

The forms and register of a claim are read by `claim_forms` (lexicons and weights in
`data/claims.yaml`). Verification (the fact-check store, an evidence provider) happens
elsewhere; this module scores its outcome: a claim a fact check rated false is high, an
unverified claim is as risky as its forms and register say.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from workers.analysis.chat_speak import read_form
from workers.analysis.check_subject import speaks_of
from workers.analysis.claim_forms import (
    ATTRIBUTING,
    ClaimsSpec,
    answered_no,
    asks_to_act_through_a_link,
    checkworthiness,
    claims_spec,
    is_claim,
    left_unsupported,
    names_no_source,
    rebuts_outright,
    rumoured,
    sentence_forms,
    sentence_register,
    states_statistic,
    text_registers,
    unsupported_next,
    unverified_risk,
)
from workers.analysis.domains import extract_hosts
from workers.analysis.findings import combine_probabilities, evidence_quote
from workers.analysis.normalise import NormalisedText
from workers.analysis.techniques import context_words
from workers.analysis.text import Sentence, clip, comparison_form, fold, sentences
from workers.analysis.text import words as word_tokens
from workers.analysis.wording_model import WordingModel, shipped_claims_model

MAX_CLAIMS = 10
# Claims are looked up as sentences; a run-on paragraph is cut to a comparable length.
MAX_CLAIM_CHARS = 300

# At most this many sentences are read: more than any article has, and the bound on
# the work a text of short sentences can ask for.
MAX_SENTENCES = 1500


@dataclass(frozen=True)
class Claim:
    """A sentence worth checking, where it is, its forms and register, and how
    check-worthy (0..1) and, unverified, how risky (0-100) it is."""

    text: str
    start: int
    end: int
    cues: tuple[str, ...]
    checkworthiness: float
    register: tuple[str, ...] = ()

    @property
    def unverified_risk(self) -> float:
        return unverified_risk(self.cues, self.register)


@dataclass(frozen=True)
class Verification:
    """What is known of one claim: a matching fact check, a provider's answer, or nothing."""

    status: Literal["matched", "evidence", "unverifiable"]
    rating: str | None = None
    similarity: float | None = None
    checked_claim: str | None = None
    source: str | None = None
    url: str | None = None


UNVERIFIABLE = Verification("unverifiable")


def claim_policy() -> ClaimsSpec:
    """Risk levels and thresholds from `data/claims.yaml`."""
    return claims_spec()


def extract_claims(text: str, learned: WordingModel | None = None) -> list[Claim]:
    """Check-worthy sentences of `text`, the most check-worthy first, at most MAX_CLAIMS.

    Forms are read in the normalised text; each claim's span and text are the original's.
    The learned claims model (`learned`, else the shipped one) adds its register to every
    claim of a text it reads as asserting false or unverified claims, and where the forms
    found none risky, makes its most claim-like sentence a claim (`learned_claim`).
    """
    clean = read_form(text)
    found = sentences(clean.text)[:MAX_SENTENCES]
    own = [sentence_register(s.text) for s in found]
    registers = text_registers([s.text for s in found], own)
    attributed = any(ATTRIBUTING & set(r) for r in registers)
    claims = [
        c
        for i, (s, r) in enumerate(zip(found, registers, strict=True))
        if (c := _as_claim(s, r, own[i], clean, attributed, *_unsupported_after(found, own, i)))
    ]
    claims, lure = _without_lure_threats(claims, clean.text)
    rule = claim_policy().risk
    # A text that rebuts a claim it reports is worded like the claim it quotes: the model
    # cannot tell the two apart, so it does not read a debunk. Labelled satire asserts
    # nothing either. A rebuttal of one sentence's own words ("taken out of context") does
    # not stop it: "They will say it was taken out of context" opens a claim as often.
    rebutted = any(
        "debunked" in r and not rebuts_outright(s.text)
        for s, r in zip(found, registers, strict=True)
    ) or answered_no([s.text for s in found])
    if not rebutted and not any("satire" in r for r in registers):
        model = learned or shipped_claims_model()
        # The prefix of the normalised text: invisible padding cannot push the words out.
        words = context_words(_model_prefix(clean.text))
        probability = model.probability(words)
        if probability >= rule.learned_from:
            claims = [
                _with_register(c, "learned_wording") if _supportable(c, rule.learned_beside) else c
                for c in claims
            ]
        if (
            not lure
            and probability >= rule.learned_alone
            and len(words) >= MIN_LEARNED_WORDS
            and not any(_risky_unverified(c) for c in claims)
        ):
            claims = _with_learned_claim(claims, found, registers, clean, model)
    # Risky claims first among equally check-worthy ones: they are the ones to report.
    claims.sort(key=lambda c: (-c.checkworthiness, -c.unverified_risk, c.start))
    kept = claims[:MAX_CLAIMS]
    # The model's claim is the text's only risky one: more calm claims must not cut it.
    learned_claim = next((c for c in claims if "learned_claim" in c.register), None)
    if learned_claim is not None and learned_claim not in kept:
        kept = [*kept[: MAX_CLAIMS - 1], learned_claim]
    return kept


# Forms that alone say nothing check-worthy about the world.
BARE_FORMS = frozenset({"number", "date", "named_entity", "absolute", "superlative"})


# The model reads a text's first MAX_WORDS (200) words; reading their context from this many
# characters is enough (a word is some 7 with its space) and bounds the cost on long texts:
# the whole 5,000 characters cost 7 ms more per claims task, this prefix about 3 ms.
MODEL_TEXT_CHARS = 2_000
# The model's own claim is looked for among this many sentences of that prefix at most: a
# few milliseconds (some 50 µs a sentence), however many tiny sentences a text is cut into.
MAX_LEARNED_SENTENCES = 40
# ... in a text of this many words at least: on "Toxic!" or "Cancer!" its reading is a guess
# (dev's texts have 9 words or more, so this changes nothing measured there).
MIN_LEARNED_WORDS = 6
# The sentence it makes a claim of has this many words at least: "Da." or "Wow!" asserts
# nothing, however claim-like the text around it reads ("Vaccines cause autism" has three).
MIN_LEARNED_CLAIM_WORDS = 3


def _model_prefix(text: str) -> str:
    """The start of `text` the learned model reads, cut at a space."""
    if len(text) <= MODEL_TEXT_CHARS:
        return text
    cut = text.rfind(" ", 0, MODEL_TEXT_CHARS)
    return text[: cut if cut > 0 else MODEL_TEXT_CHARS]


def _risky_unverified(claim: Claim) -> bool:
    return claim.unverified_risk >= 100 * claim_policy().risk.risky_from


def _with_learned_claim(
    claims: list[Claim],
    found: Sequence[Sentence],
    registers: Sequence[tuple[str, ...]],
    clean: NormalisedText,
    model: WordingModel,
) -> list[Claim]:
    """`claims` with the sentence the model reads as the most claim-like (among the first
    MAX_LEARNED_SENTENCES of those it read, the normalised text's first MODEL_TEXT_CHARS)
    made a `learned_claim`: added, or the claim the forms made of it given that register.
    Sentences that name a source or hedge, or close a tip with a doctor to see, are passed
    over; none left, nothing changes."""
    readable = [
        i
        for i, (s, r) in enumerate(zip(found, registers, strict=True))
        if s.start < MODEL_TEXT_CHARS
        and not (ATTRIBUTING | {"referral"}) & set(r)
        and len(word_tokens(s.text)) >= MIN_LEARNED_CLAIM_WORDS
    ][:MAX_LEARNED_SENTENCES]
    candidates = [(model.probability(context_words(found[i].text)), i) for i in readable]
    if not candidates:
        return claims
    probability, best = max(candidates, key=lambda c: (c[0], -c[1]))
    sentence = found[best]
    for at, claim in enumerate(claims):
        if clean.span(sentence.start, sentence.start)[0] == claim.start:
            return [*claims[:at], _with_register(claim, "learned_claim"), *claims[at + 1 :]]
    forms = tuple(sentence_forms(sentence.text))
    start, end = clean.span(sentence.start, sentence.start + len(sentence.text[:MAX_CLAIM_CHARS]))
    quote = evidence_quote(clean.original, start, end)
    register = (*registers[best], "learned_claim")
    worth = max(checkworthiness(list(forms)), round(probability, 2))
    made = Claim(quote, start, start + len(quote), forms, worth, register)
    return [*claims, made]


def _lure_threat(claim: Claim) -> bool:
    return set(claim.register) - {"emotive"} == {"urgency"}


def _without_lure_threats(claims: list[Claim], text: str) -> tuple[list[Claim], bool]:
    """The claims of a text, less a lure's threats, and whether it threatens as a lure does:
    where it holds a link and asks its reader to act through it (`lure_calls`), a sentence
    pressed only by urgency is the lure's pressure, not a claim about the world, and the
    learned model makes no claim of such a text either (claims.yaml, `lure_calls`)."""
    if not any(_lure_threat(c) for c in claims):
        return claims, False
    if not asks_to_act_through_a_link(fold(text)) or not extract_hosts(text):
        return claims, False
    return [c for c in claims if not _lure_threat(c)], True


def _supportable(claim: Claim, beside: float) -> bool:
    """Whether the learned model may support a claim: one its forms make somewhat risky
    (`learned_beside`) and that says something about the world (a cause, a share, health,
    a group, an accusation…: not only a count, a date, a name or an "always"), that
    neither names a source nor rebuts, hedges or mocks itself."""
    return (
        claim.unverified_risk >= beside
        and bool(set(claim.cues) - BARE_FORMS)
        and not ATTRIBUTING & set(claim.register)
    )


def _with_register(claim: Claim, register: str) -> Claim:
    return dataclasses.replace(claim, register=(*claim.register, register))


def _unsupported_after(
    found: Sequence[Sentence], own: Sequence[Sequence[str]], i: int
) -> tuple[bool, bool]:
    """Whether sentence i gives someone's word that the next sentence leaves unsupported, and
    whether that sentence says the information has no known source at all."""
    if i + 1 >= len(found) or not unsupported_next(found[i].text, found[i + 1].text, own[i + 1]):
        return False, False
    return True, names_no_source(found[i + 1].text)


def _as_claim(
    sentence: Sentence,
    register: tuple[str, ...],
    own: Sequence[str],
    clean: NormalisedText,
    attributed: bool,
    unsupported_after: bool = False,
    no_source: bool = False,
) -> Claim | None:
    """The claim the sentence makes, if any: `register` is what it hears around it, `own` its
    own register (sentence_register). `unsupported_after`: the next sentence says the speaker
    gave nothing to support it; `no_source`: that the information has no known source, so
    the speaker named is none either."""
    forms = sentence_forms(sentence.text)
    if unsupported_after:  # the speaker's want of support, told in the next sentence
        own = [*own, "reported_claim", "unsourced"]
        if left_unsupported(own, register):
            added = (r for r in ("reported_claim", "unsourced") if r not in register)
            register = (*register, *added)
            if no_source:
                register = tuple(r for r in register if r != "sourced")
    if not is_claim(forms) and (rumoured(forms, register) or left_unsupported(own, register)):
        forms = [*forms, "rumour"]
    if not is_claim(forms):
        return None
    if "cure" in forms and "referral" in register:
        # "garlic cures pneumonia … see your GP if it persists": a cure answers to no doctor
        register = tuple(r for r in register if r != "referral")
    if not attributed and states_statistic(sentence.text):  # a share nobody is named for
        register = (*register, "unattributed_figure")
    start, end = clean.span(sentence.start, sentence.start + len(sentence.text[:MAX_CLAIM_CHARS]))
    text = evidence_quote(clean.original, start, end)
    return Claim(text, start, start + len(text), tuple(forms), checkworthiness(forms), register)


def with_model_claims(
    text: str, claims: Sequence[Claim], quotes: Iterable[str], limit: int = MAX_CLAIMS
) -> list[Claim]:
    """Claims with a model's quotes added: only quotes found in the (normalised) text, not
    overlapping a claim already there, up to `limit`; spans are the original's."""
    clean = read_form(text)
    folded = fold(clean.text)
    merged = list(claims)
    for quote in quotes:
        needle = read_form(quote.strip()).text
        at = folded.find(fold(needle)) if needle else -1
        if at < 0 or len(merged) >= limit:
            continue
        start, end = clean.span(at, at + len(needle))
        if not any(c.start <= start < c.end for c in merged):
            cues = (*sentence_forms(needle), "llm")
            quoted = evidence_quote(text, start, end)
            register = tuple(sentence_register(needle))
            merged.append(Claim(quoted, start, start + len(quoted), cues, 0.5, register))
    return merged


def claim_risk(claim: Claim, verification: Verification) -> float:
    """Risk 0-100 one claim contributes: its rating's when a check or provider rated it,
    else what its forms and register say (`Claim.unverified_risk`)."""
    if not _rated_against_text(claim, verification):
        return claim.unverified_risk
    ratings = claim_policy().rating_risk
    return float(ratings.get(verification.rating, ratings["unproven"]))  # type: ignore[call-overload]


def is_risky(claim: Claim, verification: Verification) -> bool:
    """Whether a claim raises the score on its own: rated (not true) by a check, or
    unverified in a risky form and register."""
    if _rated_against_text(claim, verification):
        return claim_risk(claim, verification) > 0
    return claim.unverified_risk >= 100 * claim_policy().risk.risky_from


# Ratings that agree with a text which itself rebuts the claim ("fact-checkers found no
# evidence"): the text says what the check says, so the rating is no evidence against it.
_REBUTTING_RATINGS = frozenset({"false", "misleading"})


def _rated_against_text(claim: Claim, verification: Verification) -> bool:
    """Whether a check or provider rated the claim and its rating is evidence about the
    text: not when the text debunks the claim and the rating agrees with it, nor when the
    text is labelled satire, which asserts nothing ("[PARODY] NASA finally admits the moon
    landing was filmed — on the moon")."""
    if verification.status == "unverifiable" or verification.rating is None:
        return False
    if "satire" in claim.register and verification.rating in _REBUTTING_RATINGS:
        return False
    return not ("debunked" in claim.register and verification.rating in _REBUTTING_RATINGS)


def score_claims(claims: Sequence[Claim], verifications: Sequence[Verification]) -> float:
    """Component risk: rated claims and risky unverified ones combine as independent
    evidence; the other unverified claims add a capped caution."""
    pairs = list(zip(claims, verifications, strict=True))
    evidence = [claim_risk(c, v) for c, v in pairs if is_risky(c, v)]
    calm = sum(claim_risk(c, v) for c, v in pairs if not is_risky(c, v))
    return combined_score(evidence, calm, claim_policy().risk.caution_cap)


def combined_score(evidence: Sequence[float], calm: float, caution_cap: float) -> float:
    """The risks (0-100) of the risky claims as independent evidence, with the calm ones'
    sum capped at `caution_cap` as one more. Pure."""
    caution = min(caution_cap, calm)
    return round(100.0 * combine_probabilities([r / 100 for r in [*evidence, caution]]), 1)


def report_data(claims: Sequence[Claim], verifications: Sequence[Verification]) -> dict[str, Any]:
    """JSON-ready evidence: each claim with its forms, register and verification; the
    unverified ones again under `unverified`; whether there was anything to check."""
    rows = [_row(c, v) for c, v in zip(claims, verifications, strict=True)]
    ranked = sorted(rows, key=lambda r: -r["risk"])
    unverified = [r for r in rows if r["status"] == "unverifiable"]
    return {
        "applicable": bool(rows),
        "evidence_count": sum(1 for r in rows if r["risky"]),
        "claims": rows,
        "claim_count": len(rows),
        "unverifiable": len(unverified),
        "unverified": [
            {k: r[k] for k in ("text", "start", "end", "cues", "register", "risk")}
            for r in ranked
            if r["status"] == "unverifiable"
        ],
        "summary": [_summary(r, "en") for r in ranked[:5]],
        "summary_ro": [_summary(r, "ro") for r in ranked[:5]],
    }


def _row(claim: Claim, verification: Verification) -> dict[str, Any]:
    return {
        "text": claim.text,
        "start": claim.start,
        "end": claim.end,
        "cues": list(claim.cues),
        "register": list(claim.register),
        "checkworthiness": claim.checkworthiness,
        "status": verification.status,
        "rating": verification.rating,
        "similarity": verification.similarity,
        "checked_claim": verification.checked_claim,
        "source": verification.source,
        "url": verification.url,
        "risk": claim_risk(claim, verification),
        "risky": is_risky(claim, verification),
    }


_RATINGS_RO = {
    "false": "fals",
    "misleading": "înșelător",
    "mixed": "parțial adevărat",
    "true": "adevărat",
}


def _summary(row: Mapping[str, Any], language: str) -> str:
    quoted = clip(row["text"], 70)
    en = language == "en"
    if row["status"] == "unverifiable" and row["risky"]:
        return f'"{quoted}": unverified, risky' if en else f"„{quoted}”: neverificat, riscant"
    if row["status"] == "unverifiable":
        return f'"{quoted}": unverifiable' if en else f"„{quoted}”: neverificabil"
    rating = row["rating"] if en else _RATINGS_RO.get(row["rating"], row["rating"])
    via = row["source"] or "?"
    return f'"{quoted}": rated {rating} ({via})' if en else f"„{quoted}”: evaluat {rating} ({via})"


def match_locally(
    claims: Iterable[Claim], checks: Sequence[Mapping[str, Any]], threshold: float | None = None
) -> list[Verification]:
    """Verify claims against fact checks held in memory (evaluation, tests), ranked like pg_trgm."""
    from workers.analysis.similarity import claim_similarity

    threshold = claim_policy().match_threshold if threshold is None else threshold
    folded = [(comparison_form(c["claim"]), c) for c in checks]
    results = []
    for claim in claims:
        target = comparison_form(claim.text)
        scored = [(claim_similarity(key, target), check) for key, check in folded]
        scored.sort(key=lambda s: s[0], reverse=True)
        results.append(best_verification(claim.text, scored, threshold))
    return results


# A sentence this similar to a check states it whatever its subject words ("The EU will ban
# cash next year" against "… ban cash payments next year": 0.82, subject "payments").
WORDED_AS_CHECKED = 0.8


def best_verification(
    sentence: str, ranked: Sequence[tuple[float, Mapping[str, Any]]], threshold: float
) -> Verification:
    """The verification by the best-ranked check (`ranked`: similarity and check, best
    first) that is similar enough and speaks of what the sentence does (its subject words,
    `check_subject.speaks_of`); UNVERIFIABLE when none is."""
    for score, check in ranked:
        if score < threshold:
            break
        if score >= WORDED_AS_CHECKED or speaks_of(
            check["claim"], sentence, check.get("language") or "und"
        ):
            return verification_from(check, score, threshold)
    return UNVERIFIABLE


def verification_from(
    check: Mapping[str, Any] | None, score: float, threshold: float
) -> Verification:
    """A matched Verification when `check` is similar enough, else UNVERIFIABLE."""
    if check is None or score < threshold:
        return UNVERIFIABLE
    return Verification(
        "matched",
        check["rating"],
        round(score, 3),
        check["claim"],
        check.get("source"),
        check.get("url"),
    )
