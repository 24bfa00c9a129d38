"""Fixtures for the storage tests: ``SemanticStorage`` on the in-process archive and on a durable SQLite file."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from strands_semantic_memory.storage import SemanticStorage


@pytest.fixture
def anyio_backend() -> str:
    """The async tests run on asyncio, as Strands does."""
    return "asyncio"


@pytest.fixture(params=["in_process", "sqlite"])
def make_storage(request, embedder, tmp_path) -> Iterator[Callable[..., SemanticStorage]]:
    """Build storages on the parametrized archive, each on a fresh one, closed after the test."""
    made: list[SemanticStorage] = []

    def make(cls: type[SemanticStorage] = SemanticStorage, **kwargs: Any) -> SemanticStorage:
        if "memory" not in kwargs:
            kwargs.setdefault("embedder", embedder)
            if request.param == "sqlite" and "archive" not in kwargs:
                kwargs.setdefault("archive_path", tmp_path / f"storage-{len(made)}.db")
        made.append(cls(**kwargs))
        return made[-1]

    yield make
    for storage in made:
        storage.close()


@pytest.fixture
def storage(make_storage) -> SemanticStorage:
    return make_storage()
