"""The packages form layers: each imports only the packages below it (no cycles, no reach-ins).

    ops          the command line and the supervisor
    dispatcher   the API (its in-process fallback runs the workers' executors)
    workers, aggregator   the two kinds of consumer; neither imports the other
    topology     the broker objects as data, declared and verified
    shared       settings, errors, messages, names, storage and I/O used by every process

scripts may use any package but not the tests; the tests may use anything.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAYER = {"shared": 0, "topology": 1, "workers": 2, "aggregator": 2, "dispatcher": 3, "ops": 4}
PROJECT = set(LAYER) | {"scripts", "tests"}


def imported_packages(path: Path) -> set[str]:
    """Top-level project packages that the module at `path` imports."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names & PROJECT


def violations(package: str) -> list[str]:
    """`module imports package` lines for every import of a package not below `package`."""
    found = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for used in imported_packages(path):
            if used != package and LAYER.get(used, 99) >= LAYER[package]:
                found.append(f"{path.relative_to(ROOT)} imports {used}")
    return found


@pytest.mark.parametrize("package", sorted(LAYER))
def test_a_package_imports_only_the_layers_below_it(package: str) -> None:
    """No package imports its own layer's sibling or anything above it."""
    assert violations(package) == []


def test_scripts_do_not_import_the_tests() -> None:
    """Scripts stand on the product; the test suite is not a library for them."""
    offenders = [
        str(p.relative_to(ROOT))
        for p in sorted((ROOT / "scripts").rglob("*.py"))
        if "tests" in imported_packages(p)
    ]
    assert offenders == []
