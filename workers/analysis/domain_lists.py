"""The shapes of the domain component's data files (`domains.yaml`, `brands.yaml`).

Validated once at start-up through `datafiles.load_validated`: a misspelt key or a
missing field fails with the file and the field named, not inside a task.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CategoryLabel(_Strict):
    en: str
    ro: str


class Category(_Strict):
    """A kind of listed source and the component score a link to one contributes."""

    risk: float = Field(ge=0, le=100)
    label: CategoryLabel


class ListedDomain(_Strict):
    category: str
    note: str


class SourceList(_Strict):
    """`domains.yaml`: listed sources, risky host shapes and their risks."""

    version: int
    categories: dict[str, Category]
    domains: dict[str, ListedDomain]
    shorteners: list[str]
    shortener_risk: float = Field(ge=0, le=100)
    risky_tlds: list[str]
    risky_tld_risk: float = Field(ge=0, le=100)
    raw_ip_risk: float = Field(ge=0, le=100)
    invalid_host_risk: float = Field(ge=0, le=100)
    lookalike_risk: float = Field(ge=0, le=100)
    unknown_risk: float = Field(ge=0, le=100)
    bait_words: list[str]
    bait_on_risky_tld_risk: float = Field(ge=0, le=100)
    nation_words: list[str]
    word_tlds: list[str]
    service_words: list[str]
    illness_words: list[str]
    cure_offer_words: list[str]
    shop_tlds: list[str]
    aid_words: list[str]
    aid_topics: list[str]
    shop_words: list[str]
    file_tlds: list[str]
    slug_alone_words: list[str]
    slug_sold_words: list[str]
    bait_name_risk: float = Field(ge=0, le=100)
    bait_inside_min_letters: int = Field(ge=3, le=10)
    bait_not_inside: list[str]
    alarm_words: list[str]
    alarm_name_risk: float = Field(ge=0, le=100)
    posing_domain_risk: float = Field(ge=0, le=100)
    borrowed_name_risk: float = Field(ge=0, le=100)
    borrowed_name_on_cheap_tld: list[str]
    borrowed_name_anywhere: list[str]
    government_words: list[str]
    shortener_request_risk: float = Field(ge=0, le=100)
    request_words: list[str]
    giving_words: list[str]
    signin_path_words: list[str]
    bare_domain_tlds: list[str]
    homoglyphs: dict[str, str]
    look_alike_swaps: dict[str, str]

    @field_validator("domains")
    @classmethod
    def _categories_exist(
        cls, domains: dict[str, ListedDomain], info: ValidationInfo
    ) -> dict[str, ListedDomain]:
        categories = info.data.get("categories", {})
        unknown = sorted({d.category for d in domains.values()} - set(categories))
        if unknown:
            raise ValueError(f"unknown categories {unknown}")
        return domains


class Brand(_Strict):
    """A brand whose name lookalikes borrow, and the domains it really uses."""

    brand: str
    kind: str
    names: list[str] = Field(min_length=1)
    domains: list[str] = Field(min_length=1)

    @field_validator("names")
    @classmethod
    def _plain_names(cls, names: list[str]) -> list[str]:
        bad = [n for n in names if not n.isascii() or not n.isalnum() or n != n.lower()]
        if bad:
            raise ValueError(f"names must be lower-case letters and digits: {bad}")
        return names


class BrandList(_Strict):
    """`brands.yaml`: protected brands and the lure words added to their names."""

    version: int
    brands: list[Brand]
    lure_words: list[str]
    # Lure words whose inflections in a host name are lures too ("parcels", "coletul").
    inflected_lures: list[str] = []
    # Lure words that end a compound as a lure too ("legacytax", "selfassessmentrefund").
    run_on_lures: list[str] = []
