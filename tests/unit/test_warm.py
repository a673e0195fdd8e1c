"""What each component's analysis processes load before their first task (workers.warm)."""

import subprocess
import sys

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


def _loaded_after(module: str) -> set[str]:
    """The modules a fresh interpreter holds after importing `module` (a fork server's view)."""
    code = f"import sys, {module}; print(' '.join(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(done.stdout.split())


def test_a_domain_worker_does_not_load_the_text_analysers():
    """No simplemma (its dictionaries are ~60 MB) and no techniques lexicon in a domain
    worker's fork server; the API's preload has them all."""
    domain = _loaded_after("workers.warm.domain")
    assert "workers.analysis.domains" in domain
    assert not {"simplemma", "workers.analysis.techniques"} & domain
    assert {"simplemma", "workers.analysis.techniques"} <= _loaded_after("workers.warm_analysers")
