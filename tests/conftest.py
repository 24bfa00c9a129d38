"""Shared fixtures: the real bundled embedding model (loaded once per session) and a real PostgreSQL.

Helpers live in :mod:`tests.support`; test modules import from there, never from each other.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.embeddings import SentenceTransformerEmbedder
from tests.support.archives import ARCHIVES, archive_for, new_user_id
from tests.support.embedders import CountingEmbedder

# Property tests: CI (CI=true) replays the same examples on every run, so it never fails by chance; a local run
# explores new examples each time. Neither has a deadline: timing on a loaded machine is not a property.
# Both derive from Hypothesis' own defaults (recent Hypothesis loads a CI profile itself when it sees CI set).
_defaults = settings.get_profile("default")
settings.register_profile(
    "ci",
    parent=_defaults,
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("local", parent=_defaults, deadline=None)
settings.load_profile("ci" if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no") else "local")


@pytest.fixture(scope="session")
def embedder() -> SentenceTransformerEmbedder:
    """The bundled all-MiniLM-L6-v2, loaded once."""
    model = SentenceTransformerEmbedder()
    assert model.dimension == 384
    return model


@pytest.fixture
def counting_embedder(embedder: SentenceTransformerEmbedder) -> CountingEmbedder:
    return CountingEmbedder(embedder)


@pytest.fixture(scope="session")
def pg_uri(tmp_path_factory):
    """A real PostgreSQL with pgvector, started from the pgserver package for this test session."""
    try:
        import pgserver
    except ImportError as error:
        pytest.skip(f"pgserver is not installed ({error}); pip install 'strands-semantic-memory[test]'")
    try:
        server = pgserver.get_server(str(tmp_path_factory.mktemp("pgdata")), cleanup_mode="stop")
        server.psql("CREATE EXTENSION IF NOT EXISTS vector;")
    except Exception as error:  # pragma: no cover - depends on the machine
        pytest.skip(f"PostgreSQL with pgvector could not start here: {error}")
    yield server.get_uri()
    del server


@pytest.fixture(params=ARCHIVES)
def store_kind(request):
    return request.param


@pytest.fixture
def make_memory(store_kind, request, embedder):
    """Build a SemanticMemory on the parametrized store (``embedder=`` defaults to the bundled model)."""

    def make(**kwargs):
        kwargs.setdefault("embedder", embedder)
        if "archive" not in kwargs:
            kwargs["archive"] = archive_for(store_kind, request, kwargs.get("user_id"))
        return SemanticMemory(**kwargs)

    return make


@pytest.fixture
def memory(make_memory) -> SemanticMemory:
    return make_memory()


@pytest.fixture
def archive_factory(store_kind, request, embedder):
    """Builds memories over one archive: in process a fresh one, in PostgreSQL one user_id opened again."""
    user_id = new_user_id("tools")

    def make(**kwargs):
        kwargs.setdefault("embedder", embedder)
        if store_kind == "pgvector":
            from strands_semantic_memory.archives.postgres import PostgresArchive

            kwargs.setdefault("archive", PostgresArchive(request.getfixturevalue("pg_uri"), user_id))
        return SemanticMemory(**kwargs)

    def store():
        """Another handle on the same archive: a new connection to the user_id (None: a new in-process one)."""
        if store_kind != "pgvector":
            return None
        from strands_semantic_memory.archives.postgres import PostgresArchive

        return PostgresArchive(request.getfixturevalue("pg_uri"), user_id)

    make.kind = store_kind
    make.store = store
    return make
