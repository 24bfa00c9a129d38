"""Structured compaction (issue 14) through a real Strands Agent and a scripted model that answers structured output.

What is scripted: the chat replies and the merge itself (``FACT key: value`` lines become facts, a later value of
the same key replaces the earlier one; see ``tests/support/structured_model.py``). What is real: Strands' agent loop,
overflow recovery and proactive hooks, the manager, its archive (the bundled MiniLM model), pydantic validation.
"""

import json
import logging
import math

import pytest
from pydantic import BaseModel
from strands import Agent, tool

from strands_semantic_memory import SemanticSummarizingConversationManager
from strands_semantic_memory.conversation_manager._compaction import drop_split
from strands_semantic_memory.conversation_manager._structured_summary import (
    STATE_CLOSE,
    STATE_OPEN,
    Fact,
    StructuredSummary,
    TrimReport,
    clean_state,
    read_state_block,
    render_state,
    state_json,
    trim_state,
)
from strands_semantic_memory.conversation_manager._summarizer import describe_indices, merge_request, summary_view
from strands_semantic_memory.errors import ConfigurationError, StateError
from strands_semantic_memory.messages._text import render_message
from tests.support.conversations import TOPIC_TURNS, make_agent
from tests.support.scripted_model import ToolCall, default_responder
from tests.support.structured_model import StructuredScriptedModel, archive_indices, merging_responder

LIMIT = 1200  # characters: the scripted chat model overflows above it
PLANTED = "FACT locker: LK-4417-QV\nPlease remember my locker code exactly."
CHANGED = "FACT locker: LK-9000-ZZ\nI moved lockers, the code changed."
TURNS = TOPIC_TURNS * 3  # 36 turns of filler questions


def structured(embedder, **kwargs):
    kwargs.setdefault("preserve_recent_messages", 4)
    return SemanticSummarizingConversationManager(embedder=embedder, summary_format="structured", **kwargs)


def texts(messages):
    return "\n".join(render_message(m) for m in messages)


def fact_texts(manager):
    return [fact.text for fact in manager.structured_summary.facts]


def assert_tool_pairs_intact(messages):
    for position, message in enumerate(messages):
        uses = {b["toolUse"]["toolUseId"] for b in message["content"] if "toolUse" in b}
        results = {b["toolResult"]["toolUseId"] for b in message["content"] if "toolResult" in b}
        if results:
            assert position > 0, "a tool result opens the conversation"
            before = {b["toolUse"]["toolUseId"] for b in messages[position - 1]["content"] if "toolUse" in b}
            assert results <= before, "a tool result without its tool use"
        if uses and position + 1 < len(messages):
            after = {b["toolResult"]["toolUseId"] for b in messages[position + 1]["content"] if "toolResult" in b}
            assert uses <= after, "a tool use without its result"


# ------------------------------------------------------------------ the merge


def test_merge_receives_the_previous_state_not_a_prose_summary(embedder):
    model = StructuredScriptedModel(max_input_chars=LIMIT)
    manager = structured(embedder)
    agent = make_agent(model, manager)
    for turn in [PLANTED, *TURNS[:16]]:
        agent(turn)
    requests = model.state_requests
    assert len(requests) >= 2
    assert "There is no StructuredSummary yet" in render_message(requests[0]["messages"][0])
    for request in requests[1:]:
        head, *leaving, tail = request["messages"]
        previous = read_state_block(render_message(head))
        assert previous is not None, "the previous state is in the prompt"
        assert {"text": "locker: LK-4417-QV", "sources": [0]} in previous["facts"]
        assert STATE_OPEN not in texts(leaving), "the state message is not summarized again as a message"
        assert render_message(tail).startswith("Return the updated StructuredSummary")
    assert not model.summary_requests, "no prose summary was asked for"
    assert requests[0]["schema"] is StructuredSummary


def test_a_fact_from_the_first_compaction_survives_five_more(embedder):
    model = StructuredScriptedModel(max_input_chars=LIMIT)
    manager = structured(embedder)
    agent = make_agent(model, manager)
    for turn in [PLANTED, *TURNS]:
        agent(turn)
    assert len(model.state_requests) >= 6, "six compactions at least"
    assert "LK-4417-QV" not in texts(agent.messages[1:]), "the planted turn itself left the context long ago"
    assert "locker: LK-4417-QV" in fact_texts(manager)
    # The state reaches the model as one delimited message in place of the prose summary.
    sent = model.chat_requests[-1]["messages"]
    state_messages = [m for m in sent if STATE_OPEN in render_message(m)]
    assert len(state_messages) == 1 and "LK-4417-QV" in render_message(state_messages[0])
    assert agent.messages[0] is manager.summary_message
    # The fact links back to the archive, which has the exact words.
    (fact,) = [f for f in manager.structured_summary.facts if f.text.startswith("locker")]
    assert fact.sources == [0] and manager.memory.messages()[0][1]["content"][0]["text"] == PLANTED


def test_contradicted_facts_are_replaced(embedder):
    model = StructuredScriptedModel(max_input_chars=LIMIT)
    manager = structured(embedder)
    agent = make_agent(model, manager)
    for turn in [PLANTED, *TURNS[:10], CHANGED, *TURNS[10:24]]:
        agent(turn)
    assert "locker: LK-9000-ZZ" in fact_texts(manager)
    assert not any("LK-4417-QV" in text for text in fact_texts(manager))
    assert "LK-4417-QV" not in texts(model.chat_requests[-1]["messages"]), "the stale value no longer reaches the model"
    archived = texts(m for _, m in manager.memory.messages())
    assert PLANTED in archived and CHANGED in archived, "the archive keeps both, word for word"


# ------------------------------------------------------------------ failures and the hard limit


def invalid_state(output_model, prompt, system_prompt):
    return {"facts": "not a list", "narrative": 42}


def test_schema_validation_failure_raises_by_default_and_loses_nothing(embedder):
    from pydantic import ValidationError

    model = StructuredScriptedModel(max_input_chars=LIMIT, state_responder=invalid_state)
    manager = structured(embedder)
    agent = make_agent(model, manager)
    with pytest.raises(ValidationError):
        for turn in [PLANTED, *TURNS]:
            agent(turn)
    assert PLANTED in texts(agent.messages), "nothing left the context"
    assert manager.removed_message_count == 0 and manager.structured_summary is None
    assert manager.memory.messages()[0][1]["content"][0]["text"] == PLANTED, "archived before the summary was asked"


def test_schema_validation_failure_drops_the_oldest_when_configured(embedder, caplog):
    model = StructuredScriptedModel(max_input_chars=LIMIT, state_responder=invalid_state)
    manager = structured(embedder, on_summary_failure="drop_oldest")
    agent = make_agent(model, manager)
    with caplog.at_level(
        logging.WARNING, logger="strands_semantic_memory.conversation_manager.semantic_summarizing_conversation_manager"
    ):
        for turn in [PLANTED, *TURNS[:20]]:
            agent(turn)
    stats = manager.get_memory_usage_stats()
    assert stats["dropped_message_count"] == manager.removed_message_count > 0
    assert stats["summary_failure_count"] >= 1 and stats["summarized_message_count"] == 0
    assert manager.structured_summary is None
    assert "dropped=<" in caplog.text
    # The archive holds the whole conversation (archived as added), and every message out of the context with it.
    assert len(manager.memory) == 2 * 21
    assert manager.memory.messages()[0][1]["content"][0]["text"] == PLANTED


def estimated_tokens(request):
    """Strands' heuristic count of a request (what the scripted model's ``count_tokens`` returns)."""
    blocks = [b for m in request["messages"] for b in m["content"]]
    total = sum(math.ceil(len(b["text"]) / 4) for b in blocks if "text" in b)
    total += sum(math.ceil(len(c["text"]) / 4) for b in blocks if "toolResult" in b for c in b["toolResult"]["content"])
    return total


def test_hard_limit_drops_archived_messages_only(embedder):
    """The summarizer always fails; above 80 % of the window the oldest messages leave anyway, archived first."""
    model = StructuredScriptedModel(context_window_limit=400, state_responder=lambda *a: RuntimeError("down"))
    manager = structured(embedder, hard_limit=0.8)
    agent = make_agent(model, manager)
    sent_turns = [PLANTED, *TURNS[:20]]
    for turn in sent_turns:
        agent(turn)
    assert model.overflows == 0
    assert all(estimated_tokens(r) <= 320 for r in model.chat_requests), "every call under the hard limit"
    assert manager.dropped_message_count > 0
    archived = {m["tracking_id"]: m for _, m in manager.memory.messages()}
    active = {m["tracking_id"] for m in agent.messages}
    assert len(archived.keys() | active) == 2 * len(sent_turns), "every message is in the context or the archive"
    assert manager.dropped_message_count == 2 * len(sent_turns) - len(agent.messages), "the dropped were archived"
    assert manager.memory.messages()[0][1]["content"][0]["text"] == PLANTED
    assert manager.get_memory_usage_stats()["dropped_message_count"] == manager.dropped_message_count


def test_hard_limit_compacts_before_it_drops(embedder):
    model = StructuredScriptedModel(context_window_limit=600)
    manager = structured(embedder, proactive_compression={"compression_threshold": 0.6}, hard_limit=0.85)
    agent = make_agent(model, manager)
    for turn in [PLANTED, *TURNS[:20]]:
        agent(turn)
    assert model.state_requests and manager.dropped_message_count == 0
    assert "locker: LK-4417-QV" in fact_texts(manager)


@tool
def check_order(order_id: str) -> str:
    """Look up an order.

    Args:
        order_id: The order id.
    """
    return f"Order {order_id}: shipped. " + "Carrier log line. " * 20


def order_responder(messages, system_prompt, is_summary):
    last = messages[-1]
    if not is_summary and last["role"] == "user" and not any("toolResult" in b for b in last["content"]):
        return ToolCall("check_order", {"order_id": "A-17"}, tool_use_id=f"tu-{len(messages)}")
    return default_responder(messages, system_prompt, is_summary)


def test_tool_pairs_stay_intact_when_the_hard_limit_drops(embedder):
    model = StructuredScriptedModel(
        order_responder, context_window_limit=700, state_responder=lambda *a: RuntimeError("down")
    )
    manager = structured(embedder, hard_limit=0.8, preserve_recent_messages=2)
    agent = make_agent(model, manager, tools=[check_order])
    for turn in TURNS[:10]:
        agent(turn)
        assert_tool_pairs_intact(agent.messages)
    assert manager.dropped_message_count > 0
    for request in model.chat_requests:
        assert_tool_pairs_intact([m for m in request["messages"] if STATE_OPEN not in render_message(m)])
    assert_tool_pairs_intact([m for _, m in manager.memory.messages()])


def test_summary_filter_keeps_tool_results_from_the_summarizer_but_archives_them(embedder):
    model = StructuredScriptedModel(order_responder, max_input_chars=2500)
    manager = structured(
        embedder, summary_filter=lambda m: not any("toolResult" in b for b in m["content"]), preserve_recent_messages=3
    )
    agent = make_agent(model, manager, tools=[check_order])
    for turn in TURNS[:8]:
        agent(turn)
    assert model.state_requests
    for request in model.state_requests:
        seen = request["messages"][1:-1]
        assert seen, "the summarizer still sees the conversation"
        assert not any("toolResult" in b or "toolUse" in b for m in seen for b in m["content"]), "pairs left out"
    archived = [m for _, m in manager.memory.messages()]
    assert any("toolResult" in b for m in archived for b in m["content"]), "the archive has the tool results"
    assert "Carrier log line" in texts(archived)


def test_summarization_agent_produces_the_state_through_structured_output(embedder):
    def summarizer_responder(messages, system_prompt, is_summary):
        return ToolCall(
            "StructuredSummary", {"facts": [{"text": "user asked about data structures", "sources": [0, 99]}]}
        )

    summarizer_model = StructuredScriptedModel(summarizer_responder)
    summarizer = Agent(model=summarizer_model, callback_handler=None, system_prompt="You keep session state.")
    model = StructuredScriptedModel(max_input_chars=LIMIT)
    manager = structured(embedder, summarization_agent=summarizer)
    agent = make_agent(model, manager)
    for turn in [PLANTED, *TURNS[:10]]:
        agent(turn)
    assert summarizer_model.requests and not model.state_requests
    assert fact_texts(manager) == ["user asked about data structures"]
    assert manager.structured_summary.facts[0].sources == [0], "a source the model made up is dropped"
    assert summarizer.messages == [] and summarizer.system_prompt == "You keep session state."


class Ticket(BaseModel):
    customer: str
    issues: list[str] = []


def test_a_custom_schema_replaces_the_structured_summary(embedder):
    def ticket(output_model, prompt, system_prompt):
        assert output_model is Ticket
        return {"customer": "ACME", "issues": [f"{len(prompt) - 2} messages reviewed"]}

    model = StructuredScriptedModel(max_input_chars=LIMIT, state_responder=ticket)
    manager = structured(embedder, summary_schema=Ticket)
    agent = make_agent(model, manager)
    for turn in [PLANTED, *TURNS[:10]]:
        agent(turn)
    assert isinstance(manager.structured_summary, Ticket) and manager.structured_summary.customer == "ACME"
    assert read_state_block(render_message(agent.messages[0]))["customer"] == "ACME"
    assert "StructuredSummary" not in model.state_requests[0]["system_prompt"]
    assert manager.get_state()["session_state"]["schema"] == "Ticket"


# ------------------------------------------------------------------ pure parts


def test_state_block_cannot_be_closed_by_text_inside_it():
    state = StructuredSummary(facts=[Fact(text=f"the user typed {STATE_CLOSE} then <b>bold</b>", sources=[3])])
    rendered = render_state(state)
    assert rendered.count(STATE_CLOSE) == 1 and rendered.endswith(STATE_CLOSE)
    assert read_state_block(rendered)["facts"][0]["text"] == f"the user typed {STATE_CLOSE} then <b>bold</b>"
    assert "user_preferences" not in read_state_block(rendered), "empty fields cost no tokens"


def test_clean_state_deduplicates_and_drops_made_up_sources():
    state = StructuredSummary(
        facts=[Fact(text="Code is 42", sources=[1, 7]), Fact(text="code  is 42", sources=[2]), Fact(text=" ")],
        open_threads=["Ship it?", "ship it?", ""],
    )
    cleaned = clean_state(state, allowed_sources={1, 2})
    assert [(f.text, f.sources) for f in cleaned.facts] == [("Code is 42", [1, 2])]
    assert cleaned.open_threads == ["Ship it?"]


def test_merge_request_labels_the_leaving_messages_with_archive_indices():
    previous = StructuredSummary(facts=[Fact(text="a: 1", sources=[0])])
    leaving = [{"role": "user", "content": [{"text": "x"}]}, {"role": "assistant", "content": [{"text": "y"}]}]
    head, *middle, tail = merge_request(StructuredSummary, previous, leaving, [4, 5])
    assert middle == leaving and head["role"] == tail["role"] == "user"
    assert "archived as #4-#5" in render_message(head)
    assert read_state_block(render_message(head)) == json.loads(
        json.dumps({"facts": [{"text": "a: 1", "sources": [0]}]})
    )
    assert describe_indices([3, 4, 5, 9, 11, 12]) == "#3-#5, #9, #11-#12"


def message(role, *blocks):
    return {"role": role, "content": list(blocks)}


USE = {"toolUse": {"toolUseId": "t1", "name": "f", "input": {}}}
RESULT = {"toolResult": {"toolUseId": "t1", "status": "success", "content": [{"text": "r"}]}}


def test_drop_split_never_separates_a_pair_or_drops_the_current_turn():
    conversation = [
        message("user", {"text": "q1"}),
        message("assistant", USE),
        message("user", RESULT),
        message("assistant", {"text": "a1"}),
        message("user", {"text": "q2"}),
    ]
    assert drop_split(conversation, 1) == 1
    assert drop_split(conversation, 2) == 3, "the result must not open the context: the pair leaves together"
    assert drop_split(conversation, 10) == 4, "the current turn stays"
    assert drop_split(conversation[:3], 2) == 1, "the last message is a result: its use stays with it"
    assert drop_split(conversation[:1], 1) == 0


def test_summary_view_leaves_out_both_sides_of_a_filtered_pair():
    conversation = [message("user", {"text": "q"}), message("assistant", USE), message("user", RESULT)]
    assert summary_view(conversation, None) == [0, 1, 2]
    assert summary_view(conversation, lambda m: not any("toolResult" in b for b in m["content"])) == [0]


def test_scripted_merge_is_a_real_merge():
    """The test double itself: it reads the previous state and replaces a fact by key."""
    head = merge_request(StructuredSummary, StructuredSummary(facts=[Fact(text="k: old", sources=[0])]), [], [])[0]
    prompt = [head, {"role": "user", "content": [{"text": "FACT k: new"}]}, head]
    head["content"][0]["text"] += "\nThey are archived as #7 (in order)"
    state = StructuredSummary.model_validate(merging_responder(StructuredSummary, prompt, None))
    assert [(f.text, f.sources) for f in state.facts] == [("k: new", [7])]


# ------------------------------------------------------------------ the state fits a budget


def oversized_state(output_model, prompt, system_prompt):
    """The scripted merge, then hundreds of long facts: a state far larger than the model's context window."""
    state = merging_responder(output_model, prompt, system_prompt)
    sources = archive_indices(render_message(prompt[0])) or [0]
    padding = [{"text": f"note {n}: " + "detail " * 30, "sources": [sources[n % len(sources)]]} for n in range(300)]
    return {**state, "facts": [*padding, *state["facts"]], "narrative": "long story " * 2000}


def test_an_oversized_state_never_wedges_the_conversation(embedder):
    window = 1000  # tokens; the scripted model overflows above 2,500 characters
    model = StructuredScriptedModel(max_input_chars=2500, context_window_limit=window, state_responder=oversized_state)
    manager = structured(embedder, on_summary_failure="drop_oldest", hard_limit=0.95)
    agent = make_agent(model, manager)
    for turn in [PLANTED, *TURNS[:24]]:
        agent(turn)  # today: once the state exceeds the window, every later turn overflows
    state_text = render_message(manager.summary_message)
    assert len(state_text) <= 0.25 * window * 3 + 600, "the state message fits its budget (and a short header)"
    assert "left out" in state_text and "archived" in state_text
    assert "locker: LK-4417-QV" in fact_texts(manager), "the newest facts are kept"
    for fact in manager.structured_summary.facts:
        for source in fact.sources:
            assert manager.memory.get(source), "what a kept fact cites is in the archive"
    assert manager.get_state()["session_state"]["data"] == manager.structured_summary.model_dump(mode="json")


def test_an_oversized_state_restored_from_a_session_is_fitted_before_the_first_call(embedder):
    model = StructuredScriptedModel(max_input_chars=2500, context_window_limit=1000)
    first = structured(embedder)
    agent = make_agent(model, first)
    for turn in [PLANTED, *TURNS[:30]]:
        agent(turn)
    state = first.get_state()
    huge = [{"text": f"old note {n}: " + "detail " * 30, "sources": []} for n in range(400)]
    state["session_state"]["data"]["facts"] = [*huge, *state["session_state"]["data"]["facts"]]
    state["summary_message"]["content"] = [
        {"text": render_state(StructuredSummary.model_validate(state["session_state"]["data"]))}
    ]
    manager = structured(embedder)
    restored = make_agent(StructuredScriptedModel(max_input_chars=2500, context_window_limit=1000), manager)
    restored.messages = [*manager.restore_from_session(state), *agent.messages[1:]]
    restored("One more question?")  # today: the restored state alone overflows every call
    assert len(render_message(restored.messages[0])) <= 0.25 * 1000 * 3 + 600
    assert "locker: LK-4417-QV" in fact_texts(manager)


def test_trim_state_drops_the_oldest_items_first_and_reports_their_sources():
    state = StructuredSummary(
        facts=[Fact(text=f"fact {n} " + "x" * 50, sources=[n]) for n in range(40)],
        open_threads=[f"thread {n}" for n in range(5)],
        narrative="n" * 300,
    )
    trimmed, left_out = trim_state(state, 1200)
    assert len(state_json(trimmed)) <= 1200
    kept = [f.sources[0] for f in trimmed.facts]
    assert kept == list(range(40 - len(kept), 40)), "the newest facts stay"
    assert left_out.sources == list(range(40 - len(kept))) and left_out.items >= 40 - len(kept)
    assert trim_state(trimmed, 1200) == (trimmed, TrimReport())


@pytest.mark.parametrize("budget", [0, 1, 1.5, -0.1, True, "0.2"])
def test_state_budget_is_a_share_of_the_window(embedder, budget):
    with pytest.raises(ConfigurationError, match="state_budget"):
        structured(embedder, state_budget=budget)


# ------------------------------------------------------------- a model that declares no window (issue 39, point 10)

UNDECLARED_LIMIT = 3000  # characters; the scripted model overflows above them and declares no context_window_limit


def wedge_setup(embedder):
    """The issue's setup: a state that is always too big, drop_oldest, hard_limit 0.9, a model without a window."""
    model = StructuredScriptedModel(max_input_chars=UNDECLARED_LIMIT, state_responder=oversized_state)
    manager = structured(embedder, on_summary_failure="drop_oldest", hard_limit=0.9)
    return model, manager


def test_without_a_declared_window_the_overflows_bound_the_state_and_the_hard_limit(embedder):
    model, manager = wedge_setup(embedder)
    agent = make_agent(model, manager)
    for turn in [PLANTED, *TURNS[:24]]:
        agent(turn)  # before: the state grew to its 200,000-token budget and turns 20-24 failed
    assert manager.learned_window is not None and manager.learned_window * 4 <= UNDECLARED_LIMIT + 400
    assert len(render_message(manager.summary_message)) < UNDECLARED_LIMIT / 2, "the state fits the learned window"
    assert "locker: LK-4417-QV" in fact_texts(manager)
    assert model.overflows <= 3, "the window is learned once, not rediscovered on every turn"

    # The saved session restores into a new manager that knows the window, and the conversation goes on.
    state = manager.get_state()
    assert state["learned_context_window"] == manager.learned_window
    again_model, again = wedge_setup(embedder)
    restored = make_agent(again_model, again)
    restored.messages = [*again.restore_from_session(state), *agent.messages[1:]]
    assert again.learned_window == manager.learned_window
    for turn in TURNS[24:30]:
        restored(turn)
    assert again_model.overflows == 0


def test_a_session_saved_with_an_oversized_state_and_no_window_recovers_on_its_first_turn(embedder):
    model, manager = wedge_setup(embedder)
    agent = make_agent(model, manager)
    for turn in [PLANTED, *TURNS[:20]]:
        agent(turn)
    assert manager.structured_summary is not None, "a reduction happened"
    # What an older release saved: a state grown to its 200,000-token budget, and no learned window.
    state = manager.get_state()
    state.pop("learned_context_window")
    huge = [{"text": f"old note {n}: " + "detail " * 30, "sources": []} for n in range(600)]
    state["session_state"]["data"]["facts"] = [*huge, *state["session_state"]["data"]["facts"]]
    state["summary_message"]["content"] = [
        {"text": render_state(StructuredSummary.model_validate(state["session_state"]["data"]))}
    ]
    assert len(render_message(state["summary_message"])) > 100_000
    again_model, again = wedge_setup(embedder)
    restored = make_agent(again_model, again)
    restored.messages = [*again.restore_from_session(state), *agent.messages[1:]]
    for turn in TURNS[20:28]:
        restored(turn)  # before: every turn failed, the restored state alone exceeds the model's limit
    assert again.learned_window is not None
    assert len(render_message(again.summary_message)) < UNDECLARED_LIMIT / 2
    assert "locker: LK-4417-QV" in fact_texts(again)
    ids = [m.get("tracking_id") for m in restored.messages]
    assert all(ids) and len(set(ids)) == len(ids), "the trimmed state message has a durable id, as Strands' summary"


@pytest.mark.parametrize("learned", [0, -3, 2.5, True, "800"])
def test_a_saved_learned_window_must_be_a_positive_integer(embedder, learned):
    manager = structured(embedder)
    state = manager.get_state()
    state["learned_context_window"] = learned
    with pytest.raises(StateError, match="learned_context_window"):
        structured(embedder).restore_from_session(state)
