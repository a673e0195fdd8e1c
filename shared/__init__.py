"""Pieces every process shares: settings, messages, errors, state, storage."""
