"""The README's configuration table names every setting the code reads."""

import re
from pathlib import Path

from shared.settings import Settings

README = Path(__file__).resolve().parents[2] / "README.md"


def test_every_setting_is_in_the_readme_configuration_table():
    """A setting added to the code without a line in the table fails here."""
    first_cells = re.findall(r"^\| ([^|]+) \|", README.read_text(), re.M)
    documented = {name for cell in first_cells for name in re.findall(r"`([A-Z0-9_]+)`", cell)}
    missing = sorted(
        name.upper() for name in Settings.model_fields if name.upper() not in documented
    )
    assert missing == []
