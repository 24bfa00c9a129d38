"""Where the examples of ``README.md`` and ``docs/`` run (``pytest --markdown-docs``), and the slow lanes' markers.

Every ```` ```python ```` fence in those files is a test, and imports everything it uses, so it runs unchanged when
pasted into a file: where a reader puts their own model, an example puts ``ScriptedModel`` from
``strands_semantic_memory.testing``. Each example runs in a fresh temporary folder, so the files an example writes
(a durable archive, a session) never land in the clone.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

pytest_plugins = ["tests.support.suite"]  # a line every 30 s of a long test; no process left behind


@pytest.fixture(autouse=True)
def _markdown_example_folder(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Run each Markdown example in its own temporary folder, its output captured (other tests are left as they are).

    pytest-markdown-docs (0.9) turns pytest's capture off while an example runs, so what an example prints (its
    ``print`` calls, and the replies Strands' default callback handler streams to stdout) would land between the
    progress dots. With the capture left on, an example's output is kept and shown with its failure, like any
    test's.
    """
    if request.node.get_closest_marker("markdown-docs") is not None:
        monkeypatch.chdir(request.getfixturevalue("tmp_path"))
        capture = request.config.pluginmanager.getplugin("capturemanager")
        if capture is not None:
            monkeypatch.setattr(capture, "global_and_fixture_disabled", contextlib.nullcontext)
    yield


def _uses_postgres(item: pytest.Item) -> bool:
    """Whether a test needs PostgreSQL: it asks for ``pg_uri``, or one of its parameters is ``"pgvector"``.

    Tests parametrized over the archives (``store_kind``, ``kind``) reach the server through
    ``request.getfixturevalue("pg_uri")`` in their ``"pgvector"`` case only, so the parameter says it.
    """
    if "pg_uri" in getattr(item, "fixturenames", ()):
        return True
    callspec = getattr(item, "callspec", None)
    return callspec is not None and "pgvector" in callspec.params.values()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests of the slow lanes, so ``-m "not slow and not postgres and not subprocess and not docs"`` is fast.

    ``postgres``: the tests that start or use the pgserver PostgreSQL (found by what they ask for, above);
    ``docs``: the Markdown examples of ``README.md`` and ``docs/`` (pytest-markdown-docs marks them
    ``markdown-docs``). ``subprocess`` and ``slow`` are written on the tests themselves.
    """
    for item in items:
        if _uses_postgres(item):
            item.add_marker(pytest.mark.postgres)
        if item.get_closest_marker("markdown-docs") is not None:
            item.add_marker(pytest.mark.docs)


@pytest.fixture
def opentelemetry_for_tests() -> None:
    """For an example that turns Strands' telemetry on (its fence names ``fixture:opentelemetry_for_tests``).

    OpenTelemetry sets a process's global providers once. The tests' in-memory SDK (``tests/support/telemetry.py``)
    is installed first, so the example's ``StrandsTelemetry()`` runs as written but leaves the providers as they are
    (OpenTelemetry logs that it does not override them), exports nothing, and the telemetry tests (``tests/_telemetry``)
    find their own SDK whichever runs first.
    """
    from tests.support.telemetry import install

    install()
