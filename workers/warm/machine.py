"""Warms ai_tampered: the look-alike tables, the machine-text markers and learned model,
image forensics."""

import contextlib

from workers.analysis import image_forensics, machine_text, normalise, wording_model
from workers.warm.sample import SAMPLE

with contextlib.suppress(Exception):  # see workers.warm.text
    normalise.prepare()
    machine_text.assess_machine_text(SAMPLE)
    wording_model.shipped_machine_text_model()  # loaded here even if the sample is short
    image_forensics.metadata_signs("PNG", {})
