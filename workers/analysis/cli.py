"""`factchecks` commands: load fact checks into the store (wired into the `verdict` CLI)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import asyncpg
import click
from pydantic import ValidationError

from shared.db import connect_when_up
from shared.errors import VerdictError
from shared.settings import load_settings
from workers.analysis.factcheck_store import SAMPLE_FILE, FactCheck, read_fact_checks, store_checks

factchecks = click.Group("factchecks", help="Manage the fact-check store of the claims component.")


@factchecks.command("load")
@click.argument(
    "file", required=False, type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
@click.option(
    "--if-empty",
    is_flag=True,
    help="load only into an empty store (first start): an operator's edits are never overwritten",
)
def load_command(file: Path | None, if_empty: bool) -> None:
    """Upsert the fact checks of FILE (JSON lines; default: the shipped sample)."""
    path = file or SAMPLE_FILE
    try:
        checks = read_fact_checks(path)
        written = asyncio.run(_load(load_settings().database_url, checks, if_empty))
    except (VerdictError, ValidationError, OSError, asyncpg.PostgresError) as exc:
        raise click.ClickException(str(exc)) from exc
    if written is None:
        click.echo("the fact-check store already holds fact checks: nothing loaded")
    else:
        click.echo(f"loaded {written} fact checks from {path}")


async def _load(database_url: str, checks: list[FactCheck], if_empty: bool) -> int | None:
    """How many were written; None when `if_empty` and the store has some already."""
    conn = await connect_when_up(database_url)  # a job beside a server still starting
    try:
        return await store_checks(conn, checks, if_empty)
    finally:
        await conn.close()
