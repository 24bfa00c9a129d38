"""The hook through a real Strands Agent driven by a scripted chat model."""

import pytest
from strands.agent.conversation_manager import SlidingWindowConversationManager

from strands_semantic_memory import (
    ConfigurationError,
    SemanticMemory,
    SemanticMemoryHook,
    SemanticSummarizingConversationManager,
)
from strands_semantic_memory.rendering import CONTEXT_BEGIN, CONTEXT_END, CONTEXT_HEADER, render_message
from tests.conftest import PLANTED_TURN, REFERENCE, TOPIC_TURNS, FlakyEmbedder, make_agent
from tests.scripted_model import ScriptedModel

LIMIT = 1600  # room for the preserved messages plus an enriched turn
QUESTION = "What was my booking reference again?"


def conversation(embedder, hook, *, embedder_override=None, turns=None, retrieval="hybrid"):
    model = ScriptedModel(max_input_chars=LIMIT)
    manager = SemanticSummarizingConversationManager(
        embedder=embedder_override or embedder,
        preserve_recent_messages=4,
        semantic_search_top_k=2,
        message_context_radius=1,
        retrieval=retrieval,
    )
    agent = make_agent(model, manager, hook)
    for turn in turns or [PLANTED_TURN, *TOPIC_TURNS]:
        agent(turn)
    assert REFERENCE not in "\n".join(render_message(m) for m in agent.messages)
    return agent, model, manager


def sent_question(model):
    return render_message(model.chat_requests[-1]["messages"][-1])


def test_later_question_reaches_the_model_with_the_exact_archived_text(embedder):
    hook = SemanticMemoryHook()
    agent, model, manager = conversation(embedder, hook)
    agent(QUESTION)
    sent = sent_question(model)
    assert sent.startswith(CONTEXT_HEADER + "\n" + CONTEXT_BEGIN + "\n")
    assert f"[Message 0, user]: {PLANTED_TURN}" in sent
    assert sent.endswith(f"{CONTEXT_END}\nCurrent question: {QUESTION}")
    # After the invocation the stored turn holds only the user's words again.
    stored = [m for m in agent.messages if m["role"] == "user" and QUESTION in render_message(m)]
    assert len(stored) == 1 and stored[0]["content"] == [{"text": QUESTION}]
    assert "metadata" not in stored[0]
    enrichment = hook.last_enrichment
    assert enrichment.query == QUESTION and 0 in [i for w in enrichment.windows for i in w.indices]


def test_injected_context_is_never_archived_or_summarized(embedder):
    hook = SemanticMemoryHook()
    agent, model, manager = conversation(embedder, hook)
    for turn in [QUESTION, *TOPIC_TURNS, QUESTION + " (asking twice)", *TOPIC_TURNS]:
        agent(turn)
    archived = [render_message(m) for _, m in manager.memory.messages()]
    assert not any(CONTEXT_HEADER in t or CONTEXT_BEGIN in t for t in archived)
    assert QUESTION in archived, "the enriched turn itself was archived with the user's own words"
    for request in model.summary_requests:
        assert not any(CONTEXT_BEGIN in render_message(m) for m in request["messages"])
    assert not any(CONTEXT_BEGIN in render_message(m) for m in agent.messages)


def test_keep_injected_context_option_keeps_it_in_history_but_not_in_the_archive(embedder):
    hook = SemanticMemoryHook(keep_injected_context=True, enabled=False)  # enriched turns would keep the number
    agent, model, manager = conversation(embedder, hook)
    hook.enabled = True
    agent(QUESTION)
    assert any(CONTEXT_BEGIN in render_message(m) for m in agent.messages)
    hook.enabled = False  # kept enrichments grow the context quickly; stop adding them
    for turn in TOPIC_TURNS:
        agent(turn)
    archived = [render_message(m) for _, m in manager.memory.messages()]
    assert QUESTION in archived and not any(CONTEXT_BEGIN in t for t in archived)


def test_include_metadata_false_drops_prefixes(embedder):
    hook = SemanticMemoryHook(include_metadata=False)
    agent, model, _ = conversation(embedder, hook)
    agent(QUESTION)
    sent = sent_question(model)
    assert PLANTED_TURN in sent and "[Message " not in sent


def test_max_context_length_bounds_whole_messages(embedder):
    hook = SemanticMemoryHook(max_context_length=len(PLANTED_TURN) + 40)
    agent, model, manager = conversation(embedder, hook)
    agent(QUESTION)
    sent = sent_question(model)
    context = sent.split(CONTEXT_BEGIN + "\n", 1)[1].split("\n" + CONTEXT_END, 1)[0]
    assert len(context) <= hook.max_context_length
    assert context == f"[Message 0, user]: {PLANTED_TURN}", "the hit alone, whole, when its window does not fit"


def test_nothing_fits_leaves_the_turn_untouched(embedder):
    hook = SemanticMemoryHook(max_context_length=10)
    agent, model, _ = conversation(embedder, hook)
    agent(QUESTION)
    assert sent_question(model) == QUESTION
    assert hook.last_enrichment.windows == [] and hook.last_enrichment.dropped_windows


def test_disabled_hook_and_empty_archive_leave_turns_untouched(embedder):
    hook = SemanticMemoryHook(enabled=False)
    agent, model, _ = conversation(embedder, hook)
    agent(QUESTION)
    assert sent_question(model) == QUESTION

    fresh_model = ScriptedModel()
    fresh = make_agent(fresh_model, SemanticSummarizingConversationManager(embedder=embedder), SemanticMemoryHook())
    fresh(QUESTION)
    assert sent_question(fresh_model) == QUESTION


def test_failing_search_in_dense_mode_leaves_turn_unenriched_with_warning(embedder, caplog):
    flaky = FlakyEmbedder(embedder)
    hook = SemanticMemoryHook()
    agent, model, _ = conversation(embedder, hook, embedder_override=flaky, retrieval="dense")
    flaky.failing = True
    with caplog.at_level("WARNING", logger="strands_semantic_memory.hook"):
        agent(QUESTION)
    assert sent_question(model) == QUESTION
    assert "archive search failed" in caplog.text


def test_failing_embedder_in_hybrid_mode_falls_back_to_lexical_with_warning(embedder, caplog):
    flaky = FlakyEmbedder(embedder)
    hook = SemanticMemoryHook()
    agent, model, _ = conversation(embedder, hook, embedder_override=flaky)
    flaky.failing = True
    with caplog.at_level("WARNING", logger="strands_semantic_memory.memory"):
        agent(QUESTION)
    assert f"[Message 0, user]: {PLANTED_TURN}" in sent_question(model)
    assert "using lexical results only" in caplog.text


def test_tool_results_are_not_enriched(embedder):
    hook = SemanticMemoryHook()
    memory = SemanticMemory(embedder=embedder)
    memory.archive([{"role": "user", "content": [{"text": PLANTED_TURN}]}])
    from strands.hooks import MessageAddedEvent

    class FakeAgent:  # only the attribute the hook reads
        conversation_manager = None

    hook.memory = memory
    tool_result = {
        "role": "user",
        "content": [
            {"toolResult": {"toolUseId": "1", "status": "success", "content": [{"text": "booking reference"}]}}
        ],
    }
    hook._on_message_added(MessageAddedEvent(agent=FakeAgent(), message=tool_result))
    assert tool_result["content"][0]["toolResult"]["content"] == [{"text": "booking reference"}]
    assistant = {"role": "assistant", "content": [{"text": "booking reference"}]}
    hook._on_message_added(MessageAddedEvent(agent=FakeAgent(), message=assistant))
    assert assistant["content"] == [{"text": "booking reference"}]


def test_wrong_manager_is_a_clear_error_at_construction():
    with pytest.raises(
        ConfigurationError, match="SlidingWindowConversationManager.*SemanticSummarizingConversationManager"
    ):
        make_agent(ScriptedModel(), SlidingWindowConversationManager(), SemanticMemoryHook())


def test_hook_with_explicit_memory_works_with_any_manager(embedder):
    memory = SemanticMemory(embedder=embedder)
    memory.archive([{"role": "user", "content": [{"text": PLANTED_TURN}]}])
    model = ScriptedModel()
    agent = make_agent(model, SlidingWindowConversationManager(), SemanticMemoryHook(memory=memory))
    agent(QUESTION)
    assert PLANTED_TURN in sent_question(model)
