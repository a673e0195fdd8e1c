"""What a component's analysis processes load before their first task.

The analysis pool's fork server imports these modules (workers.isolation), so every child
forked from it, a replacement for a killed one included, starts with its analysers loaded.
Each component loads only its own: a domain worker's fork server does not hold simplemma's
dictionaries or the techniques lexicon (about 60 MB and 1.3 s of CPU less per process), and
media_preprocess, which analyses nothing in the pool, loads nothing.
"""

from __future__ import annotations

from collections.abc import Iterable

# The modules each component's analyses need warm (a worker of several loads the union).
BY_COMPONENT: dict[str, tuple[str, ...]] = {
    "techniques": ("workers.warm.text",),
    "claims": ("workers.warm.text",),
    "ai_tampered": ("workers.warm.machine",),
    "domain": ("workers.warm.domain",),
    "media_preprocess": (),
}
# Every analyser: the API, which may analyse any component itself.
EVERY = ("workers.warm.text", "workers.warm.machine", "workers.warm.domain")


def modules_for(components: Iterable[str]) -> tuple[str, ...]:
    """The warm-up modules of `components`, each once, in order. Pure."""
    found: dict[str, None] = {}
    for component in components:
        found.update(dict.fromkeys(BY_COMPONENT.get(component, EVERY)))
    return tuple(found)
