"""SQL lives in the storage modules of `shared`: the API's modules call them, they hold none."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# A statement's keyword in capitals, or a statement's shape in any case ("delete from …").
SQL = re.compile(
    r"\b(SELECT|INSERT|UPDATE|DELETE)\b"
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


def test_the_api_holds_no_sql() -> None:
    """No module under dispatcher/ has a string literal that reads as a SQL statement."""
    found = {
        str(path.relative_to(ROOT)): literals
        for path in sorted((ROOT / "dispatcher").rglob("*.py"))
        if (literals := sql_literals(path.read_text(encoding="utf-8")))
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
'''
    assert len(sql_literals(source)) == 3
