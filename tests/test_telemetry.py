"""Spans and metrics through OpenTelemetry's real SDK: sizes and counts, never archived text unless opted in."""

from __future__ import annotations

import time

import pytest
from opentelemetry.trace import StatusCode

from strands_semantic_memory import SemanticMemory
from strands_semantic_memory._telemetry import operation
from strands_semantic_memory.embeddings import Embedder
from tests.support.telemetry import install

SECRET = "the vault code is 4417-Zebra"


def spans_named(exporter, name: str) -> list:
    return [span for span in exporter.get_finished_spans() if span.name == name]


def test_add_search_embed_and_forget_are_spans_that_carry_no_text(embedder: Embedder) -> None:
    exporter, reader = install()
    exporter.clear()
    memory = SemanticMemory(embedder=embedder, user_id="telemetry-user")
    memory.add(
        [{"role": "user", "content": [{"text": SECRET}]}, {"role": "assistant", "content": [{"text": "Noted."}]}]
    )
    memory.embed_pending()
    memory.search("what is the vault code?")
    memory.forget_all()
    deadline = time.monotonic() + 10
    while not spans_named(exporter, "memory.embed") and time.monotonic() < deadline:
        time.sleep(0.05)
    for name in ("memory.add", "memory.search", "memory.embed", "memory.forget"):
        assert spans_named(exporter, name), f"no {name} span"
    assert spans_named(exporter, "memory.add")[0].attributes["memory.message.count"] == 2
    assert {s.attributes["memory.embed.lane"] for s in spans_named(exporter, "memory.embed")} >= {"document"}
    for span in exporter.get_finished_spans():
        assert not any("4417" in str(value) or "vault" in str(value) for value in span.attributes.values()), span.name
    names = {m.name for r in reader.get_metrics_data().resource_metrics for s in r.scope_metrics for m in s.metrics}
    assert {
        "semantic_memory.archive.added",
        "semantic_memory.search.duration",
        "semantic_memory.embedding.duration",
    } <= names
    memory.close()


def test_the_query_is_recorded_only_when_the_user_opts_in(embedder: Embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    exporter, _ = install()
    memory = SemanticMemory(embedder=embedder)
    memory.add([{"role": "user", "content": [{"text": SECRET}]}])
    exporter.clear()
    memory.search("vault code please")
    assert "memory.query" not in spans_named(exporter, "memory.search")[-1].attributes
    monkeypatch.setenv(
        "OTEL_SEMCONV_STABILITY_OPT_IN", "gen_ai_latest_experimental,gen_ai_unredacted_attributes=memory.*"
    )
    memory.search("vault code please")
    assert spans_named(exporter, "memory.search")[-1].attributes["memory.query"] == "vault code please"
    memory.close()


def test_a_failed_operation_is_an_error_span_named_by_its_type_only() -> None:
    exporter, _ = install()
    exporter.clear()
    with pytest.raises(ValueError), operation("memory.probe", **{"memory.message.count": 1}):
        raise ValueError(SECRET)  # an embedder's error may quote the text it was given
    (span,) = spans_named(exporter, "memory.probe")
    assert span.status.status_code is StatusCode.ERROR and span.attributes["error.type"] == "ValueError"
    assert SECRET not in str(span.status.description) and not span.events
