"""Fixtures for the storage tests: a ``SemanticStorage`` on each archive (in process, SQLite, PostgreSQL)."""

from __future__ import annotations

import pytest

from strands_semantic_memory.storage import SemanticStorage
from tests.support.archives import archive_for


@pytest.fixture
def anyio_backend() -> str:
    """The async tests run on asyncio, as Strands does."""
    return "asyncio"


@pytest.fixture
def make_storage(store_kind, request, embedder):
    """Build ``SemanticStorage`` objects on the parametrized archive, each on a fresh one; closed after the test."""
    made: list[SemanticStorage] = []

    def make(cls: type[SemanticStorage] = SemanticStorage, **kwargs) -> SemanticStorage:
        kwargs.setdefault("embedder", embedder)
        if "memory" in kwargs:
            kwargs.pop("embedder")
        elif "archive" not in kwargs and "archive_path" not in kwargs:
            store = archive_for(store_kind, request)
            if store is not None:
                kwargs["archive"] = store
        storage = cls(**kwargs)
        made.append(storage)
        return storage

    make.kind = store_kind
    yield make
    for storage in made:
        storage.close()


@pytest.fixture
def storage(make_storage) -> SemanticStorage:
    return make_storage()
