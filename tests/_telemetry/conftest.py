"""The telemetry tests' OpenTelemetry SDK: in-memory spans and metrics, recorded only while one of these tests runs.

OpenTelemetry's global providers can be set once per process: the first test here sets them (``install``: a tracer
provider whose sampler is switched on only while a test of this folder runs, so the rest of the suite gets
non-recording spans, and a meter provider with an in-memory reader); the tests without an SDK run in a child process.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from strands_semantic_memory import SemanticMemoryHook, SemanticSummarizingConversationManager
from strands_semantic_memory.testing import ScriptedModel
from tests.support.conversations import PLANTED_TURN, TOPIC_TURNS, make_agent
from tests.support.telemetry import OPT_IN, Installed, Telemetry, install


@pytest.fixture(scope="session")
def installed() -> Installed:
    try:
        return install()
    except RuntimeError as error:
        pytest.fail(f"{error}: these tests need their own")


@pytest.fixture
def telemetry(installed: Installed) -> Iterator[Telemetry]:
    """Spans recorded from now to the end of the test; metrics since now (``collect``)."""
    installed.reader.get_metrics_data()  # what earlier tests recorded is not this test's
    installed.exporter.clear()
    installed.switch.on = True
    try:
        yield Telemetry(installed)
    finally:
        installed.switch.on = False


@pytest.fixture
def conversation(embedder, telemetry, monkeypatch):
    """An agent (manager + hook) whose early turns were archived by reductions; the spans of those turns kept."""
    monkeypatch.delenv(OPT_IN, raising=False)
    model = ScriptedModel(max_input_chars=1600)
    manager = SemanticSummarizingConversationManager(
        embedder=embedder,
        preserve_recent_messages=4,
        semantic_search_top_k=2,
        message_context_radius=1,
        archive_when="leaving",  # the reductions alone archive: each add span is one that left the context
    )
    hook = SemanticMemoryHook()
    agent = make_agent(model, manager, hook)
    for turn in [PLANTED_TURN, *TOPIC_TURNS]:
        agent(turn)
    telemetry.settle(manager.memory)  # the background thread embedded everything, and its spans ended
    model.max_input_chars = 2400
    yield agent, model, manager, hook
    telemetry.settle(manager.memory)  # nothing the test archived is embedded into the next test's metrics
