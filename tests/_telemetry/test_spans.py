"""The memory's spans in an OpenTelemetry trace (an in-memory exporter), under Strands' own spans."""

from __future__ import annotations

import pytest
from opentelemetry import trace
from opentelemetry.trace import StatusCode
from strands import Agent
from strands.agent.conversation_manager import NullConversationManager

from strands_semantic_memory import SemanticMemory, SemanticMemoryHook, memory_tools
from strands_semantic_memory.errors import EmbeddingError
from strands_semantic_memory.messages._codec import encode_message
from strands_semantic_memory.testing import ScriptedModel, ToolCall
from tests.support.conversations import make_agent, text_message
from tests.support.embedders import FlakyEmbedder, RecordingEmbedder
from tests.support.telemetry import OPT_IN

QUESTION = "What was my booking reference again?"


def test_a_turn_shows_the_search_and_the_injection_under_strands_cycle(conversation, telemetry):
    agent, model, manager, hook = conversation
    telemetry.exporter.clear()
    agent(QUESTION)
    enrichment = hook.last_enrichment
    assert enrichment.passages, "the question finds the planted turn"

    inject = telemetry.span("memory.inject")
    search = telemetry.span("memory.search")
    assert telemetry.ancestors(inject)[:2] == ["execute_event_loop_cycle", "invoke_agent Strands Agents"]
    assert telemetry.parent(search) is inject, "the turn's search runs inside the injection of its first call"
    chat = telemetry.span("chat")
    assert telemetry.parent(chat) is telemetry.parent(inject), "the model call is the injection's sibling"
    assert inject.end_time <= chat.start_time, "the injection ends before the model is called"

    assert search.instrumentation_scope.name == "strands_semantic_memory"
    attributes = dict(search.attributes)
    assert attributes["gen_ai.operation.name"] == "memory.search"
    assert attributes["memory.search.method"] == "recall"
    assert attributes["memory.query.chars"] == len(QUESTION)
    assert "memory.query" not in attributes, "no text unless the user opts in"
    assert QUESTION not in str(attributes)
    assert attributes["memory.result.count"] == sum(len(p.hit_indices) for p in enrichment.passages)
    assert attributes["memory.relevance"] == enrichment.relevance
    assert attributes["memory.best_similarity"] == pytest.approx(enrichment.best_similarity)
    assert attributes["memory.relevance.floor"] == pytest.approx(enrichment.floor)
    assert attributes["memory.cut.count"] == enrichment.cut
    assert attributes["memory.archive.type"] == "InMemoryArchive"
    assert attributes["gen_ai.request.model"] == manager.memory.embedder.model_id

    injected = dict(inject.attributes)
    assert injected["gen_ai.operation.name"] == "memory.inject"
    assert injected["memory.injected"] is True
    assert injected["memory.entry.count"] == len(enrichment.passages)
    assert injected["memory.left_out.count"] == len(enrichment.left_out)
    assert injected["memory.inject.tokens"] == enrichment.tokens > 0
    assert injected["memory.relevance"] == enrichment.relevance
    assert injected["memory.inject.retry"] == 0
    assert "memory.inject.skip_reason" not in injected
    assert inject.status.status_code is StatusCode.UNSET and search.status.status_code is StatusCode.UNSET


def test_the_reductions_archive_under_the_agent_and_the_thread_embeds_in_linked_roots(conversation, telemetry):
    agent, model, manager, hook = conversation
    adds = telemetry.spans("memory.add")
    assert adds, "the conversation overflowed, so the manager archived what left the context"
    for span in adds:
        assert telemetry.ancestors(span)[-1] == "invoke_agent Strands Agents"
        assert span.attributes["memory.message.new_count"] == span.attributes["memory.message.count"] > 0
        assert span.attributes["memory.embedding.mode"] == "background"
    archived = manager.memory.messages()
    assert sum(s.attributes["memory.message.new_count"] for s in adds) == len(archived)
    assert sum(s.attributes["memory.message.bytes"] for s in adds) == sum(len(encode_message(m)) for _, m in archived)

    batches = [s for s in telemetry.spans("memory.embed") if not s.attributes.get("memory.embed.for_search")]
    assert batches, "the background thread embedded"
    add_ids = {s.context.span_id for s in adds}
    for span in batches:
        assert span.attributes["memory.embed.background"] is True, "nothing embedded in the agent's thread"
        assert span.parent is None, "a batch of the background thread is a trace root"
        assert span.links and {link.context.span_id for link in span.links} <= add_ids
        assert span.attributes["memory.embed.failed_count"] == 0
        assert span.attributes["memory.embed.backlog"] >= 0
    assert sum(s.attributes["memory.embed.embedded_count"] for s in batches) == len(archived)
    assert batches[-1].attributes["memory.embed.backlog"] == 0, "the last batch left nothing pending"


def test_a_search_embeds_pending_messages_inside_its_span_and_the_thread_stores_them_in_a_linked_root(
    embedder, telemetry
):
    held = RecordingEmbedder(embedder, hold=True)  # the background thread waits in its batch until released
    memory = SemanticMemory(embedder=held, embedding="background")
    try:
        with trace.get_tracer("tests").start_as_current_span("request"):
            memory.add([text_message("user", "The parcel locker code is 4417."), text_message("assistant", "Noted.")])
        add = telemetry.span("memory.add")
        assert telemetry.parent(add) is telemetry.span("request")
        assert held.started.wait(60), "the background thread took the batch"

        assert memory.search("parcel locker code"), "found by meaning, though not stored yet"
        search = telemetry.span("memory.search")
        for_search = telemetry.span("memory.embed")
        assert telemetry.parent(for_search) is search, "the search embedded the pending messages itself"
        assert for_search.attributes["memory.embed.for_search"] is True
        assert for_search.attributes["memory.embed.batch_size"] == 2
        assert for_search.attributes["memory.embed.embedded_count"] == 2
        assert search.attributes["memory.pending.unembedded_count"] == 0
    finally:
        held.release.set()
    telemetry.settle(memory)
    (batch,) = [s for s in telemetry.spans("memory.embed") if s is not for_search]
    assert batch.parent is None and batch.attributes["memory.embed.background"] is True
    assert [link.context.span_id for link in batch.links] == [add.context.span_id], "linked to the add it serves"
    assert batch.attributes["memory.embed.batch_size"] == batch.attributes["memory.embed.embedded_count"] == 2
    assert batch.attributes["memory.embed.backlog"] == 0
    memory.close()


@pytest.mark.parametrize(
    ("opt_in", "recorded"),
    [
        (None, False),
        ("gen_ai_unredacted_attributes=memory.query", True),
        ("gen_ai_latest_experimental, gen_ai_unredacted_attributes=gen_ai.*;memory.*", True),
        ("gen_ai_unredacted_attributes=gen_ai.input.messages", False),
        ("gen_ai_unredacted_attributes=", False),
        ("gen_ai_latest_experimental", False),
    ],
)
def test_the_query_text_is_recorded_only_when_the_user_opts_in_as_for_strands_content(
    embedder, telemetry, monkeypatch, opt_in, recorded
):
    if opt_in is None:
        monkeypatch.delenv(OPT_IN, raising=False)
    else:
        monkeypatch.setenv(OPT_IN, opt_in)
    memory = SemanticMemory(embedder=embedder)
    memory.add([text_message("user", "The parcel locker code is 4417.")])
    query = "what is the locker code?"
    memory.search(query)
    attributes = dict(telemetry.span("memory.search").attributes)
    assert attributes["memory.query.chars"] == len(query)
    assert ("memory.query" in attributes) is recorded
    if recorded:
        assert attributes["memory.query"] == query


def test_a_failing_search_is_an_error_on_its_span_and_the_turn_goes_on(embedder, telemetry):
    flaky = FlakyEmbedder(embedder)
    memory = SemanticMemory(embedder=flaky, retrieval="dense")
    memory.add([text_message("user", "The parcel locker code is 4417.")])
    flaky.failing = True
    with pytest.raises(EmbeddingError):
        memory.search("locker code")
    failed = telemetry.span("memory.search")
    assert failed.status.status_code is StatusCode.ERROR
    assert [e.name for e in failed.events] == ["exception"]
    assert failed.events[0].attributes["exception.type"] == f"{EmbeddingError.__module__}.EmbeddingError"

    telemetry.exporter.clear()
    hook = SemanticMemoryHook(memory=memory)
    model = ScriptedModel()
    agent = make_agent(model, NullConversationManager(), hook)
    agent("What is the locker code?")
    assert hook.last_enrichment.error
    inject = telemetry.span("memory.inject")
    assert inject.status.status_code is StatusCode.UNSET, "the injection fails open, as Strands' does"
    assert inject.attributes["memory.inject.skip_reason"] == "search_failed"
    assert inject.attributes["memory.search.error"] == hook.last_enrichment.error
    assert telemetry.span("memory.search").status.status_code is StatusCode.ERROR


def test_a_failing_embedding_batch_is_an_error_on_its_span(embedder, telemetry):
    flaky = FlakyEmbedder(embedder)
    flaky.failing = True
    memory = SemanticMemory(embedder=flaky, embedding="inline")
    memory.add([text_message("user", "first"), text_message("assistant", "second")])
    add = telemetry.span("memory.add")
    batch = telemetry.span("memory.embed")
    assert telemetry.parent(batch) is add, "an inline batch runs inside the add"
    assert batch.status.status_code is StatusCode.ERROR
    assert batch.attributes["memory.embed.failed_count"] == 2
    assert batch.attributes["memory.embed.embedded_count"] == 0
    assert batch.attributes["memory.embed.backlog"] == 2
    assert add.status.status_code is StatusCode.UNSET, "archiving succeeded: the messages wait, searchable by words"


def call(tool, **arguments):
    """Have the model call the tool in a turn, as in a conversation (Strands runs it under its ``execute_tool`` span).

    Returns the result's status and text, as the model received them.
    """
    model = ScriptedModel([ToolCall(tool.tool_name, arguments), "Done."])
    agent = Agent(model=model, tools=[tool], callback_handler=None)
    agent("Please look it up.")
    (result,) = [block["toolResult"] for m in agent.messages for block in m["content"] if "toolResult" in block]
    return result["status"], "\n".join(block.get("text", "") for block in result["content"])


def test_the_tools_calls_are_spans_with_the_search_and_the_forgetting_inside(embedder, telemetry):
    memory = SemanticMemory(embedder=embedder, embedding="inline")
    memory.add([text_message("user", "The parcel locker code is 4417."), text_message("assistant", "Noted.")])
    tools = {t.tool_name: t for t in memory_tools(memory, allow_forget=True)}

    status, found = call(tools["conversation_search"], query="locker code")
    assert status == "success"
    tool_call = telemetry.span("memory.tool")
    assert tool_call.attributes["gen_ai.tool.name"] == "conversation_search"
    assert tool_call.attributes["memory.tool.output_chars"] == len(found)
    assert telemetry.ancestors(tool_call)[0] == "execute_tool conversation_search"
    search = telemetry.span("memory.search")
    assert telemetry.parent(search) is tool_call
    assert search.attributes["memory.search.method"] == "retrieve"

    telemetry.exporter.clear()
    status, _ = call(tools["conversation_read"], start=5, end=2)
    assert status == "error"
    refused = telemetry.span("memory.tool")
    assert refused.attributes["gen_ai.tool.name"] == "conversation_read"
    assert refused.status.status_code is StatusCode.ERROR

    telemetry.exporter.clear()
    status, _ = call(tools["conversation_forget"], query="locker code")
    assert status == "success" and len(memory) == 1
    forgotten = telemetry.span("memory.forget")
    assert telemetry.parent(forgotten).attributes["gen_ai.tool.name"] == "conversation_forget"
    assert forgotten.attributes["memory.forget.count"] == 1
    assert forgotten.attributes["memory.forget.requested_count"] == 1, "the tool finds the text, then forgets indices"
    assert forgotten.attributes["memory.forget.by_query"] is False
    for span in telemetry.spans():  # Strands' own spans follow Strands' redaction (docs/operations.md)
        if span.instrumentation_scope.name == "strands_semantic_memory":
            assert "locker" not in str(dict(span.attributes)), f"what was forgotten is not in {span.name}"


def test_forgetting_by_query_records_counts_never_the_text(embedder, telemetry, monkeypatch):
    monkeypatch.setenv(OPT_IN, "gen_ai_unredacted_attributes=memory.*")  # even with the query's text opted in
    memory = SemanticMemory(embedder=embedder, embedding="inline")
    memory.add([text_message("user", f"The gate code is {code}.") for code in (9021, 9022)])
    memory.add([text_message("user", "Unrelated.")])
    telemetry.exporter.clear()
    assert memory.forget([2], query="gate code") == [0, 1, 2]
    forgotten = dict(telemetry.span("memory.forget").attributes)
    assert forgotten == {
        "gen_ai.operation.name": "memory.forget",
        "memory.archive.type": "InMemoryArchive",
        "memory.forget.requested_count": 1,
        "memory.forget.by_query": True,
        "memory.forget.count": 3,
    }
