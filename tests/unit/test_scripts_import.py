"""The scripts import, and every `lib.<name>` they use exists in benchlib: a helper moved
out of benchlib fails here, not half-way through a benchmark."""

import importlib
import re
from pathlib import Path

import benchlib
import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
MODULES = sorted(p.stem for p in SCRIPTS.glob("*.py"))


@pytest.mark.parametrize("name", MODULES)
def test_a_script_imports_and_finds_what_it_uses_in_benchlib(name):
    """Importing runs no benchmark (each runs under `if __name__ == "__main__"`)."""
    importlib.import_module(name)
    used = set(re.findall(r"\blib\.([A-Za-z_]\w*)", (SCRIPTS / f"{name}.py").read_text()))
    assert sorted(n for n in used if not hasattr(benchlib, n)) == []
