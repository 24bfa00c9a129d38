"""Shared fixtures: the real bundled embedding model (one per test session) and a real PostgreSQL (pgserver).

Helpers live in ``tests.support``; test modules import from there, never from each other.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

from strands_semantic_memory.embeddings import Embedder, resolve_embedder

# Property tests: CI (CI=true) replays the same examples on every run; a local run explores new ones. No deadline:
# timing on a loaded machine is not a property.
settings.register_profile(
    "ci", derandomize=True, database=None, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("local", deadline=None)
settings.load_profile("ci" if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no") else "local")


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    """The bundled all-MiniLM-L6-v2: the process's shared embedder (one worker serves every test's memory)."""
    return resolve_embedder()


@pytest.fixture(scope="session")
def pg_uri(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real PostgreSQL with pgvector for this test session, stopped at its end."""
    pgserver = pytest.importorskip("pgserver")
    server = pgserver.get_server(str(tmp_path_factory.mktemp("pgdata")), cleanup_mode="stop")
    server.psql("CREATE EXTENSION IF NOT EXISTS vector;")
    try:
        yield server.get_uri()
    finally:
        server.cleanup()
