"""Redis keys and channels: one deployment's names all sit under its prefix."""

from fnmatch import fnmatchcase

from shared.keys import Keys

SESSION = "0b7c6a52-3f5e-4c1e-9d7e-2f1a8b9c0d11"


def every_name(keys: Keys) -> list[str]:
    return [
        keys.session_state(SESSION),
        keys.session_events(SESSION),
        keys.lock(SESSION, "claims"),
        keys.worker("host-1-claims-7"),
        keys.worker_directory.index,
        keys.media_text(SESSION),
        keys.urgent,
        keys.rate_limits,
    ]


def test_every_key_and_channel_is_under_the_deployment_prefix() -> None:
    """Removing `{prefix}:*` removes everything a deployment wrote, the media text cache
    included (it once used a fixed `agent:` prefix that no clean-up found)."""
    keys = Keys("tenant-a")
    names = every_name(keys)
    assert all(fnmatchcase(name, keys.everything) for name in names), names
    assert not any(fnmatchcase(name, Keys("tenant").everything) for name in names)


def test_names_of_different_things_never_collide() -> None:
    """A session's state, events, lock and media cache are distinct keys."""
    names = every_name(Keys("p"))
    assert len(set(names)) == len(names)


def test_the_worker_pattern_matches_heartbeats_and_their_index_only() -> None:
    """The ACLs grant the registry with this pattern: heartbeats and their index, nothing
    else; the index starts with the directory's prefix but is no host's key."""
    keys = Keys("p")
    directory = keys.worker_directory
    assert fnmatchcase(keys.worker("w-1"), keys.workers)
    assert fnmatchcase(directory.index, keys.workers)
    assert directory.index.startswith(directory.prefix) and "#" in directory.index
    registry = {keys.worker("host-1-claims-7"), directory.index}
    others = [n for n in every_name(keys) if n not in registry]
    assert not any(fnmatchcase(n, keys.workers) for n in others)
