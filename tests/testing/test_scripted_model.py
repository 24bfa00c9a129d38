"""The public scripted model: its scripts, its summaries and structured output, its window, what it records."""

from __future__ import annotations

import asyncio

import pytest
from strands import Agent, tool
from strands.agent.conversation_manager import SummarizingConversationManager
from strands.types.exceptions import ContextWindowOverflowException

from strands_semantic_memory import SemanticSummarizingConversationManager
from strands_semantic_memory.conversation_manager import StructuredSummary
from strands_semantic_memory.testing import (
    DEFAULT_SUMMARY,
    ScriptedModel,
    ToolCall,
    archive_indices,
    previous_summary,
)


def agent_of(model, **kwargs):
    return Agent(model=model, callback_handler=None, **kwargs)


def test_a_list_script_answers_in_order_records_each_call_and_refuses_a_call_past_its_end():
    model = ScriptedModel(["Hello!", "Noted."])
    agent = agent_of(model)
    assert str(agent("Hi")).strip() == "Hello!"
    assert str(agent("Remember the code 42.")).strip() == "Noted."
    assert [r["is_summary"] for r in model.requests] == [False, False]
    assert model.requests[1]["messages"][-1]["content"][0]["text"] == "Remember the code 42."
    with pytest.raises(RuntimeError, match="no reply left: it has 2"):
        agent("One more?")


def test_the_default_script_notes_the_turn_and_a_text_script_repeats():
    assert str(agent_of(ScriptedModel())("Plan the trip to Lisbon.")).strip() == (
        "Noted. (reply to: Plan the trip to Lisbon.)"
    )
    agent = agent_of(ScriptedModel("Sure."))
    assert [str(agent(f"turn {n}")).strip() for n in range(3)] == ["Sure."] * 3


def test_a_call_above_the_window_overflows_and_strands_summarizes_with_the_scripted_summary():
    model = ScriptedModel(max_input_chars=1200)
    agent = agent_of(model, conversation_manager=SummarizingConversationManager(preserve_recent_messages=2))
    for n in range(10):
        agent(f"Turn {n}: a long enough message about the garden irrigation and the team dinner plans.")
    assert model.overflows > 0, "a call above 1,200 characters was refused"
    assert model.summary_requests, "Strands asked for a summary"
    assert all(not r["is_summary"] for r in model.chat_requests)
    assert agent.messages[0]["content"][0]["text"] == DEFAULT_SUMMARY, "the summary the model wrote opens the history"


def test_a_chat_call_above_the_limit_is_refused_as_a_provider_refuses_it_and_a_summary_call_is_not():
    model = ScriptedModel(max_input_chars=10)

    async def call(text):
        return [event async for event in model.stream([{"role": "user", "content": [{"text": text}]}])]

    with pytest.raises(ContextWindowOverflowException, match="input of 11 characters exceeds 10"):
        asyncio.run(call("eleven char"))
    assert model.overflows == 1 and len(model.requests) == 1, "the refused call is recorded"
    assert asyncio.run(call("Please summarize this conversation."))[1]["contentBlockDelta"]["delta"]["text"] == (
        DEFAULT_SUMMARY
    )


def test_the_window_is_declared_in_the_config_as_providers_declare_it():
    model = ScriptedModel(context_window_limit=8000)
    assert model.context_window_limit == 8000 and model.get_config()["model_id"] == "scripted"
    model.update_config(context_window_limit=4000)
    assert model.context_window_limit == 4000
    assert ScriptedModel().context_window_limit is None


def test_a_responder_sees_every_call_and_can_fail_one_or_call_a_tool():
    calls = []

    @tool
    def lookup(code: str) -> str:
        """Look up a code."""
        calls.append(code)
        return f"{code} is the staging port"

    def responder(messages, system_prompt, is_summary):
        last = messages[-1]["content"][0]
        if "toolResult" in last:
            return "The lookup says: " + last["toolResult"]["content"][0]["text"]
        if "fail" in last.get("text", ""):
            return ConnectionError("the provider is down")
        return ToolCall("lookup", {"code": "6432"})

    model = ScriptedModel(responder)
    agent = agent_of(model, tools=[lookup])
    assert str(agent("What is 6432?")).strip() == "The lookup says: 6432 is the staging port"
    assert calls == ["6432"] and model.requests[0]["tool_specs"][0]["name"] == "lookup"
    with pytest.raises(ConnectionError):
        agent("please fail")
    model.responder = lambda messages, system_prompt, is_summary: "replaced"
    assert str(agent("and now?")).strip() == "replaced"


def test_structured_compaction_merges_fact_lines_with_their_sources_across_reductions(embedder):
    manager = SemanticSummarizingConversationManager(
        embedder=embedder, summary_format="structured", preserve_recent_messages=2
    )
    model = ScriptedModel()
    agent = agent_of(model, conversation_manager=manager)
    for turn in ("FACT port: 6432", "FACT host: db-stg-04", "FACT port: 5432", "Which host was it?"):
        agent(turn)
    for _ in range(6):  # each reduction merges the oldest message(s) into the summary so far
        manager.reduce_context(agent)
    summary = manager.structured_summary
    assert isinstance(summary, StructuredSummary)
    facts = {fact.text: fact.sources for fact in summary.facts}
    assert set(facts) == {"port: 5432", "host: db-stg-04"}, "the later port replaced the earlier one"
    assert all(len(sources) == 1 for sources in facts.values())
    assert manager.memory.get(facts["host: db-stg-04"][0])["content"][0]["text"] == "FACT host: db-stg-04"
    assert len(model.structured_requests) >= 3 and model.structured_requests[0]["schema"] is StructuredSummary


def test_without_structured_output_the_model_says_so():
    async def ask():
        async for _ in ScriptedModel(structured=None).structured_output(StructuredSummary, []):
            pass

    with pytest.raises(NotImplementedError, match="no structured output"):
        asyncio.run(ask())


def test_the_summary_so_far_is_the_first_json_object_that_fits_the_schema():
    text = (
        'The current summary ({"not": "it"} is an aside):\n<x>\n{"facts":[{"text":"port: 6432","sources":[3]}]}\n</x>'
    )
    assert previous_summary(text, StructuredSummary) == {"facts": [{"text": "port: 6432", "sources": [3]}]}
    assert previous_summary(text) == {"not": "it"}, "without a schema: the first object"
    assert previous_summary("no summary yet {broken", StructuredSummary) is None
    assert archive_indices("They are archived as #3-#5, #9 (in order). Then #12.") == [3, 4, 5, 9]
