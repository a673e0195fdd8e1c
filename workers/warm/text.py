"""Warms techniques and claims: the look-alike tables, simplemma's dictionaries, the
techniques lexicon, the claim forms, both learned models and the word lists fact checks
are matched with."""

import contextlib

from workers.analysis import check_subject, claims, lemmas, normalise, techniques, wording_model
from workers.warm.sample import SAMPLE

# An error here would stop the fork server and with it every analysis; the same error
# surfaces instead where it belongs, in the call that needs the analyser.
with contextlib.suppress(Exception):
    normalise.prepare()  # the look-alike tables: about 0.3 s of CPU, once
    lemmas.prepare()  # simplemma's Romanian and English dictionaries: about 0.7 s, ~60 MB
    techniques.assess_techniques(SAMPLE)
    claims.extract_claims(SAMPLE)
    check_subject.prepare()  # wordfreq's small English and Romanian lists: ~6 MB
    wording_model.shipped_claims_model()  # loaded here even if the sample did not need it
