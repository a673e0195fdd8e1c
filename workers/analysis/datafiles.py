"""Access to the shipped data files (lexicons, source lists, sample fact checks).

Every YAML file is read through a pydantic model of its shape (`load_validated`), so a
broken file fails when a process starts, with the file and the field in the message,
instead of as a `KeyError` inside a task.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from shared.errors import DataFileError

DATA_DIR = Path(__file__).parent / "data"

Model = TypeVar("Model", bound=BaseModel)


def data_path(name: str) -> Path:
    """Path of a shipped data file by its file name."""
    return DATA_DIR / name


# libyaml's safe loader where PyYAML was built with it (six times faster on techniques.yaml,
# which every analysis process parses at start-up); the same result, the same safety.
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@cache
def load(name: str) -> Any:
    """Parse a shipped YAML or JSON data file once per process (callers must not mutate it)."""
    path = data_path(name)
    try:
        text = path.read_text(encoding="utf-8")
        return json.loads(text) if path.suffix == ".json" else yaml.load(text, Loader=SAFE_LOADER)
    except (OSError, ValueError, yaml.YAMLError) as exc:
        raise DataFileError(f"data file {name}: cannot be read: {exc}") from exc


def validate(name: str, raw: Any, model: type[Model]) -> Model:
    """`raw` (the parsed content of data file `name`) as `model`, or DataFileError saying
    which file and which fields are wrong."""
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '(top)'}: {err['msg']}"
            for err in exc.errors()[:5]
        )
        raise DataFileError(f"data file {name} is malformed: {problems}") from exc


@cache
def load_validated(name: str, model: type[Model]) -> Model:
    """A shipped data file parsed and validated against `model`, once per process."""
    return validate(name, load(name), model)
