"""SQL lives in the storage modules: everything else calls them and holds none."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# A statement's keyword in capitals, or a statement's shape in any case ("delete from …").
SQL = re.compile(
    r"\b(SELECT|INSERT|UPDATE|DELETE)\b(?=\s+\S)"
    r"|(?i:\b(insert\s+into|delete\s+from|update\s+\w+\s+set|select\s.*\bfrom)\b)",
    re.DOTALL,
)


def sql_literals(source: str) -> list[str]:
    """The string literals of a module's source that read as SQL, docstrings included."""
    return [
        node.value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and SQL.search(node.value)
    ]


# The storage modules: the record (sessions, results, verdicts, tenants, tenant settings),
# the console's reads of it, the fan-in's statements, the fact-check store, migrations, roles,
# the PostgreSQL transport's queue table, and what Redis would hold without Redis.
STORAGE = {
    "shared/db.py",
    "shared/db_roles.py",
    "shared/sessions.py",
    "shared/tenants.py",
    "shared/tenant_store.py",
    "shared/console_store.py",
    "shared/reviews.py",
    "shared/partitions.py",
    "shared/job_queue.py",
    "shared/dead_letter_table.py",
    "shared/ephemera.py",
    "shared/listener.py",
    "aggregator/fanin.py",
    "workers/analysis/factcheck_store.py",
}
PACKAGES = ("shared", "topology", "workers", "aggregator", "dispatcher", "ops")


def test_only_the_storage_modules_hold_sql() -> None:
    """No other module of the product has a string literal that reads as a SQL statement."""
    found = {
        name: literals
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if (name := str(path.relative_to(ROOT))) not in STORAGE
        and (literals := sql_literals(path.read_text(encoding="utf-8")))
    }
    assert found == {}


def test_sql_is_recognised_in_plain_and_formatted_strings() -> None:
    """Statements in capitals, in lower case and inside f-strings are found; prose is not."""
    source = '''
a = "SELECT true"
b = f"delete from sessions where id = {sid}"
c = """
    update sessions set mode = 'sync'
"""
d = "the session was deleted; select another one"
e = "Remove a session whose tasks the broker refused"
f = "DELETE"
g = f"DELETE {path}: refused"
'''
    assert len(sql_literals(source)) == 3
