"""The conversation tools: search with role and time filters, read by index, forget for good; bounded outputs.

Storage is involved in every test here, so each runs on both stores (in process and PostgreSQL via pgserver).
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone

import pytest
from strands import Agent

from strands_semantic_memory import SemanticMemory, SemanticSummarizingConversationManager
from strands_semantic_memory.errors import ConfigurationError
from strands_semantic_memory.tools._conversation_tools import (
    MAX_READ_MESSAGES,
    format_index_ranges,
    memory_tools,
    parse_time,
)
from tests.support.conversations import distractor_conversation, text_message
from tests.support.scripted_model import ScriptedModel, ToolCall

DAY = 86400.0
JAN_1 = datetime(2024, 1, 1, tzinfo=timezone.utc).timestamp()
SECRET = "4111-2222-3333-4444"


def tools_by_name(source, **kwargs):
    """The tools by name, the forget tool included (these tests exercise it)."""
    return {t.tool_name: t for t in memory_tools(source, **{"allow_forget": True, **kwargs})}


def call(tool, **arguments):
    """Run a tool the way the agent does (through Strands' tool stream: validation, error results)."""
    agent = Agent(model=ScriptedModel(), tools=[tool], callback_handler=None)
    result = getattr(agent.tool, tool.tool_name)(**arguments, record_direct_tool_call=False)
    return result["status"], "\n".join(block.get("text", "") for block in result["content"])


def labels(text):
    """``(index, role)`` of every message label in a tool output."""
    return [(int(i), role) for i, role in re.findall(r"\[Message (\d+), (\w+)", text)]


def dated_conversation():
    """Six messages over three days; the same words said by the user and by the assistant."""
    said = [
        ("user", "I booked the train to Lyon for the conference.", JAN_1),
        ("assistant", "Great, the train to Lyon leaves at 9:10 from platform 4.", JAN_1 + 60),
        ("user", "Also remind me about the dentist on Friday.", JAN_1 + DAY),
        ("assistant", "Noted: dentist on Friday at 14:00.", JAN_1 + DAY + 60),
        ("user", "Change of plan: the train to Lyon is now the 11:40.", JAN_1 + 2 * DAY),
        ("assistant", "Updated: the train to Lyon now leaves at 11:40.", JAN_1 + 2 * DAY + 60),
    ]
    return [text_message(r, t) for r, t, _ in said], [s for _, _, s in said]


def test_search_filters_by_role_and_time(archive_factory):
    memory = archive_factory()
    messages, said = dated_conversation()
    memory.add(messages, timestamps=said)
    search = tools_by_name(memory, context_radius=0)["conversation_search"]

    status, text = call(search, query="train to Lyon", limit=6, role="assistant")
    assert status == "success"
    assert {role for _, role in labels(text)} == {"assistant"}
    assert {i for i, _ in labels(text)} >= {1, 5}

    status, text = call(search, query="train to Lyon", limit=6, since="2024-01-03")
    assert {i for i, _ in labels(text)} <= {4, 5} and 4 in {i for i, _ in labels(text)}

    # A bare date as `until` includes that whole day.
    status, text = call(search, query="train to Lyon", limit=6, until="2024-01-01")
    assert {i for i, _ in labels(text)} <= {0, 1} and {i for i, _ in labels(text)}
    assert "2024-01-01" in text  # dates are shown

    status, text = call(search, query="train to Lyon", limit=6, since="2025-01-01T00:00:00Z")
    assert status == "success"
    assert text.startswith("No archived messages match 'train to Lyon'") and "since=2025-01-01" in text


def test_search_output_is_bounded_and_says_what_it_left_out(archive_factory):
    memory = archive_factory()
    long_messages = [
        text_message("user" if i % 2 == 0 else "assistant", f"Report {i} on the harbour crane inspection. " * 80)
        for i in range(12)
    ]
    memory.add(long_messages)
    search = tools_by_name(memory, max_output_chars=3000)["conversation_search"]
    status, text = call(search, query="harbour crane inspection report", limit=10)
    assert status == "success"
    assert len(text) <= 3000
    assert labels(text), "at least one passage is shown"
    assert "not shown to stay within 3000 characters" in text or "cut here" in text


def test_empty_archive_and_invalid_input_are_clear(archive_factory):
    memory = archive_factory()
    tools = tools_by_name(memory)
    status, text = call(tools["conversation_search"], query="anything")
    assert status == "success" and "archive is empty" in text

    memory.add(distractor_conversation(4))
    for arguments, expected in [
        ({"query": "  "}, "query must be a non-empty string"),
        ({"query": "x", "limit": 0}, "limit must be between 1 and 20"),
        ({"query": "x", "role": "system"}, "role must be 'user', 'assistant'"),
        ({"query": "x", "since": "last tuesday"}, "is not an ISO-8601 date or time"),
        ({"query": "x", "since": "2024-02-01", "until": "2024-01-01"}, "is after until"),
    ]:
        status, text = call(tools["conversation_search"], **arguments)
        assert status == "error", arguments
        assert expected in text, (arguments, text)
    status, text = call(tools["conversation_read"], start=5, end=2)
    assert status == "error" and "must be >= start" in text
    status, text = call(tools["conversation_forget"])
    assert status == "error" and "exactly one of" in text
    status, text = call(tools["conversation_forget"], query="ab")
    assert status == "error" and "at least 3 characters" in text


def test_read_returns_exact_messages_and_names_holes(archive_factory):
    memory = archive_factory()
    conversation = distractor_conversation(10)
    indices = memory.add(conversation)
    memory.forget([indices[4]])
    read = tools_by_name(memory)["conversation_read"]
    status, text = call(read, start=indices[2], end=indices[6])
    assert status == "success"
    assert [i for i, _ in labels(text)] == [indices[2], indices[3], indices[5], indices[6]]
    for position in (2, 3, 5, 6):
        assert conversation[position]["content"][0]["text"] in text
    assert f"indices {indices[4]} are not in the archive" in text

    status, text = call(read, start=10_000)
    assert status == "success" and "No archived messages with index 10000" in text


def test_read_is_bounded_and_says_where_to_continue(archive_factory):
    memory = archive_factory()
    indices = memory.add([text_message("user", f"Line {i}: " + "lorem ipsum " * 60) for i in range(80)])
    read = tools_by_name(memory, max_output_chars=4000)["conversation_read"]
    status, text = call(read, start=indices[0], end=indices[-1])
    assert len(text) <= 4000
    shown = [i for i, _ in labels(text)]
    assert shown == list(range(indices[0], shown[-1] + 1))
    assert f"call conversation_read({shown[-1] + 1}, {indices[-1]})" in text

    giant = memory.add([text_message("assistant", "x" * 20_000)])[0]
    status, text = call(read, start=giant)
    assert len(text) <= 4000 and "cut here" in text and "of 20000 characters" in text

    assert MAX_READ_MESSAGES == 50
    wide = tools_by_name(memory, max_output_chars=200_000)["conversation_read"]
    status, text = call(wide, start=indices[0], end=indices[-1])
    assert len(labels(text)) == MAX_READ_MESSAGES
    assert f"call conversation_read({indices[0] + MAX_READ_MESSAGES}, {indices[-1]}) next" in text


def test_forgotten_messages_never_come_back(archive_factory):
    memory = archive_factory()
    conversation = distractor_conversation(12)
    conversation[3] = text_message("assistant", f"Your card number {SECRET} is saved for the booking.")
    conversation[8] = text_message("user", f"Please use card {SECRET} again.")
    indices = memory.add(conversation)
    tools = tools_by_name(memory)

    status, text = call(tools["conversation_forget"], query=SECRET.lower())
    assert status == "success"
    assert f"Forgot 2 archived message(s): {indices[3]}, {indices[8]}" in text
    assert SECRET.lower() not in text, "the answer does not repeat what was forgotten"
    status, text = call(tools["conversation_forget"], indices=[indices[0], 99_999])
    assert f"Forgot 1 archived message(s): {indices[0]}" in text and "99999" in text

    def assert_gone(mem):
        gone = {indices[0], indices[3], indices[8]}
        assert not gone & set(mem.indices)
        for hit in mem.search(f"card number {SECRET}", top_k=20):
            assert SECRET not in str(hit.message)
        assert all(SECRET not in str(m) for _, m in mem.messages())
        status, text = call(tools_by_name(mem)["conversation_search"], query="card number for the booking", limit=20)
        assert labels(text) and SECRET not in text
        status, text = call(tools_by_name(mem)["conversation_read"], start=indices[0], end=indices[-1])
        assert SECRET not in text and {indices[3], indices[8]}.isdisjoint(i for i, _ in labels(text))

    assert_gone(memory)
    state = memory.to_state()
    assert SECRET not in str(state)
    saved = json.loads(json.dumps(state))
    assert_gone(SemanticMemory.from_state(saved, embedder=memory.embedder, archive=archive_factory.store()))
    loaded = archive_factory()  # in PostgreSQL: the same namespace, opened again
    loaded.load_state(saved)
    assert_gone(loaded)


def test_forget_through_an_agent_survives_a_session_restore(archive_factory, tmp_path):
    from strands.session import FileSessionManager

    planted = [
        text_message("user", f"My card is {SECRET}, keep it for the hotel."),
        text_message("assistant", "Saved the card for the hotel booking."),
    ]

    def responder(messages, system_prompt, is_summary):
        last = messages[-1]
        if any("toolResult" in block for block in last["content"]):
            return "Done: I deleted it from the archive."
        return ToolCall("conversation_forget", {"query": SECRET})

    def build(model):
        manager = SemanticSummarizingConversationManager(memory=archive_factory())
        session = FileSessionManager(session_id="forget", storage_dir=str(tmp_path))
        agent = Agent(
            model=model,
            conversation_manager=manager,
            tools=memory_tools(manager, allow_forget=True),
            session_manager=session,
            agent_id="assistant",
            callback_handler=None,
        )
        return agent, manager

    agent, manager = build(ScriptedModel(responder))
    manager.memory.add([*distractor_conversation(6), *planted])
    agent("Please forget my card number.")
    assert agent.messages[-1]["content"][0]["text"] == "Done: I deleted it from the archive."
    assert not manager.memory.archive.find_text(SECRET)

    _, restored_manager = build(ScriptedModel())
    restored = restored_manager.memory
    assert len(restored) == 7  # the six distractors and the reply that does not contain the number
    assert all(SECRET not in str(m) for _, m in restored.messages())
    assert all(SECRET not in str(h.message) for h in restored.search(SECRET, top_k=10))


def test_memory_tools_take_a_memory_a_manager_or_a_store_and_deletion_is_opt_in(embedder):
    from strands_semantic_memory.memory_store import SemanticMemoryStore

    memory = SemanticMemory(embedder=embedder)
    manager = SemanticSummarizingConversationManager(memory=memory)
    store = SemanticMemoryStore(memory=memory)
    for source in (memory, manager, store):
        assert [t.tool_name for t in memory_tools(source)] == ["conversation_search", "conversation_read"]
        assert [t.tool_name for t in memory_tools(source, allow_forget=True)] == [
            "conversation_search",
            "conversation_read",
            "conversation_forget",
        ]
    # A forget option without the tool is a mistake, said at once rather than ignored.
    with pytest.raises(ConfigurationError, match="confirm_forget configures conversation_forget, which is off"):
        memory_tools(memory, confirm_forget=lambda request: True)
    with pytest.raises(ConfigurationError, match="max_forget_per_call=5 configures conversation_forget"):
        memory_tools(memory, max_forget_per_call=5)
    with pytest.raises(ConfigurationError, match="memory_tools expected a SemanticMemory"):
        memory_tools(object())
    with pytest.raises(ConfigurationError, match="max_output_chars"):
        memory_tools(memory, max_output_chars=10)


def test_parse_time_and_index_ranges():
    assert parse_time("2024-01-01", name="since") == JAN_1
    assert parse_time("2024-01-01", name="until", end_of_day=True) == pytest.approx(JAN_1 + DAY, abs=1e-3)
    assert parse_time("2024-01-01T01:00:00Z", name="since") == JAN_1 + 3600
    assert parse_time("2024-01-01T03:00:00+02:00", name="since") == JAN_1 + 3600
    assert parse_time("2024-01-01 01:00", name="since") == JAN_1 + 3600
    assert parse_time(str(JAN_1), name="since") == JAN_1
    assert parse_time(None, name="since") is None and parse_time("", name="since") is None
    with pytest.raises(ValueError, match="since='yesterday' is not an ISO-8601"):
        parse_time("yesterday", name="since")
    with pytest.raises(ValueError, match="is not a valid date"):
        parse_time("2024-02-30", name="since")
    assert format_index_ranges([9, 3, 4, 5, 11, 12]) == "3-5, 9, 11-12"
    assert format_index_ranges([]) == "none"


# ------------------------------------------------------------------ bounded and strict whatever the model sends

HUGE = "x" * 700_000


def test_tool_outputs_are_bounded_whatever_the_model_sends(archive_factory):
    memory = archive_factory()
    memory.add(distractor_conversation(30))
    tools = tools_by_name(memory, max_output_chars=2000)
    calls = [
        ("conversation_search", {"query": HUGE}),
        ("conversation_search", {"query": "meeting " + HUGE}),
        ("conversation_search", {"query": "meeting", "role": HUGE}),
        ("conversation_search", {"query": "meeting", "since": HUGE}),
        ("conversation_search", {"query": "meeting", "until": "2024-01-01T" + HUGE}),
        ("conversation_search", {"query": "meeting", "limit": HUGE}),
        ("conversation_search", {"query": [HUGE] * 3}),
        ("conversation_read", {"start": HUGE}),
        ("conversation_read", {"start": 0, "end": [1] * 100_000}),
        ("conversation_forget", {"query": HUGE}),
        ("conversation_forget", {"indices": [HUGE] * 100}),
        ("conversation_forget", {"indices": list(range(100_000))}),
        ("conversation_forget", {"indices": [True] * 100_000}),
    ]
    for name, arguments in calls:
        status, text = call(tools[name], **arguments)
        assert len(text) <= 2000, (name, status, text[:300])
    assert len(memory) == 30, "none of these calls deleted anything"


@pytest.mark.parametrize(
    "name, arguments, expected",
    [
        ("conversation_forget", {"indices": [True]}, "integer"),
        ("conversation_forget", {"indices": ["1"]}, "integer"),
        ("conversation_forget", {"indices": [1.5]}, "integer"),
        ("conversation_forget", {"indices": "1"}, "list"),
        ("conversation_forget", {"query": 1234}, "string"),
        ("conversation_search", {"query": "meeting", "limit": True}, "integer"),
        ("conversation_search", {"query": "meeting", "limit": "5"}, "integer"),
        ("conversation_search", {"query": 42}, "string"),
        ("conversation_search", {"query": "meeting", "role": 1}, "role"),
        ("conversation_read", {"start": True}, "integer"),
        ("conversation_read", {"start": "3"}, "integer"),
        ("conversation_read", {"start": 0, "end": False}, "integer"),
    ],
)
def test_arguments_of_the_wrong_type_are_refused_not_coerced(archive_factory, name, arguments, expected):
    memory = archive_factory()
    memory.add(distractor_conversation(6))
    status, text = call(tools_by_name(memory)[name], **arguments)
    assert status == "error" and expected in text, text
    assert len(memory) == 6


def test_whole_numbers_as_json_writes_them_are_integers(archive_factory):
    memory = archive_factory()
    indices = memory.add(distractor_conversation(6))
    status, text = call(tools_by_name(memory)["conversation_read"], start=float(indices[1]), end=float(indices[2]))
    assert status == "success" and [i for i, _ in labels(text)] == indices[1:3]


# ------------------------------------------------------------------ forgetting is bounded and complete


def test_one_forget_call_is_bounded_and_says_so(archive_factory):
    memory = archive_factory()
    indices = memory.add(distractor_conversation(300))
    tools = tools_by_name(memory, max_forget_per_call=20)
    status, text = call(tools["conversation_forget"], query="the")
    assert status == "success" and "Nothing was forgotten" in text and "at most 20" in text
    assert len(memory) == 300
    status, text = call(tools["conversation_forget"], indices=indices[:21])
    assert "Nothing was forgotten" in text and "at most 20" in text and len(memory) == 300
    status, text = call(tools["conversation_forget"], indices=indices[:20])
    assert f"Forgot 20 archived message(s): {indices[0]}-{indices[19]}" in text and len(memory) == 280


def test_the_application_can_require_confirmation_or_disable_bulk_forgetting(archive_factory):
    memory = archive_factory()
    conversation = distractor_conversation(10)
    conversation[2] = text_message("user", f"My card is {SECRET}.")
    conversation[5] = text_message("user", f"Use {SECRET} again.")
    indices = memory.add(conversation)
    asked = []

    def confirm(request):
        asked.append(request)
        return len(request.indices) == 1

    tools = tools_by_name(memory, confirm_forget=confirm)
    status, text = call(tools["conversation_forget"], query=SECRET)
    assert "the application did not confirm" in text and len(memory) == 10
    assert asked[-1].indices == (indices[2], indices[5]) and asked[-1].query == SECRET
    assert SECRET in render(asked[-1].messages), "the application sees what would be deleted"
    status, text = call(tools["conversation_forget"], indices=[indices[2]])
    assert f"Forgot 1 archived message(s): {indices[2]}" in text and len(memory) == 9

    single = tools_by_name(memory, max_forget_per_call=1)["conversation_forget"]
    status, text = call(single, query=SECRET.split("-")[0] + "-")  # matches one message: allowed
    assert "Forgot 1" in text and len(memory) == 8
    with pytest.raises(ConfigurationError, match="max_forget_per_call"):
        memory_tools(memory, max_forget_per_call=0)
    with pytest.raises(ConfigurationError, match="confirm_forget"):
        memory_tools(memory, confirm_forget="yes")


def render(messages):
    return "\n".join(json.dumps(m) for m in messages)


def test_a_message_forgotten_while_still_in_the_active_context_never_comes_back(archive_factory, tmp_path):
    from strands.session import FileSessionManager

    def responder(messages, system_prompt, is_summary):
        if is_summary:
            return "Summary of earlier turns."
        last = messages[-1]
        if any("toolResult" in block for block in last["content"]):
            return "Done, it is forgotten."
        if "forget my card" in json.dumps(last):
            return ToolCall("conversation_forget", {"query": SECRET})
        return "Noted."

    def build(memory):
        manager = SemanticSummarizingConversationManager(memory=memory, preserve_recent_messages=4)
        agent = Agent(
            model=ScriptedModel(responder, max_input_chars=3000),
            conversation_manager=manager,
            tools=memory_tools(manager, allow_forget=True),
            session_manager=FileSessionManager(session_id="forget-active", storage_dir=str(tmp_path)),
            agent_id="assistant",
            callback_handler=None,
        )
        return agent, manager

    agent, manager = build(archive_factory())
    agent(f"My card is {SECRET}, keep it for the hotel.")
    agent("Please forget my card number.")
    assert not manager.memory.find_text(SECRET), "nothing archived yet: it is still in the active context"
    result = [b["toolResult"] for m in agent.messages for b in m["content"] if "toolResult" in b][-1]
    assert "active conversation" in result["content"][0]["text"] and SECRET not in json.dumps(result)
    for n in range(30):  # long enough for the card and the forget call to leave the active context
        agent(f"Filler question {n} about the weather in Lyon and the train times. " * 3)
    assert len(manager.memory) > 0 and manager.removed_message_count > 6
    assert not manager.memory.find_text(SECRET)
    assert all(SECRET not in json.dumps(h.message) for h in manager.memory.search(SECRET, top_k=20))

    second, restored = build(archive_factory())  # a new process, the same session (and PostgreSQL namespace)
    for n in range(10):
        second(f"More filler {n} about the weather in Lyon. " * 3)
    assert not restored.memory.find_text(SECRET)
