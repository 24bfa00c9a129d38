"""The conversation manager through a real Strands Agent driven by a scripted chat model."""

import pytest
from strands import Agent, tool
from strands.agent.conversation_manager import SlidingWindowConversationManager

from strands_semantic_memory import SemanticSummarizingConversationManager
from strands_semantic_memory.rendering import is_summary, render_message
from tests.conftest import PLANTED_TURN, REFERENCE, TOPIC_TURNS, make_agent
from tests.scripted_model import ScriptedModel, ToolCall, default_responder

LIMIT = 1200  # characters; the scripted model overflows above it (the preserved messages fit easily)


def manager_for(embedder, **kwargs):
    kwargs.setdefault("preserve_recent_messages", 4)
    return SemanticSummarizingConversationManager(embedder=embedder, **kwargs)


def all_texts(messages):
    return "\n".join(render_message(m) for m in messages)


def test_overflow_archives_exactly_what_was_summarized(embedder):
    model = ScriptedModel(max_input_chars=LIMIT)
    manager = manager_for(embedder)
    agent = make_agent(model, manager)
    agent(PLANTED_TURN)
    for turn in TOPIC_TURNS:
        agent(turn)
    assert model.overflows >= 1 and model.summary_requests
    assert REFERENCE not in all_texts(agent.messages), "the number left the active context"
    assert REFERENCE not in all_texts(model.summary_requests[-1]["messages"][-1:]), "scripted summary omits it"
    archived = manager.memory.messages()
    assert archived[0][1]["content"][0]["text"] == PLANTED_TURN
    # Archive + active context = the whole conversation, each message once, summaries never archived.
    active = [m for m in agent.messages if not is_summary(m)]
    assert len(archived) + len(active) == 2 * (len(TOPIC_TURNS) + 1)
    assert manager.removed_message_count == len(archived)
    assert not any(is_summary(m) for _, m in archived)
    assert [i for i, _ in archived] == list(range(len(archived)))


def test_summary_is_made_by_the_model_not_by_reentering_the_agent(embedder):
    model = ScriptedModel(max_input_chars=LIMIT)
    agent = make_agent(model, manager_for(embedder))
    for turn in [PLANTED_TURN, *TOPIC_TURNS]:
        agent(turn)
    request = model.summary_requests[0]
    assert request["messages"][-1]["content"][0]["text"] == "Please summarize this conversation."
    assert is_summary(agent.messages[0])


def test_summary_failure_loses_nothing_and_archives_once(embedder):
    fail = {"on": True}

    def responder(messages, system_prompt, is_summary):
        if is_summary and fail["on"]:
            return RuntimeError("summarizer is down")
        return default_responder(messages, system_prompt, is_summary)

    model = ScriptedModel(responder, max_input_chars=LIMIT)
    manager = manager_for(embedder)
    agent = make_agent(model, manager)
    turns = [PLANTED_TURN, *TOPIC_TURNS]
    failed_at = None
    for position, turn in enumerate(turns):
        try:
            agent(turn)
        except RuntimeError:
            failed_at = position
            break
    assert failed_at is not None, "the overflow reached the failing summarizer"
    # Every message is still in the conversation, and the ones that were to leave are already archived.
    texts = all_texts(agent.messages)
    assert PLANTED_TURN in texts
    archived_before = len(manager.memory)
    assert archived_before >= 1 and manager.memory.get(0)["content"][0]["text"] == PLANTED_TURN
    assert manager.removed_message_count == 0

    fail["on"] = False
    agent.messages.pop()  # drop the unanswered user turn of the failed invocation, as an application would
    for turn in turns[failed_at:]:
        agent(turn)
    archived = [m for _, m in manager.memory.messages()]
    ids = [m.get("tracking_id") for m in archived]
    assert len(ids) == len(set(ids)), "no message archived twice"
    assert archived[0]["content"][0]["text"] == PLANTED_TURN


@tool
def lookup_order(order_id: str) -> str:
    """Look up an order.

    Args:
        order_id: The order id.
    """
    return f"Order {order_id}: shipped, tracking number TRK-55-0091."


def test_tool_use_and_result_are_archived_together(embedder):
    def responder(messages, system_prompt, is_summary):
        last = messages[-1]
        if (
            not is_summary
            and last["role"] == "user"
            and "order" in render_message(last).lower()
            and not any("toolResult" in b for b in last["content"])
        ):
            return ToolCall("lookup_order", {"order_id": "A-17"}, tool_use_id="tu-order")
        return default_responder(messages, system_prompt, is_summary)

    model = ScriptedModel(responder, max_input_chars=LIMIT + 200)
    manager = manager_for(embedder)
    agent = make_agent(model, manager, tools=[lookup_order])
    agent("Please check my order A-17.")
    for turn in TOPIC_TURNS:
        agent(turn)
    archived = [m for _, m in manager.memory.messages()]
    uses = [i for i, m in enumerate(archived) if any("toolUse" in b for b in m["content"])]
    results = [i for i, m in enumerate(archived) if any("toolResult" in b for b in m["content"])]
    assert uses and results
    assert [u + 1 for u in uses] == results, "each tool result directly follows its tool use in the archive"
    assert REFERENCE not in all_texts(archived)
    hit = manager.memory.search("what was the tracking number of my order?", top_k=1)[0]
    assert "TRK-55-0091" in render_message(hit.message)


def test_proactive_compression_archives_before_overflow(embedder):
    model = ScriptedModel(context_window_limit=600)  # tokens; never raises, so only proactive compression acts
    manager = manager_for(embedder, proactive_compression={"compression_threshold": 0.5})
    agent = make_agent(model, manager)
    for turn in [PLANTED_TURN, *TOPIC_TURNS]:
        agent(turn)
    assert model.overflows == 0
    assert len(manager.memory) > 0
    assert manager.memory.get(0)["content"][0]["text"] == PLANTED_TURN


def test_pin_first_keeps_pinned_messages_out_of_the_archive(embedder):
    model = ScriptedModel(max_input_chars=LIMIT)
    manager = manager_for(embedder, pin_first=2)
    agent = make_agent(model, manager)
    for turn in [PLANTED_TURN, *TOPIC_TURNS]:
        agent(turn)
    assert PLANTED_TURN in all_texts(agent.messages[:2])
    assert PLANTED_TURN not in all_texts(m for _, m in manager.memory.messages())
    assert len(manager.memory) > 0


def test_summarization_agent_option_still_works(embedder):
    summarizer_model = ScriptedModel(lambda m, s, i: "A custom summary without details.")
    summarizer = Agent(model=summarizer_model, callback_handler=None)
    model = ScriptedModel(max_input_chars=LIMIT)
    manager = manager_for(embedder, summarization_agent=summarizer)
    agent = make_agent(model, manager)
    for turn in [PLANTED_TURN, *TOPIC_TURNS]:
        agent(turn)
    assert summarizer_model.requests, "the dedicated summarization agent wrote the summary"
    assert "A custom summary" in render_message(agent.messages[0])
    assert manager.memory.get(0)["content"][0]["text"] == PLANTED_TURN


def test_stats_and_summary(embedder):
    model = ScriptedModel(max_input_chars=LIMIT)
    manager = manager_for(embedder)
    agent = make_agent(model, manager)
    for turn in [PLANTED_TURN, *TOPIC_TURNS]:
        agent(turn)
    stats = agent.conversation_manager.get_memory_usage_stats()
    assert stats["message_count"] == len(manager.memory) > 0
    assert stats["total_memory"] > stats["embedding_bytes"] > 0
    assert stats["summarized_message_count"] == manager.removed_message_count
    summary = manager.get_memory_usage_summary()
    assert f"{stats['message_count']} archived messages" in summary and "all-MiniLM-L6-v2" in summary


def test_cannot_reduce_when_only_the_summary_would_go(embedder):
    from strands.types.exceptions import ContextWindowOverflowException

    model = ScriptedModel(max_input_chars=350)  # the summary plus the preserved messages exceed it
    agent = make_agent(model, manager_for(embedder, preserve_recent_messages=6))
    with pytest.raises(ContextWindowOverflowException):
        for turn in [PLANTED_TURN, *TOPIC_TURNS]:
            agent(turn)


def test_manager_is_a_strands_summarizing_manager(embedder):
    from strands.agent.conversation_manager import SummarizingConversationManager

    manager = manager_for(embedder)
    assert isinstance(manager, SummarizingConversationManager)
    assert not isinstance(manager, SlidingWindowConversationManager)
