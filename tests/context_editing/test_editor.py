"""Context editing through a real Agent: a scripted model summarizes and drops ranges of its own context; every
range is archived first, an edit touches exactly its range, and a restored session replays the edits.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from strands import Agent, tool
from strands.hooks import AfterToolCallEvent
from strands.session import FileSessionManager

from strands_semantic_memory import ContextEditor, SemanticSummarizingConversationManager
from strands_semantic_memory.context_editing._edits import apply_edit, close_tool_pairs, current_turn_start, message_id
from strands_semantic_memory.errors import ConfigurationError
from strands_semantic_memory.messages import render_message
from strands_semantic_memory.testing import ScriptedModel, ToolCall
from strands_semantic_memory.tools import memory_tools

TAG = re.compile(r"\[ctx:([0-9a-f]{8})\]")


def said(tracking_id: str, text: str, role: str = "user") -> dict[str, Any]:
    return {"role": role, "content": [{"text": text}], "tracking_id": tracking_id}


def test_an_edit_touches_exactly_its_range_and_applies_once():
    history = [said("t1", "early copy"), said("p", "before"), said("t0", "a"), said("t1", "b"), said("t2", "c")]
    history += [said("t3", "d"), said("t1", "later copy"), said("t1", "current turn")]
    edit = {"removed": ["t0", "t1", "t2"], "inserted": [said("n", "note")], "after": "p"}
    assert apply_edit(history, edit) and not apply_edit(history, edit)
    texts = ["early copy", "before", "note", "d", "later copy", "current turn"]
    assert [m["content"][0]["text"] for m in history] == texts
    assert not apply_edit([said("t1", "current turn")], {"removed": ["t1"], "inserted": [], "after": None})
    history = [said("t1", "early copy"), said("p", "before"), said("t1", "edited"), said("q", "next"), said("u", "now")]
    edit = {"removed": ["t1"], "inserted": [], "after": "p"}
    assert apply_edit(history, edit) and not apply_edit(history, edit)
    assert [m["content"][0]["text"] for m in history] == ["early copy", "before", "next", "now"]

    use = {"role": "assistant", "content": [{"toolUse": {"toolUseId": "1", "name": "t", "input": {}}}]}
    result = {"role": "user", "content": [{"toolResult": {"toolUseId": "1", "content": [{"text": "r"}]}}]}
    pairs = [said("q", "q"), use, result, said("a", "a", "assistant")]
    assert close_tool_pairs(pairs, 0, 1) == (0, 2) and close_tool_pairs(pairs, 2, 3) == (1, 3)


@tool
def weather(city: str) -> str:
    """Current weather for a city.

    Args:
        city: The city.
    """
    return f"Sunny and 21 degrees in {city}."


class Script:
    """Plain turns, a weather call every fourth turn, and the context edit the test sets for a "tidy" turn."""

    def __init__(self) -> None:
        self.edit: tuple[str, Any] | None = None
        self.results: list[str] = []

    def __call__(self, messages, system_prompt, is_summary):
        if is_summary:
            return "## Summary\n* Earlier turns about facts and the weather."
        last = render_message(messages[-1])
        if last.startswith("[tool result"):
            self.results.append(last)
            return "Done."
        if "weather" in last:
            return ToolCall("weather", {"city": "Lyon"}, tool_use_id=f"w-{len(messages)}")
        if "tidy" in last and self.edit is not None:
            name, make = self.edit
            ids = [TAG.findall(render_message(m)) for m in messages]
            return ToolCall(name, make([i[0] if i else None for i in ids]), tool_use_id=f"e-{len(messages)}")
        return f"Noted: {last[:40]}"


def build(tmp_path, embedder, script, max_input_chars=None, **manager_options):
    manager = SemanticSummarizingConversationManager(
        archive_path=tmp_path / "a.db", embedder=embedder, **manager_options
    )
    model = ScriptedModel(script, max_input_chars=max_input_chars)
    agent = Agent(
        model=model,
        conversation_manager=manager,
        plugins=[ContextEditor()],
        tools=[weather, *memory_tools()],
        session_manager=FileSessionManager(session_id="edit", storage_dir=str(tmp_path)),
        agent_id="assistant",
        callback_handler=None,
    )
    return agent, model, manager


def turns(count: int, start: int = 0) -> list[str]:
    return [
        f"What is the weather in Lyon? ({i})" if i % 4 == 3 else f"Remember fact {i}: {i * 7}."
        for i in range(start, start + count)
    ]


def snapshot(messages):
    return [(m.get("tracking_id"), m["role"], m["content"]) for m in messages]


def whole_pairs(messages) -> bool:
    uses = [b["toolUse"]["toolUseId"] for m in messages for b in m["content"] if "toolUse" in b]
    return uses == [b["toolResult"]["toolUseId"] for m in messages for b in m["content"] if "toolResult" in b]


def test_summarize_and_drop_lose_nothing_and_a_restored_session_replays_them(tmp_path, embedder, monkeypatch):
    script = Script()
    agent, model, manager = build(tmp_path, embedder, script)
    on_loop = []
    original = manager.archive

    def archive(messages, agent):
        try:
            asyncio.get_running_loop()
            on_loop.append(len(messages))
        except RuntimeError:
            pass
        return original(messages, agent)

    monkeypatch.setattr(manager, "archive", archive)
    for turn in turns(8):
        agent(turn)
    before = list(agent.messages)
    request = model.chat_requests[-1]["messages"]
    turn = current_turn_start(request)
    expected = [[message_id(m)] for m in before[:turn]] + [[]] * (len(request) - turn)
    assert turn > 0 and [TAG.findall(render_message(m)) for m in request] == expected
    assert not any(TAG.search(render_message(m)) for m in agent.messages), "ids are in the call's copy only"

    call_at = next(p for p, m in enumerate(before) if any("toolUse" in b for b in m["content"]))
    text = "Facts 0-2 were 0, 7 and 14; it was sunny in Lyon."
    script.edit = ("context_summarize", lambda ids: {"start": ids[0], "end": ids[call_at], "summary": text})
    sizes = []
    agent.add_hook(lambda event: sizes.append(len(event.agent.messages)), AfterToolCallEvent)
    agent("Please tidy up your context.")
    assert "widened" in script.results[-1] and sizes == [len(before) + 2], "queued while the tool ran"
    summary = agent.messages[0]
    assert text in render_message(summary) and len(agent.messages) == len(before) + 4 - (call_at + 2) + 1
    assert text in render_message(model.chat_requests[-1]["messages"][0]), "the next call saw the edit"
    archived = {r.message.get("tracking_id"): r.message for r in manager.memory.records()}
    assert all(archived[m["tracking_id"]] == m for m in before[: call_at + 2]), "archived verbatim first"
    first, last = map(int, re.search(r"Message (\d+)-(\d+)", render_message(summary)).groups())
    read = agent.tool.conversation_read(start=first, end=last, record_direct_tool_call=False)
    assert "Remember fact 0: 0." in read["content"][0]["text"] and "Sunny and 21 degrees" in read["content"][0]["text"]

    current = list(agent.messages)
    script.edit = ("context_drop", lambda ids: {"start": ids[3], "end": ids[6]})
    agent("tidy again please")
    assert snapshot(agent.messages[:3]) == snapshot(current[:3]) and agent.messages[3] is current[7]
    for turn in turns(4, start=8):
        agent(turn)
    assert all(whole_pairs(r["messages"]) for r in model.chat_requests) and not on_loop

    restored, _, _ = build(tmp_path, embedder, Script())
    assert snapshot(restored.messages) == snapshot(agent.messages)


def test_a_restore_after_the_manager_summarized_past_an_edit(tmp_path, embedder):
    """A file session restores from an offset that the edit shifted: the log's anchor puts it right."""
    script = Script()
    agent, model, manager = build(tmp_path, embedder, script, preserve_recent_messages=6, max_input_chars=2000)
    for turn in turns(6):
        agent(turn)
    script.edit = ("context_drop", lambda ids: {"start": ids[2], "end": ids[5]})
    agent("tidy")
    assert script.results[-1].startswith("[tool result success] Queued")
    for turn in turns(14, start=6):
        agent(turn)
    assert manager.removed_message_count > 0 and model.overflows > 0
    summary_id = message_id(manager._summary_message)
    script.edit = ("context_drop", lambda ids: {"start": summary_id, "end": summary_id})
    agent("tidy")
    assert "conversation manager's summary" in script.results[-1]
    restored, _, _ = build(tmp_path, embedder, Script())
    assert snapshot(restored.messages) == snapshot(agent.messages)


def test_refusals_are_clear_bounded_and_change_nothing(tmp_path, embedder):
    script = Script()
    agent, _, _ = build(tmp_path, embedder, script)
    for turn in turns(4):
        agent(turn)
    agent.messages[2]["metadata"] = {"custom": {"pinned": True}}
    cases = [
        (("context_drop", lambda ids: {"start": ids[0], "end": "ctx:ffffffff"}), "matches 0 messages"),
        (("context_drop", lambda ids: {"start": "hello", "end": ids[0]}), "is not a message id"),
        (("context_drop", lambda ids: {"start": "x" * 700_000, "end": ids[0]}), "at most 100"),
        (("context_drop", lambda ids: {"start": [ids[0]] * 100_000, "end": ids[0]}), "must be a string"),
        (("context_summarize", lambda ids: {"start": ids[0], "end": ids[1], "summary": " "}), "non-empty"),
        (("context_drop", lambda ids: {"start": ids[1], "end": ids[3]}), "pinned message"),
        (("context_drop", lambda ids: {"start": ids[0], "end": message_id(agent.messages[-1])}), "current turn"),
    ]
    for edit, expected in cases:
        size = len(agent.messages)
        script.edit = edit
        agent("tidy")
        assert expected in script.results[-1] and len(script.results[-1]) < 300, script.results[-1][:300]
        assert len(agent.messages) == size + 4  # the turn, the call, the error result, the reply
    with pytest.raises(ConfigurationError, match="SemanticSummarizingConversationManager"):
        Agent(model=ScriptedModel(), plugins=[ContextEditor()], callback_handler=None)
    with pytest.raises(ConfigurationError, match="max_summary_chars"):
        ContextEditor(max_summary_chars=0)


def test_messages_outside_the_range_stay_even_when_they_share_a_tracking_id(tmp_path, embedder):
    script = Script()
    agent, _, _ = build(tmp_path, embedder, script)
    for turn in turns(3):
        agent(turn)
    resent = agent.messages[2]  # inside the range below, and sent again as the current turn
    after = snapshot(agent.messages[5:])
    script.edit = ("context_drop", lambda ids: {"start": ids[0], "end": ids[4]})
    agent([{"role": "user", "content": [{"text": "tidy"}], "tracking_id": resent["tracking_id"]}])
    texts = [render_message(m) for m in agent.messages]
    assert "tidy" in texts and not any("Remember fact 1:" in t for t in texts)
    assert snapshot(agent.messages[1 : 1 + len(after)]) == after  # the note, then the rest untouched
