"""`verdict keys`: keys and their hashes, signing key sets — made, never echoed back."""

import json

from click.testing import CliRunner

from ops.cli import main
from shared.api_keys import key_hash
from shared.settings import ApiKey
from shared.signing import private_task_key, public_task_key


def test_a_new_key_comes_with_the_entry_that_admits_it():
    """The printed entry is the hash of the printed key, with the tenant and plan asked for."""
    out = CliRunner().invoke(main, ["keys", "new", "--tenant", "acme", "--plan", "4"]).output
    key = out.split("key: ", 1)[1].split()[0]
    entry = json.loads(out.split("API_KEYS entry: ", 1)[1])
    assert entry == {key_hash(key): {"tenant": "acme", "plan": 4}}


def test_a_new_admin_key_carries_the_admin_scope_in_its_entry():
    """`--scope admin` puts the scope in the entry, which the settings accept; an unknown
    scope is refused before any key is made."""
    args = ["keys", "new", "--tenant", "ops", "--plan", "6", "--scope", "admin"]
    out = CliRunner().invoke(main, args).output
    entry = json.loads(out.split("API_KEYS entry: ", 1)[1])
    (grant,) = entry.values()
    assert grant == {"tenant": "ops", "plan": 6, "scopes": ["admin"]}
    assert ApiKey(**grant).scopes == {"admin"}
    refused = CliRunner().invoke(main, [*args[:-1], "root"])
    assert refused.exit_code != 0 and "key:" not in refused.output


def test_a_key_is_hashed_from_standard_input_not_an_argument():
    """The key never appears on a command line (shell history, the process list)."""
    run = CliRunner().invoke(main, ["keys", "hash"], input="s3cret-key\n")
    assert run.exit_code == 0 and run.output.strip() == key_hash("s3cret-key")
    assert CliRunner().invoke(main, ["keys", "hash", "s3cret-key"]).exit_code != 0


def test_a_signing_set_is_a_working_pair_per_signer_and_a_key_per_component():
    """Environment lines: both Ed25519 pairs load, every component has a result key."""
    lines = dict(
        line.split("=", 1)
        for line in CliRunner().invoke(main, ["keys", "signing"]).output.splitlines()
    )
    private_task_key(lines["TASK_SIGNING_KEY"]), public_task_key(lines["TASK_VERIFY_KEY"])
    private_task_key(lines["MEDIA_SIGNING_KEY"]), public_task_key(lines["MEDIA_VERIFY_KEY"])
    result_keys = json.loads(lines["RESULT_KEYS"].strip("'"))
    assert set(result_keys) == {"media_preprocess", "techniques", "ai_tampered", "claims", "domain"}
