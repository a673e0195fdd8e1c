"""The text each warm-up module analyses once: short, in each language the analysers know."""

SAMPLE = "Share this now! In 2020 the ministry reported 120 new cases. Vaccinul e sigur."
