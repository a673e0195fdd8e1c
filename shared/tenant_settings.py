"""Settings per tenant, as data and pure functions: what a tenant may change, validated; how
a change is applied; and what each stage takes from them (docs/architecture.md §6.6).

A tenant without settings runs as the deployment is configured. Each stored change bumps the
tenant's version (shared/tenant_store.py); a session records the version it ran with, its
tasks carry it (with the parts the workers need: `TenantTuning`) and so do their results.
"""

from __future__ import annotations

import contextlib
import json
import re
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any, Literal

import limits
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from shared.constants import ANALYSIS_COMPONENTS
from shared.errors import TenantSettingsError
from shared.messages import TenantTuning, encode
from shared.review_policy import RISK_LABELS, ReviewPolicy

AnalysisComponent = Literal["techniques", "ai_tampered", "claims", "domain"]
RiskLabel = Literal["low_risk", "moderate_risk", "high_risk", "critical_risk"]

# Every list is bounded twice: per item and in number, and all together by the bytes the
# signed `tenant` field of a task takes (MAX_TUNING_BYTES). A follow-up task carries that
# field twice (its own and its media task's) beside up to 250,000 characters of 4-byte UTF-8
# content and two URLs: 2 × 12 KiB leaves it under shared.messages.MAX_MESSAGE_BYTES with
# room to spare (tests/unit/test_tenant_bounds.py measures the worst case).
MAX_TUNING_BYTES = 12_288
MAX_TERMS = 200
MAX_TERM_CHARS = 80
MAX_HOSTS = 500
MAX_BRANDS = 50
MAX_HOST_CHARS = 253
# The domain component ignores a protected brand whose name is shorter: too short to tell a
# lookalike from a coincidence (workers/analysis/domains.py).
MIN_BRAND_CHARS = 3
# A rate limit a tenant may set: a few windows of at most a day, each of a sane amount
# (the limits library would accept "1000000000/year;…" with any number of windows).
MAX_RATE_WINDOWS = 4
MAX_RATE_AMOUNT = 1_000_000
MAX_RATE_WINDOW_S = 86_400
MAX_RATE_CHARS = 200
_TECHNIQUE = re.compile(r"[a-z][a-z0-9_]{0,39}")
_HOST_LABEL = re.compile(r"(?!-)[a-z0-9-]{1,63}(?<!-)")
# A term is words of letters and digits joined by a space, hyphen, apostrophe or full stop
# ("dr. x" too): no markup, no control characters, nothing a pattern language would read as
# syntax (the analyser matches terms literally all the same).
_TERM = re.compile(r"[^\W_]+(?:(?:[.'’-] ?| )[^\W_]+)*")
# How much of a refused value an error message repeats.
_SHOWN_CHARS = 60


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ReviewThresholds(_Strict):
    """The tenant's review rules (shared/review_policy.py); unset ones are off."""

    confidence_below: float | None = Field(None, ge=0, le=1)
    label_at_least: RiskLabel | None = None
    plans: tuple[int, ...] = ()

    @field_validator("plans", mode="before")
    @classmethod
    def _split_plans(cls, value: Any) -> Any:
        return _split(value)

    @field_validator("plans")
    @classmethod
    def _known_plans(cls, plans: tuple[int, ...]) -> tuple[int, ...]:
        if any(not 1 <= p <= 6 for p in plans):
            raise ValueError("plans are numbers from 1 to 6")
        return tuple(sorted(set(plans)))


class TenantSettings(_Strict):
    """What a tenant may set; every field is optional (unset: the deployment's value)."""

    components: tuple[AnalysisComponent, ...] | None = None
    verdict_weights: dict[AnalysisComponent, float] | None = None
    review: ReviewThresholds | None = None
    rate_limit: str | None = None
    read_rate_limit: str | None = None
    lexicon_terms: dict[str, tuple[str, ...]] | None = None
    protected_brands: tuple[str, ...] | None = None
    blocked_hosts: tuple[str, ...] | None = None

    @field_validator("components", mode="before")
    @classmethod
    def _split_components(cls, value: Any) -> Any:
        return _split(value)

    @field_validator("components")
    @classmethod
    def _some_components(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if value is None:
            return None
        if not value:
            raise ValueError("at least one component must run")
        if len(set(value)) != len(value):
            raise ValueError("a component is named twice")
        return tuple(c for c in ANALYSIS_COMPONENTS if c in value)

    @field_validator("verdict_weights")
    @classmethod
    def _weights(cls, value: dict[str, float] | None) -> dict[str, float] | None:
        if value is not None and any(not 0 <= w <= 10 for w in value.values()):
            raise ValueError("weights are numbers from 0 to 10")
        return value

    @field_validator("rate_limit", "read_rate_limit")
    @classmethod
    def _rate(cls, value: str | None) -> str | None:
        if value is not None:
            _check_rate(value)
        return value

    @field_validator("lexicon_terms", mode="before")
    @classmethod
    def _terms(cls, value: Any) -> Any:
        if not isinstance(value, Mapping):
            return value
        cleaned = {}
        for technique, terms in value.items():
            if not _TECHNIQUE.fullmatch(technique):
                raise ValueError(f"{_shown(str(technique))} is not a technique name")
            cleaned[technique] = _terms_of(terms)
        if sum(len(t) for t in cleaned.values()) > MAX_TERMS:
            raise ValueError(f"at most {MAX_TERMS} terms in all")
        return cleaned

    @field_validator("protected_brands", "blocked_hosts", mode="before")
    @classmethod
    def _hosts(cls, value: Any, info: ValidationInfo) -> Any:
        if value is None:
            return None
        items = _split(value) or ()
        if not isinstance(items, list | tuple) or not all(isinstance(h, str) for h in items):
            raise ValueError("a list of host names such as 'example.com'")
        hosts = tuple(dict.fromkeys(h.strip().lower().rstrip(".") for h in items))
        bad = [h for h in hosts if not _is_host(h)]
        if bad:
            raise ValueError(f"{_shown(bad[0])} is not a host name such as 'example.com'")
        brands = info.field_name == "protected_brands"
        most = MAX_BRANDS if brands else MAX_HOSTS
        if len(hosts) > most:
            raise ValueError(f"at most {most} host names")
        if brands:
            hosts = tuple(dict.fromkeys(h.removeprefix("www.") for h in hosts))
            short = [h for h in hosts if len(_brand_name(h)) < MIN_BRAND_CHARS]
            if short:
                raise ValueError(
                    f"{_shown(short[0])}: a brand's name (before the first dot) needs "
                    f"{MIN_BRAND_CHARS} letters or digits to tell its lookalikes from chance"
                )
        return hosts

    @model_validator(mode="after")
    def _fits_in_a_task(self) -> TenantSettings:
        size = tuning_bytes(self)
        if size > MAX_TUNING_BYTES:
            raise ValueError(
                f"the extra terms, brands and blocked hosts take {size} bytes in each task; "
                f"at most {MAX_TUNING_BYTES}: list fewer or shorter ones"
            )
        return self


def tuning_bytes(settings: TenantSettings) -> int:
    """The encoded size of what a task carries of `settings` (at the largest version)."""
    tuning = tuning_of(settings, 2**63 - 1)
    return len(encode(tuning)) if tuning is not None else 0


def _check_rate(value: str) -> None:
    """ValueError unless `value` is a few windows of at most a day, each of a sane amount."""
    example = "not a rate limit such as '10/second;300/minute'"
    if len(value) > MAX_RATE_CHARS:
        raise ValueError(f"{example}: at most {MAX_RATE_CHARS} characters")
    try:
        windows = limits.parse_many(value)
    except ValueError as exc:
        raise ValueError(f"{example}: {_shown(value)}") from exc
    if len(windows) > MAX_RATE_WINDOWS:
        raise ValueError(f"at most {MAX_RATE_WINDOWS} windows, e.g. '10/second;300/minute'")
    for window in windows:
        if not 1 <= window.amount <= MAX_RATE_AMOUNT:
            raise ValueError(f"a window allows from 1 to {MAX_RATE_AMOUNT} requests")
        if window.get_expiry() > MAX_RATE_WINDOW_S:
            raise ValueError("a window is at most a day long")


def _shown(value: str) -> str:
    """`value` as an error message repeats it: quoted, and cut short when long."""
    return repr(value if len(value) <= _SHOWN_CHARS else value[:_SHOWN_CHARS] + "…")


def _split(value: Any) -> Any:
    """A comma-separated string as a list (how `verdict tenants set` passes lists)."""
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return value


def _terms_of(terms: Any) -> tuple[str, ...]:
    items = _split(terms) or ()
    if not isinstance(items, list | tuple) or not all(isinstance(t, str) for t in items):
        raise ValueError("terms are a list of words")
    found = tuple(dict.fromkeys(unicodedata.normalize("NFC", t.strip()) for t in items))
    if not found or any(not t or len(t) > MAX_TERM_CHARS for t in found):
        raise ValueError(f"terms are non-empty, of at most {MAX_TERM_CHARS} characters")
    bad = [t for t in found if not _TERM.fullmatch(t)]
    if bad:
        raise ValueError(
            f"{_shown(bad[0])}: a term is words of letters and digits, joined by a space, "
            "hyphen, apostrophe or full stop"
        )
    return found


def _brand_name(domain: str) -> str:
    """What lookalikes of a protected domain imitate (workers/analysis/domains.py)."""
    return "".join(ch for ch in domain.split(".")[0] if ch.isascii() and ch.isalnum())


def _is_host(host: str) -> bool:
    labels = host.split(".")
    return (
        len(host) <= MAX_HOST_CHARS
        and len(labels) >= 2
        and all(_HOST_LABEL.fullmatch(x) for x in labels)
    )


def validated(document: Mapping[str, Any]) -> TenantSettings:
    """`document` as settings, or TenantSettingsError saying which value is wrong and why."""
    try:
        return TenantSettings.model_validate(document)
    except ValidationError as exc:
        problems = [
            f"{'.'.join(str(p) for p in e['loc']) or 'settings'}: "
            + e["msg"].removeprefix("Value error, ")
            for e in exc.errors()[:5]
        ]
        raise TenantSettingsError("; ".join(problems)) from exc


def stored(settings: TenantSettings) -> dict[str, Any]:
    """The JSON kept in PostgreSQL: only what the tenant set."""
    return settings.model_dump(mode="json", exclude_none=True)


def with_changes(current: Mapping[str, Any], changes: Mapping[str, Any]) -> TenantSettings:
    """`current` with `changes` applied (dotted keys reach into a section: `review.plans`)."""
    document = _copy(current)
    for key, value in changes.items():
        *path, last = key.split(".")
        section = document
        for part in path:
            section = section.setdefault(part, {})
            if not isinstance(section, dict):
                raise TenantSettingsError(f"{key}: {part} is not a section")
        section[last] = value
    return validated(document)


def without(current: Mapping[str, Any], keys: Iterable[str]) -> TenantSettings:
    """`current` with `keys` removed (back to the deployment's value); unknown keys refused."""
    document = _copy(current)
    for key in keys:
        *path, last = key.split(".")
        section: Any = document
        for part in path:
            section = section.get(part) if isinstance(section, dict) else None
        if not isinstance(section, dict) or last not in section:
            raise TenantSettingsError(f"{key}: not set for this tenant")
        del section[last]
    return validated({k: v for k, v in document.items() if v != {}})


def _copy(document: Mapping[str, Any]) -> dict[str, Any]:
    return {k: dict(v) if isinstance(v, Mapping) else v for k, v in document.items()}


# --- what each stage takes ------------------------------------------------------------------


def components_of(settings: TenantSettings | None) -> tuple[str, ...]:
    """The analysis components a tenant's sessions run (all four unless it chose)."""
    if settings is None or settings.components is None:
        return ANALYSIS_COMPONENTS
    return settings.components


def tuning_of(settings: TenantSettings | None, version: int | None) -> TenantTuning | None:
    """What a session's tasks carry of its tenant's settings (None: it has none)."""
    if settings is None or version is None:
        return None
    return TenantTuning(
        settings_version=version,
        components=components_of(settings),
        lexicon_terms=settings.lexicon_terms or {},
        protected_brands=settings.protected_brands or (),
        blocked_hosts=settings.blocked_hosts or (),
    )


def session_policy(settings: TenantSettings | None) -> dict[str, Any] | None:
    """What the aggregator needs of the tenant's settings, kept with the session when it is
    recorded (so finalizing costs no lookup and a later change does not alter it)."""
    if settings is None or (settings.verdict_weights is None and settings.review is None):
        return None
    policy: dict[str, Any] = {}
    if settings.verdict_weights is not None:
        policy["verdict_weights"] = settings.verdict_weights
    if settings.review is not None:
        policy["review"] = settings.review.model_dump(mode="json")
    return policy


def weights_for(policy: Mapping[str, Any] | None, default: Mapping[str, float]) -> dict[str, float]:
    """The verdict weights of a session: the tenant's over the deployment's."""
    return {**default, **((policy or {}).get("verdict_weights") or {})}


def review_for(policy: Mapping[str, Any] | None, default: ReviewPolicy) -> ReviewPolicy:
    """The review rules of a session: the tenant's when it set them, else the deployment's."""
    review = (policy or {}).get("review")
    if review is None:
        return default
    label = review.get("label_at_least")
    return ReviewPolicy(
        review.get("confidence_below"),
        label if label in RISK_LABELS else None,
        frozenset(review.get("plans") or ()),
    )


# Settings whose VALUE on the command line is a number: read as JSON. Every other VALUE is
# text (a list as "a,b"), unless it is written as a JSON list or object.
NUMERIC_KEYS = ("verdict_weights.", "review.confidence_below")


def assignments(pairs: Iterable[str]) -> dict[str, Any]:
    """`KEY=VALUE` arguments as changes: numbers where the setting is one (`2`, `0.5`), JSON
    where the value is written as a list or object (`[5, 6]`), text otherwise
    (`techniques,claims`, `5/second`, `2020` as a term)."""
    changes: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise TenantSettingsError(f"{pair!r}: write KEY=VALUE, e.g. components=techniques")
        changes[key] = value
        if value.strip()[:1] in ("[", "{") or key.startswith(NUMERIC_KEYS):
            with contextlib.suppress(ValueError):
                changes[key] = json.loads(value)
    return changes


def unknown_techniques(settings: TenantSettings, known: Iterable[str]) -> list[str]:
    """The techniques of the tenant's extra terms that the lexicon does not have."""
    return sorted(set(settings.lexicon_terms or {}) - set(known))
