"""Shared test helpers: real-model embedder wrappers, deterministic conversations, store factories and plain reference
versions of passage packing. The scripted chat model is the package's (``strands_semantic_memory.testing``), under
the names the tests import from here. Test modules import from here, never from each other."""

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
"""The repository's root folder (child processes of the tests run from it)."""
