"""The `verdict` command line as an operator runs it: a subprocess with a test world's settings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from shared.settings import Settings

ROOT = Path(__file__).resolve().parents[1]


def settings_env(settings: Settings) -> dict[str, str]:
    """The environment that makes a process build `settings` again (as compose would set it)."""
    env = {}
    for name, value in settings.model_dump(mode="json").items():
        if value is not None:
            env[name.upper()] = value if isinstance(value, str) else json.dumps(value)
    # Secrets dump masked ("**********"): give the process their values.
    for name in ("task_signing_key", "media_signing_key", "events_token_key"):
        secret = getattr(settings, name)
        if secret is not None:
            env[name.upper()] = secret.get_secret_value()
    env["RESULT_KEYS"] = json.dumps(
        {c: k.get_secret_value() for c, k in settings.result_keys.items()}
    )
    return env


def verdict(settings: Settings, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run `verdict ARGS` with every setting of `settings` (and `env` on top)."""
    environment = {**os.environ, **settings_env(settings), **env}
    return subprocess.run(
        [sys.executable, "-m", "ops.cli", *args],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
