"""Every shipped data file, read and validated at once: a process that analyses calls
`check_shipped_data()` when it starts, so a broken lexicon or source list stops it there with
the file and field named, not later as an error inside a task."""

from __future__ import annotations

from workers.analysis import claim_forms, domains, machine_text, techniques, wording_model


def check_shipped_data() -> None:
    """Load and validate every data file the analysers use (DataFileError when one is
    broken); the results are cached, so the analysers find them ready."""
    techniques.default_lexicon()
    wording_model.shipped_model()
    wording_model.shipped_claims_model()
    wording_model.shipped_machine_text_model()
    claim_forms.claims_spec()
    machine_text.ai_markers()
    domains.shipped_lists()
