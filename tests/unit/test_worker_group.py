"""One worker process for several components: the options it takes and what it announces."""

import pytest

from shared.errors import InvalidWorkerOptions
from shared.heartbeat import announcement
from workers.capabilities import combined
from workers.group import components_asked, worker_options


def test_components_come_from_the_argument_or_the_list_each_with_its_own_defaults():
    """COMPONENT or --components a,b; each component keeps its WORKER_DEFAULTS unless the
    operator overrides concurrency or prefetch."""
    assert components_asked("claims", None) == ("claims",)
    asked = components_asked(None, "techniques, claims")
    options = worker_options(asked, None, None)
    assert [(o.component, o.concurrency, o.prefetch) for o in options] == [
        ("techniques", 4, 5),
        ("claims", 3, 3),
    ]
    assert {o.prefetch for o in worker_options(asked, None, 7)} == {7}


@pytest.mark.parametrize(
    ("component", "components", "says"),
    [
        (None, None, "not both"),
        ("claims", "domain", "not both"),
        (None, "claims,nope", "unknown component 'nope'"),
        (None, "claims,claims", "named twice"),
    ],
)
def test_a_bad_choice_of_components_is_refused_in_words(component, components, says):
    with pytest.raises(InvalidWorkerOptions, match=says):
        components_asked(component, components)


def test_one_record_announces_every_component_of_the_process():
    """Components in order, input types united, concurrency summed, prefetch per component;
    a process of one component announces exactly what it did before."""
    techniques = announcement("techniques", 4, ("text", "url"), limits={"prefetch": 5})
    media = announcement("media_preprocess", 2, ("image",), {"tesseract": True}, {"prefetch": 1})
    both = combined([techniques, media])
    assert both.components == ("techniques", "media_preprocess")
    assert both.input_types == ("text", "url", "image")
    assert both.concurrency == 6 and both.capabilities == {"tesseract": True}
    assert both.limits == {"prefetch_techniques": 5, "prefetch_media_preprocess": 1}
    assert combined([techniques]) is techniques
