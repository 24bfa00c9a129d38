"""Without an OpenTelemetry SDK nothing is recorded and nothing fails: a fresh interpreter, where no provider is set."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.support.processes import ROOT

SCRIPT = r"""
import json

from opentelemetry import metrics, trace
from strands import Agent

from strands_semantic_memory import SemanticMemory, SemanticMemoryHook, memory_tools
from strands_semantic_memory import _telemetry
from strands_semantic_memory._telemetry import _metrics
from strands_semantic_memory.embeddings import SentenceTransformerEmbedder
from strands_semantic_memory.testing import ScriptedModel

memory = SemanticMemory(embedder=SentenceTransformerEmbedder(), embedding="background")
memory.add([{"role": "user", "content": [{"text": "The parcel locker code is 4417."}]}])
memory.embed_pending()
hook = SemanticMemoryHook(memory=memory, inject_when="always")
agent = Agent(model=ScriptedModel(), hooks=[hook], tools=memory_tools(memory, allow_forget=True), callback_handler=None)
agent("What is the parcel locker code?")
agent.tool.conversation_search(query="locker code", record_direct_tool_call=False)
agent.tool.conversation_forget(query="locker code", record_direct_tool_call=False)
with _telemetry.Operation("memory.probe") as probe:
    pass
print(json.dumps({
    "tracer_provider": type(trace.get_tracer_provider()).__name__,
    "meter_provider": type(metrics.get_meter_provider()).__name__,
    "recording": probe.recording,
    "span_valid": probe.span.get_span_context().is_valid,
    "gauges_read": _metrics._snapshot is not None,
    "injected_tokens": hook.last_enrichment.tokens,
    "left": len(memory),
}))
"""


@pytest.mark.subprocess
@pytest.mark.slow
def test_without_an_sdk_a_turn_records_nothing_and_fails_nothing():
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        capture_output=True,
        text=True,
        timeout=600,
        env={**env, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["tracer_provider"] == "ProxyTracerProvider", "no SDK was configured"
    assert report["meter_provider"] == "_ProxyMeterProvider"
    assert report["recording"] is False and report["span_valid"] is False, "the API's no-op spans"
    assert report["gauges_read"] is False, "no reader: the gauges never read an archive"
    assert report["injected_tokens"] > 0 and report["left"] == 0, "the memory worked"
    assert "opentelemetry" not in done.stderr.lower() and "Traceback" not in done.stderr
