"""What the code examples of ``README.md`` and ``docs/`` run with (pytest-markdown-docs, ``pytest --markdown-docs``).

Every ```` ```python ```` fence in those files is a test. Examples that build an agent name ``scripted_model`` where a
reader would put their own model: a real ``strands.models.Model`` that replies from a script (and answers the
structured output of structured compaction), so the examples run offline and fast. Each example runs in a fresh
temporary folder, so the files an example writes (a durable archive, a session) never land in the clone.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


def pytest_markdown_docs_globals() -> dict[str, Any]:
    """The names every Markdown example may use without importing them (a new scripted model per example)."""
    from tests.support.structured_model import StructuredScriptedModel

    return {"scripted_model": StructuredScriptedModel()}


@pytest.fixture(autouse=True)
def _markdown_example_folder(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Run each Markdown example in its own temporary folder (other tests are left as they are)."""
    if request.node.get_closest_marker("markdown-docs") is not None:
        monkeypatch.chdir(request.getfixturevalue("tmp_path"))
    yield
