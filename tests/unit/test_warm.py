"""What each component's analysis processes load before their first task (workers.warm)."""

import json
import subprocess
import sys
from pathlib import Path

from workers.isolation import MAIN, PRELOAD
from workers.warm import BY_COMPONENT, EVERY, modules_for


def test_each_component_warms_its_own_analysers_and_a_group_their_union():
    assert modules_for(["domain"]) == ("workers.warm.domain",)
    assert modules_for(["techniques", "claims"]) == ("workers.warm.text",)
    assert modules_for(["media_preprocess"]) == ()
    assert modules_for(["claims", "domain", "ai_tampered"]) == (
        "workers.warm.text",
        "workers.warm.domain",
        "workers.warm.machine",
    )
    assert set(modules_for(BY_COMPONENT)) == set(EVERY)


def test_an_unknown_component_warms_everything():
    """A component added without an entry here still finds its analysers loaded."""
    assert modules_for(["sentiment"]) == EVERY


ROOT = Path(__file__).resolve().parents[2]


def _fork_server_state(modules: tuple[str, ...]) -> dict[str, int]:
    """What a fresh interpreter holds after importing `modules` as a fork server does:
    the techniques lexicon compiled or not, simplemma's dictionaries loaded or not."""
    code = (
        "import json, sys\n"
        f"for m in {list(modules)!r}: __import__(m)\n"
        "from workers.analysis import lemmas, techniques\n"
        "print(json.dumps({'lexicon': techniques.default_lexicon.cache_info().currsize,"
        " 'dictionaries': lemmas.lemmatizer.cache_info().currsize}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    return json.loads(done.stdout)


def test_a_domain_worker_does_not_load_the_text_analysers():
    """The domain fork server's preload (MAIN and its warm-up) compiles no techniques lexicon
    and loads no simplemma dictionaries (~60 MB); the API's preload does both."""
    assert _fork_server_state((MAIN, *modules_for(["domain"]))) == {
        "lexicon": 0,
        "dictionaries": 0,
    }
    everything = _fork_server_state(PRELOAD)
    assert everything["lexicon"] == 1 and everything["dictionaries"] == 1


def test_the_verdict_command_imports_the_claims_analysers_only_for_factchecks():
    """A container's health check (`verdict health`) starts the CLI every interval: it must
    not pay for the fact-check store's imports; `verdict factchecks` still finds them."""
    probe = (
        "import sys, ops.cli; "
        "print('workers.analysis.claim_forms' in sys.modules); "
        "ops.cli.main.get_command(None, 'factchecks'); "
        "print('workers.analysis.claim_forms' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert done.stdout.split() == ["False", "True"]
