"""Shared test helpers: real-model embedder wrappers, deterministic conversations, the scripted chat model, store
factories and plain reference versions of passage packing. Test modules import from here, never from each other."""

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
"""The repository's root folder (child processes of the tests run from it)."""
