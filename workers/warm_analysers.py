"""Loads every analyser when imported: what the API's analysis processes preload (it may
analyse any component itself). Workers preload only their components' (workers.warm)."""

import workers.warm.domain
import workers.warm.machine
import workers.warm.text  # noqa: F401
