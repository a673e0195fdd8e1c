"""`verdict dlq`: the operator's side of shared/dead_letter_queue.py — which credentials,
ages as typed, and letters as printed."""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from types import ModuleType
from typing import Any, Final, TypeVar

from shared.dead_letter_queue import DeadLetter
from shared.names import Names
from shared.resources import Resources
from shared.settings import Settings, broker_urls
from shared.transport import dead_letters_of

T = TypeVar("T")

_UNITS: Final = {"s": 1, "m": 60, "h": 3600, "d": 86_400}
_AGE: Final = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$")


def parse_age(text: str) -> float:
    """`90`, `90s`, `15m`, `2h`, `1d` as seconds; ValueError on anything else."""
    found = _AGE.match(text)
    if found is None:
        raise ValueError(f"{text!r} is not an age like 90s, 15m, 2h or 1d")
    number, unit = found.groups()
    return float(number) * _UNITS[unit or "s"]


def format_age(seconds: float | None) -> str:
    """An age at a glance: `42s`, `7m`, `3h`, `2d`; `?` when unknown."""
    if seconds is None:
        return "?"
    for unit, size in (("d", 86_400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


def row(letter: DeadLetter) -> str:
    """One letter as a tab-separated line: id, age, origin, reason, attempt, replays,
    priority, size and a preview of the body."""
    cells = (
        letter.id,
        format_age(letter.age_s),
        letter.origin or "-",
        letter.reason,
        "-" if letter.attempt is None else str(letter.attempt),
        f"replays={letter.replays}",
        f"priority={'-' if letter.priority is None else letter.priority}",
        f"{letter.size} B",
        repr(letter.preview[:80]),
    )
    return "\t".join(cells)


HEADER_ROW: Final = "id\tage\torigin\treason\tattempt\treplays\tpriority\tsize\tpreview"


def as_json(letter: DeadLetter) -> dict[str, Any]:
    """A letter as a JSON object; the body, when loaded, as UTF-8 text."""
    document = asdict(letter)
    body = document.pop("body")
    if body is not None:
        document["body"] = body.decode("utf-8", "replace")
    return document


def dumps(document: Any) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False)


async def with_operator(settings: Settings, work: Callable[[Any, Names], Awaitable[T]]) -> T:
    """Run `work` on what holds the dead letters, closed afterwards: a connection as the
    operator role (RabbitMQ), or a pool on the database (the postgres transport)."""
    async with Resources() as opened:
        names = Names(settings.topology_prefix)
        if settings.transport == "postgres":
            return await work(await opened.pool(settings.database_url, max_size=2), names)
        urls = broker_urls(settings.operator_url(), settings.amqp_hosts)
        connection = await opened.broker(urls, "verdict-dlq")
        return await work(connection, names)


def letters_of(settings: Settings) -> ModuleType:
    """The dead-letter operations of the deployment's transport, taking what `with_operator`
    opens."""
    return dead_letters_of(settings.transport)
