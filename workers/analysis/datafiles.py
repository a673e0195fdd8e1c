"""Access to the shipped data files (lexicons, source lists, sample fact checks)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import yaml

DATA_DIR = Path(__file__).parent / "data"


def data_path(name: str) -> Path:
    """Path of a shipped data file by its file name."""
    return DATA_DIR / name


@cache
def load(name: str) -> Any:
    """Parse a shipped YAML or JSON data file once per process (callers must not mutate it)."""
    path = data_path(name)
    text = path.read_text(encoding="utf-8")
    return json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
