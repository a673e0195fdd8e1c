"""Forms grown in the twenty-seventh round of issue 19, after two more sets written blind
(ids `*-xx-*`, travel and getting around; `*-yy-*`, technology in everyday life), measured as
written on the twenty-sixth round's code, then YY tuned on (XX held out). Each is checked on
sentences written for this test (none is in the evaluation set), in Romanian and English,
beside texts sharing their words that must stay as they were. (The host that borrows the
message's name has its own tests: test_borrowed_names.py.)"""

import pytest

from tests.unit.analysis.probes import kinds
from workers.analysis.satire import credited_to_satire
from workers.analysis.text import fold


@pytest.mark.parametrize(
    "text",
    [
        "Copy and paste this to your status, don't just share it.",
        "Copy & paste this to your wall or Facebook owns your photos.",
        "Copiază și lipește pe profilul tău, nu da share!",
        "Copiați și postați mesajul ăsta pe peretele vostru.",
    ],
)
def test_a_chain_letters_copy_and_paste_is_a_call_to_share(text):
    assert "urgency" in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "Don't copy and paste it: there is no new Facebook rule.",
        "Nu mai copiați și lipiți mesajul ăsta, e fals.",
        "Copy the file and paste it into the shared folder.",
        "To copy a cell, press Ctrl+C, then paste it where you want it.",
        "To confirm your email address, copy and paste the code below into the app.",
        "Teacher here: kids, please stop copying and pasting Wikipedia into your homework.",
        "Codul tău de verificare este 482113. Copiază și lipește codul în aplicație.",
    ],
)
def test_copying_denied_or_done_at_a_desk_is_no_chain_letter(text):
    assert "urgency" not in kinds(text)


@pytest.mark.parametrize(
    "site",
    [
        "waterfordwhispersnews.com",
        "thebeaverton.com",
        "chaser.com.au",
        "catavencii.ro",
    ],
)
def test_satire_sites_named_in_a_text_credit_it_to_satire(site):
    assert credited_to_satire(fold(f"Read it at {site}/2025/story"))


def test_the_chaser_credited_at_the_start_is_satire():
    assert credited_to_satire(fold("The Chaser: Government announces inquiry into inquiries"))
