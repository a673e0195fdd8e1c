"""Warms domain: the look-alike tables, the source and brand lists, the public suffixes."""

import contextlib

from workers.analysis import domains, normalise
from workers.warm.sample import SAMPLE

with contextlib.suppress(Exception):  # see workers.warm.text
    normalise.prepare()
    domains.assess_domains(SAMPLE, None)
