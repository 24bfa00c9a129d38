"""Agentic context editing: a scripted model summarizes and drops ranges of its own context during a long
conversation; history shrinks, the archive holds everything, the agent keeps working, and a session restore
reproduces the edited history (also after the conversation manager trims the front).
"""

from __future__ import annotations

import re

import pytest
from strands import Agent, tool
from strands.hooks import AfterToolCallEvent
from strands.session import FileSessionManager

from strands_semantic_memory import SemanticSummarizingConversationManager
from strands_semantic_memory.context_editing._editing import STATE_KEY, ContextEditor, current_turn_start, message_id
from strands_semantic_memory.context_editing._log import apply_edit
from strands_semantic_memory.context_editing._ranges import close_tool_pairs, replacement_role
from strands_semantic_memory.errors import ConfigurationError
from strands_semantic_memory.messages._text import render_message
from strands_semantic_memory.tools._conversation_tools import memory_tools
from tests.support.conversations import text_message
from tests.support.scripted_model import ScriptedModel, ToolCall

TAG = re.compile(r"\[ctx:([0-9a-f]{8})\]")


# ---------------------------------------------------------------------------------------------- pure parts


def tool_use(tool_id):
    return {"role": "assistant", "content": [{"toolUse": {"toolUseId": tool_id, "name": "t", "input": {}}}]}


def tool_result(tool_id):
    return {"role": "user", "content": [{"toolResult": {"toolUseId": tool_id, "content": [{"text": "r"}]}}]}


def test_current_turn_starts_at_the_latest_plain_user_message():
    history = [text_message("user", "a"), text_message("assistant", "b"), text_message("user", "c")]
    assert current_turn_start(history) == 2
    assert current_turn_start([*history, tool_use("1"), tool_result("1")]) == 2
    assert current_turn_start([tool_use("1"), tool_result("1")]) == 0


def test_ranges_widen_to_keep_tool_calls_with_their_results():
    history = [
        text_message("user", "q"),
        tool_use("1"),
        tool_result("1"),
        tool_use("2"),
        tool_result("2"),
        text_message("assistant", "a"),
    ]
    assert close_tool_pairs(history, 0, 1) == (0, 2)
    assert close_tool_pairs(history, 2, 2) == (1, 2)
    assert close_tool_pairs(history, 2, 3) == (1, 4)
    assert close_tool_pairs(history, 5, 5) == (5, 5)


def test_apply_is_idempotent_and_keeps_order():
    history = [dict(text_message("user" if i % 2 == 0 else "assistant", str(i)), tracking_id=f"t{i}") for i in range(6)]
    summary = dict(text_message("user", "summary"), tracking_id="s")
    assert apply_edit(history, ["t1", "t2", "t3"], [summary])
    assert [m["tracking_id"] for m in history] == ["t0", "s", "t4", "t5"]
    assert not apply_edit(history, ["t1", "t2", "t3"], [summary])
    # Replayed over a restore that brought the originals back: the summary is not inserted twice.
    restored = [dict(text_message("user", str(i)), tracking_id=f"t{i}") for i in range(6)]
    restored.insert(1, summary)
    assert apply_edit(restored, ["t1", "t2", "t3"], [summary])
    assert [m["tracking_id"] for m in restored] == ["t0", "s", "t4", "t5"]


def test_apply_touches_exactly_the_range_even_when_its_ids_appear_elsewhere():
    def said(tracking_id, text):
        return dict(text_message("user", text), tracking_id=tracking_id)

    # The same message sent again (same tracking id) before and after the range, and as the current turn.
    history = [said("t1", "early copy"), said("p", "before"), said("t0", "a"), said("t1", "b"), said("t2", "c")]
    history += [said("t3", "d"), said("t1", "later copy"), said("t1", "current turn")]
    note = said("n", "note")
    assert apply_edit(history, ["t0", "t1", "t2"], [note], before=7, after="p")
    texts = ["early copy", "before", "note", "d", "later copy", "current turn"]
    assert [m["content"][0]["text"] for m in history] == texts
    assert not apply_edit(history, ["t0", "t1", "t2"], [note], before=5, after="p")  # applied: nothing matches again
    # A range of one message whose copy comes later: the copy stays, also when the edit is applied again.
    history = [said("p", "before"), said("t1", "original"), said("q", "next"), said("t1", "copy"), said("u", "now")]
    assert apply_edit(history, ["t1"], [], before=4, after="p")
    assert not apply_edit(history, ["t1"], [], before=3, after="p")
    assert [m["content"][0]["text"] for m in history] == ["before", "next", "copy", "now"]
    # Never the current turn, whatever it shares with the range.
    assert not apply_edit([said("t1", "current turn")], ["t1"], [], before=0)


def test_inserted_message_role_keeps_alternation_where_one_message_can():
    assert replacement_role("assistant", "assistant") == "user"
    assert replacement_role("user", "user") == "assistant"
    assert replacement_role(None, "assistant") == "user"
    assert replacement_role("assistant", "user") == "user"  # one clash either way: Strands' convention


def test_message_id_is_derived_from_the_tracking_id():
    first = message_id({"role": "user", "content": [], "tracking_id": "abc"})
    assert first == message_id({"role": "assistant", "content": [{"text": "x"}], "tracking_id": "abc"})
    assert len(first) == 8 and first != message_id({"role": "user", "content": [], "tracking_id": "abd"})
    assert message_id({"role": "user", "content": []}) is None


# ---------------------------------------------------------------------------------------------- the agent loop


@tool
def weather(city: str) -> str:
    """Current weather for a city.

    Args:
        city: The city.
    """
    return f"Sunny and 21 degrees in {city}."


class Script:
    """A scripted model's behaviour: plain turns, a weather tool call, and context edits asked by the test."""

    def __init__(self):
        self.edit = None  # (tool name, callable(ids) -> input) for the next "tidy" turn
        self.tool_results: list[str] = []

    def __call__(self, messages, system_prompt, is_summary):
        if is_summary:
            return "## Conversation Summary\n* Earlier turns about facts and the weather."
        last = messages[-1]
        text = render_message(last)
        if any("toolResult" in b for b in last["content"]):
            self.tool_results.append(text)
            return "Done."
        if "weather" in text:
            return ToolCall("weather", {"city": "Lyon"}, tool_use_id=f"w-{len(messages)}")
        if "tidy" in text and self.edit is not None:
            name, make_input = self.edit
            ids = [TAG.findall(render_message(m)) for m in messages]
            return ToolCall(name, make_input(ids), tool_use_id=f"e-{len(messages)}")
        return f"Noted: {text[:40]}"


def untagged(messages):
    return all(not TAG.search(render_message(m)) for m in messages)


def assert_tool_pairs_whole(messages):
    open_calls: set[str] = set()
    for message in messages:
        for block in message["content"]:
            if "toolUse" in block:
                open_calls.add(block["toolUse"]["toolUseId"])
            if "toolResult" in block:
                assert block["toolResult"]["toolUseId"] in open_calls, "a tool result lost its tool call"
                open_calls.discard(block["toolResult"]["toolUseId"])
    assert not open_calls, "a tool call lost its result"


def build_agent(memory, tmp_path, script, *, max_input_chars=None, preserve_recent=30):
    manager = SemanticSummarizingConversationManager(memory=memory, preserve_recent_messages=preserve_recent)
    model = ScriptedModel(script, max_input_chars=max_input_chars)
    editor = ContextEditor()
    agent = Agent(
        model=model,
        conversation_manager=manager,
        plugins=[editor],
        tools=[weather, *memory_tools(manager)],
        session_manager=FileSessionManager(session_id="edit", storage_dir=str(tmp_path)),
        agent_id="assistant",
        callback_handler=None,
    )
    return agent, model, editor, manager


def turns(count, start=0):
    return [
        f"What is the weather in Lyon? ({i})" if i % 4 == 3 else f"Remember fact {i}: the value is {i * 7}."
        for i in range(start, start + count)
    ]


def snapshot(messages):
    return [(m.get("tracking_id"), m["role"], m["content"]) for m in messages]


def test_summarize_and_drop_during_a_long_conversation(archive_factory, tmp_path):  # noqa: F811
    script = Script()
    agent, model, editor, manager = build_agent(archive_factory(), tmp_path, script)
    for turn in turns(15):
        agent(turn)
    before = list(agent.messages)
    assert len(before) == 15 * 2 + 3 * 2  # every fourth turn adds a tool call and its result

    # Every earlier message carries its id in the request; none does in history or in the current turn.
    request = model.chat_requests[-1]["messages"]
    tagged = [bool(TAG.search(render_message(m))) for m in request]
    assert tagged == [True] * (len(request) - 1) + [False]
    assert [TAG.findall(render_message(m))[0] for m in request[:-1]] == [message_id(m) for m in before[:-2]]
    assert untagged(agent.messages)

    # Summarize the first twelve messages (ending on a tool call: widened to its result).
    first_ids = [message_id(m) for m in before]
    tool_call_position = next(p for p, m in enumerate(before) if any("toolUse" in b for b in m["content"]))
    script.edit = (
        "context_summarize",
        lambda ids: {
            "start": f"ctx:{first_ids[0]}",
            "end": first_ids[tool_call_position],
            "summary": "Facts 0-2 were 0, 7 and 14; it was sunny in Lyon.",
        },
    )
    removed = before[: tool_call_position + 2]
    agent("Please tidy up your context.")
    assert "widened to" in script.tool_results[-1] and "archived verbatim as Message" in script.tool_results[-1]
    assert len(agent.messages) == len(before) + 4 - len(removed) + 1
    summary = agent.messages[0]
    assert "Facts 0-2 were 0, 7 and 14" in render_message(summary)
    assert "conversation_read" in render_message(summary)
    # The very next model call already saw the edited context.
    after_edit = model.chat_requests[-1]["messages"]
    assert "Facts 0-2" in render_message(after_edit[0]) and len(after_edit) == len(agent.messages) - 1

    # The archive holds every removed message verbatim.
    archived = {m.get("tracking_id"): m for _, m in manager.memory.messages()}
    for message in removed:
        assert archived[message["tracking_id"]]["content"] == message["content"]
    # ...and the summary tells the model where: conversation_read brings the originals back.
    first, last = map(int, re.search(r"Message (\d+)-(\d+)", render_message(summary)).groups())
    read = agent.tool.conversation_read(start=first, end=last, record_direct_tool_call=False)
    assert "Remember fact 0: the value is 0." in read["content"][0]["text"]
    assert "Sunny and 21 degrees in Lyon." in read["content"][0]["text"]

    # Drop a later range of plain turns.
    current = list(agent.messages)
    script.edit = ("context_drop", lambda ids: {"start": message_id(current[3]), "end": message_id(current[6])})
    agent("tidy again please")
    assert [m.get("tracking_id") for m in agent.messages[:3]] == [m.get("tracking_id") for m in current[:3]]
    assert agent.messages[3].get("tracking_id") == current[7].get("tracking_id")
    archived = {m.get("tracking_id") for _, m in manager.memory.messages()}
    assert {m["tracking_id"] for m in current[3:7]} <= archived

    # The agent keeps working, every request it sent kept tool calls whole, and history never holds ids.
    for turn in turns(5, start=15):
        agent(turn)
    for request in model.chat_requests:
        assert_tool_pairs_whole(request["messages"])
    assert_tool_pairs_whole(agent.messages)
    assert untagged(agent.messages)
    assert editor.applied_count == 2 and editor.pending_edits == 0

    # A session restore reproduces the edited history.
    restored, _, _, _ = build_agent(archive_factory(), tmp_path, Script())
    assert snapshot(restored.messages) == snapshot(agent.messages)
    assert all(not TAG.search(p.read_text()) for p in tmp_path.rglob("*.json"))


def test_edits_queue_during_the_tool_call_and_apply_at_the_next_safe_point(embedder, tmp_path):
    from strands_semantic_memory import SemanticMemory

    script = Script()
    agent, model, _, _ = build_agent(SemanticMemory(embedder=embedder), tmp_path, script)
    for turn in turns(6):
        agent(turn)
    sizes_during_tool: list[int] = []
    agent.add_hook(lambda event: sizes_during_tool.append(len(event.agent.messages)), AfterToolCallEvent)
    size = len(agent.messages)
    script.edit = ("context_drop", lambda ids: {"start": ids[0][0], "end": ids[3][0]})
    agent("tidy")
    # While the tool ran: the new user turn and the tool call were in history, nothing was removed yet.
    assert sizes_during_tool == [size + 2]
    # Applied before the next model call: the request after the tool result is four messages shorter.
    assert len(model.chat_requests[-1]["messages"]) == size + 3 - 4


def test_an_edit_leaves_messages_outside_its_range_alone_even_when_they_share_a_tracking_id(embedder, tmp_path):
    from strands_semantic_memory import SemanticMemory

    script = Script()
    agent, model, editor, _ = build_agent(SemanticMemory(embedder=embedder), tmp_path, script)
    for turn in turns(4):
        agent(turn)
    resent = agent.messages[2]  # a user message inside the range below, sent again as the current turn
    after_range = snapshot(agent.messages[5:])
    script.edit = ("context_drop", lambda ids: {"start": ids[0][0], "end": ids[4][0]})
    agent([{"role": "user", "content": [{"text": "tidy"}], "tracking_id": resent["tracking_id"]}])
    assert editor.applied_count == 1
    texts = [render_message(m) for m in agent.messages]
    assert "tidy" in texts, "the current turn's message stays"
    assert snapshot(agent.messages[1 : 1 + len(after_range)]) == after_range  # the note, then the rest untouched
    assert not any("Remember fact 1:" in text for text in texts), "the range itself left"


def test_refusals_are_clear_and_change_nothing(embedder, tmp_path):
    from strands_semantic_memory import SemanticMemory

    script = Script()
    agent, _, editor, _ = build_agent(SemanticMemory(embedder=embedder), tmp_path, script)
    for turn in turns(4):
        agent(turn)
    cases = [
        (("context_drop", lambda ids: {"start": ids[0][0], "end": "ctx:ffffffff"}), "no message in the active context"),
        (("context_drop", lambda ids: {"start": "hello", "end": ids[0][0]}), "is not a message id"),
        (("context_summarize", lambda ids: {"start": ids[0][0], "end": ids[1][0], "summary": " "}), "non-empty"),
    ]
    for edit, expected in cases:
        size = len(agent.messages)
        script.edit = edit
        agent("tidy")
        assert expected in script.tool_results[-1], script.tool_results[-1]
        assert len(agent.messages) == size + 4  # the turn, the call, the error result, the reply
    # Pinned messages (Strands' pin flag) stay.
    agent.messages[2]["metadata"] = {"custom": {"pinned": True}}
    script.edit = ("context_drop", lambda ids: {"start": ids[1][0], "end": ids[4][0]})
    agent("tidy")
    assert "pinned message" in script.tool_results[-1]
    # The current turn (the latest user message and what follows) cannot be edited.
    script.edit = ("context_drop", lambda ids: {"start": ids[0][0], "end": message_id(agent.messages[-1])})
    agent("tidy")
    assert "reaches the current turn" in script.tool_results[-1]
    assert editor.applied_count == 0


def test_restore_after_the_manager_summarized_past_an_edit(embedder, tmp_path):
    """Strands restores a file session by offset; an edit shifts what that offset means. The log's anchor fixes it."""
    from strands_semantic_memory import SemanticMemory

    script = Script()
    agent, model, _, manager = build_agent(
        SemanticMemory(embedder=embedder), tmp_path, script, max_input_chars=2400, preserve_recent=6
    )
    for turn in turns(6):
        agent(turn)
    script.edit = ("context_drop", lambda ids: {"start": ids[2][0], "end": ids[5][0]})
    agent("tidy")
    assert "Queued" in script.tool_results[-1]
    for turn in turns(14, start=6):
        agent(turn)
    assert manager.removed_message_count > 0 and model.overflows > 0, "the manager summarized after the edit"
    # The manager's own summary is its to maintain: refused.
    summary_id = message_id(manager.get_state()["summary_message"])
    script.edit = ("context_drop", lambda ids: {"start": summary_id, "end": summary_id})
    agent("tidy")
    assert "conversation manager's summary" in script.tool_results[-1]
    restored, _, _, _ = build_agent(SemanticMemory(embedder=embedder), tmp_path, Script())
    assert snapshot(restored.messages) == snapshot(agent.messages)


def test_editor_needs_a_memory(tmp_path):
    with pytest.raises(ConfigurationError, match="no SemanticMemory"):
        Agent(model=ScriptedModel(), plugins=[ContextEditor()], callback_handler=None)
    with pytest.raises(ConfigurationError, match="max_summary_chars"):
        ContextEditor(max_summary_chars=0)
    log_free = Agent(model=ScriptedModel(), callback_handler=None)
    assert log_free.state.get(STATE_KEY) is None
