"""Warms ai_tampered: the look-alike tables, the machine-text markers, image forensics."""

import contextlib

from workers.analysis import image_forensics, machine_text, normalise
from workers.warm.sample import SAMPLE

with contextlib.suppress(Exception):  # see workers.warm.text
    normalise.prepare()
    machine_text.assess_machine_text(SAMPLE)
    image_forensics.metadata_signs("PNG", {})
