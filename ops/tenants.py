"""`verdict tenants`: list, show, set and unset settings per tenant (shared/tenant_store.py)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from shared import db, tenant_store
from shared.errors import TenantSettingsError
from shared.settings import ApiKey
from shared.tenant_settings import (
    TenantSettings,
    assignments,
    unknown_techniques,
    with_changes,
    without,
)
from shared.tenant_store import TenantRecord
from workers.analysis.techniques import default_lexicon


async def listed(url: str) -> list[TenantRecord]:
    pool = await db.create_pool(url, max_size=1)
    try:
        return await tenant_store.every(pool)
    finally:
        await pool.close()


async def shown(url: str, tenant: str) -> TenantRecord:
    pool = await db.create_pool(url, max_size=1)
    try:
        record = await tenant_store.load(pool, tenant)
    finally:
        await pool.close()
    if record is None:
        raise TenantSettingsError(
            f"tenant {tenant!r} has no settings of its own (it runs with the deployment's)"
        )
    return record


async def set_values(url: str, tenant: str, pairs: Iterable[str]) -> TenantRecord:
    """Store the tenant's settings with `KEY=VALUE` changes, checked before anything is
    written: a refusal says which value and why."""
    changes = assignments(pairs)
    if not changes:
        raise TenantSettingsError("name at least one KEY=VALUE to set")
    return await _changed(url, tenant, lambda current: _checked(with_changes(current, changes)))


async def unset_keys(url: str, tenant: str, keys: Iterable[str]) -> TenantRecord:
    """Remove `keys` from the tenant's settings: those go back to the deployment's values."""
    names = list(keys)
    if not names:
        raise TenantSettingsError("name at least one KEY to unset")
    return await _changed(url, tenant, lambda current: without(current, names))


async def _changed(url: str, tenant: str, edit: Any) -> TenantRecord:
    pool = await db.create_pool(url, max_size=1)
    try:
        return await tenant_store.change(pool, tenant, edit)
    finally:
        await pool.close()


def keyless(tenant: str, api_keys: Mapping[str, ApiKey]) -> str | None:
    """What to warn of when no API key of the deployment belongs to `tenant` (a misspelt
    name stores settings nobody uses); None when one does, or no keys are configured here
    (the command may run where API_KEYS is not set)."""
    if not api_keys or any(key.tenant == tenant for key in api_keys.values()):
        return None
    return (
        f"no API key in API_KEYS belongs to tenant {tenant!r}: its settings are stored, "
        "and apply once a key of that tenant is used"
    )


def _checked(settings: TenantSettings) -> TenantSettings:
    """Extra terms only for techniques the lexicon has (a misspelt one would never match)."""
    lexicon = default_lexicon()
    unknown = unknown_techniques(settings, lexicon.weights)
    if unknown:
        known = ", ".join(sorted(lexicon.weights))
        raise TenantSettingsError(
            f"lexicon_terms: unknown technique {unknown[0]!r}; one of {known}"
        )
    return settings
