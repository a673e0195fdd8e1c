"""One worker process for several components: the options it takes and what it announces."""

import pytest
from pydantic import ValidationError

from shared.errors import InvalidWorkerOptions
from shared.heartbeat import announcement
from shared.settings import Settings
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


BASE = {
    "amqp_url": "amqp://shared",
    "redis_url": "redis://shared",
    "database_url": "postgresql://x",
}


def test_each_component_of_a_process_connects_with_its_own_credentials():
    """COMPONENT_AMQP_URLS / COMPONENT_REDIS_URLS / COMPONENT_DATABASE_URLS give a component
    its own URLs; a component they do not name keeps AMQP_URL / REDIS_URL / DATABASE_URL;
    everything else is shared."""
    settings = Settings(
        **BASE,
        component_amqp_urls={"claims": "amqp://claims", "techniques": "amqp://techniques"},
        component_redis_urls={"claims": "redis://claims"},
        component_database_urls={"techniques": "postgresql://techniques"},
    )
    claims, techniques = settings.for_component("claims"), settings.for_component("techniques")
    assert (claims.amqp_url, claims.redis_url) == ("amqp://claims", "redis://claims")
    assert (techniques.amqp_url, techniques.redis_url) == ("amqp://techniques", "redis://shared")
    domain = settings.for_component("domain")
    assert (domain.amqp_url, domain.redis_url) == ("amqp://shared", "redis://shared")
    assert claims.database_url == settings.database_url
    assert techniques.database_url == "postgresql://techniques"


@pytest.mark.parametrize(
    ("urls", "says"),
    [
        ({"component_amqp_urls": {"clams": "amqp://x"}}, "unknown component"),
        ({"component_redis_urls": {"claims": "redis://u:change-me@h"}}, "placeholder"),
        ({"component_database_urls": {"claim": "postgresql://x"}}, "unknown component"),
    ],
)
def test_credentials_for_an_unknown_component_or_a_placeholder_are_refused(urls, says):
    """A misspelt component would silently fall back to the shared URL: refused at start."""
    with pytest.raises(ValidationError, match=says):
        Settings(**BASE, **urls)


def test_a_refused_component_url_is_named_without_its_password():
    """A typo in COMPONENT_AMQP_URLS is refused in words that reach logs: the setting and the
    unknown component, never the URLs and their passwords."""
    from pydantic import ValidationError

    from shared.settings import Settings

    with pytest.raises(ValidationError) as refused:
        Settings(
            amqp_url="amqp://h/",
            redis_url="redis://h",
            database_url="postgresql://h",
            component_amqp_urls={"claimz": "amqp://claims:S3cretPW@rabbit/"},
        )
    assert "claimz" in str(refused.value)
    assert "S3cretPW" not in str(refused.value)
