"""The conversation tools through a real Agent: strict arguments, bounded outputs, session scope, forgetting."""

from __future__ import annotations

import asyncio
import json
import re
from datetime import datetime, timezone
from typing import Any

import pytest
from strands import Agent
from strands.session import FileSessionManager

from strands_semantic_memory import SemanticMemory, SemanticSummarizingConversationManager
from strands_semantic_memory.errors import ConfigurationError
from strands_semantic_memory.messages import render_message
from strands_semantic_memory.testing import ScriptedModel, ToolCall
from strands_semantic_memory.tools import memory_tools

SECRET = "4111-2222-3333-4444"
JAN_1 = datetime(2024, 1, 1, tzinfo=timezone.utc).timestamp()
DAY = 86400.0
HUGE = "x" * 700_000
TOPICS = ["the harbour crane", "the Lyon train", "the dentist", "the budget review", "the garden fence"]


def said(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "content": [{"text": text}]}


def chatter(count: int) -> list[dict[str, Any]]:
    return [
        said(("user", "assistant")[i % 2], f"Note {i} on {TOPICS[i % 5]}: the meeting is at {i}pm.")
        for i in range(count)
    ]


def tools(memory: Any = None, **options: Any) -> dict[str, Any]:
    return {t.tool_name: t for t in memory_tools(memory, allow_forget=True, **options)}


def call(tool: Any, agent: Agent | None = None, **arguments: Any) -> tuple[str, str]:
    """Run a tool as the model would (Strands' tool stream: its validation, its error results)."""
    agent = agent or Agent(model=ScriptedModel(), tools=[tool], callback_handler=None)
    result = getattr(agent.tool, tool.tool_name)(**arguments, record_direct_tool_call=False)
    return result["status"], "\n".join(block.get("text", "") for block in result["content"])


def labels(output: str) -> list[int]:
    return [int(i) for i in re.findall(r"^\[Message (\d+), ", output, re.MULTILINE)]


def test_search_filters_read_is_exact_and_both_are_bounded(embedder):
    memory = SemanticMemory(embedder=embedder)
    lines = [
        "I booked the train to Lyon.",
        "The Lyon train leaves at 9:10.",
        "Dentist on Friday.",
        "Noted, 14:00.",
        "The train to Lyon is now the 11:40.",
        "Updated: the Lyon train leaves at 11:40.",
    ]
    memory.add(
        [said(("user", "assistant")[i % 2], t) for i, t in enumerate(lines)],
        said_at=[JAN_1 + i * DAY / 2 for i in range(6)],
    )
    found = tools(memory, context_radius=0)
    status, output = call(found["conversation_search"], query="train to Lyon", limit=6, role="assistant")
    assert status == "success" and {1, 5} <= set(labels(output)) <= {1, 3, 5} and "2024-01-01" in output
    assert set(labels(call(found["conversation_search"], query="train to Lyon", limit=6, since="2024-01-03")[1])) == {
        4,
        5,
    }
    assert set(labels(call(found["conversation_search"], query="Lyon train", limit=6, until="2024-01-01")[1])) == {0, 1}
    assert call(found["conversation_search"], query="Lyon", since="2030-01-01")[1].startswith("No archived messages")

    memory.forget([2])
    status, output = call(found["conversation_read"], start=1.0, end=3)  # JSON's 1.0 is an integer
    assert labels(output) == [1, 3] and "indices 2 are not in the archive" in output and lines[3] in output

    memory.add([said("user", f"Line {i}: " + "lorem ipsum " * 60) for i in range(12)] + [said("user", "y\n" * 2000)])
    small = tools(memory, max_output_chars=3000)
    status, output = call(small["conversation_read"], start=6, end=200)
    shown = labels(output)
    assert (
        len(output) <= 3000
        and shown == list(range(6, shown[-1] + 1))
        and f"conversation_read({shown[-1] + 1}, 200)" in output
    )
    status, output = call(small["conversation_read"], start=18)
    assert len(output) <= 3000 and "cut:" in output and "of 4000 characters shown" in output
    status, output = call(small["conversation_search"], query="lorem ipsum line", limit=20)
    assert len(output) <= 3000 and labels(output) and "not shown to stay within 3000" in output


HOSTILE = [
    ("conversation_search", {"query": HUGE}),
    ("conversation_search", {"query": "meeting", "role": HUGE}),
    ("conversation_search", {"query": "meeting", "since": HUGE}),
    ("conversation_search", {"query": "meeting", "until": "2024-01-01T" + HUGE}),
    ("conversation_search", {"query": "meeting", "limit": HUGE}),
    ("conversation_search", {"query": [HUGE] * 3}),
    ("conversation_read", {"start": HUGE}),
    ("conversation_read", {"start": 0, "end": [1] * 100_000}),
    ("conversation_read", {"start": 10**400}),
    ("conversation_forget", {"query": HUGE}),
    ("conversation_forget", {"indices": [HUGE] * 100}),
    ("conversation_forget", {"indices": list(range(100_000))}),
    ("conversation_forget", {"indices": [True] * 100_000}),
    ("conversation_forget", {"indices": [2**70]}),
]


def test_outputs_are_bounded_whatever_the_model_sends(embedder):
    memory = SemanticMemory(embedder=embedder)
    memory.add(chatter(30))
    found = tools(memory, max_output_chars=1000)
    for name, arguments in HOSTILE:
        status, output = call(found[name], **arguments)
        assert status == "error" and len(output) <= 1000 and "x" * 61 not in output, (name, output[:200])
    assert len(memory) == 30, "none of these calls deleted anything"


@pytest.mark.parametrize(
    "name, arguments, expected",
    [
        ("conversation_forget", {"indices": [True]}, "integer"),
        ("conversation_forget", {"indices": ["1"]}, "integer"),
        ("conversation_forget", {"indices": [1.5]}, "integer"),
        ("conversation_forget", {"indices": "1"}, "list"),
        ("conversation_forget", {"query": 1234}, "string"),
        ("conversation_forget", {"query": "ab"}, "at least 3 characters"),
        ("conversation_forget", {}, "exactly one of"),
        ("conversation_search", {"query": "meeting", "limit": True}, "integer"),
        ("conversation_search", {"query": "meeting", "limit": "5"}, "integer"),
        ("conversation_search", {"query": "meeting", "limit": 21}, "between 1 and 20"),
        ("conversation_search", {"query": 42}, "string"),
        ("conversation_search", {"query": "meeting", "role": "system"}, "role"),
        ("conversation_search", {"query": "meeting", "since": "last tuesday"}, "ISO-8601"),
        ("conversation_read", {"start": "3"}, "integer"),
        ("conversation_read", {"start": 0, "end": False}, "integer"),
        ("conversation_read", {"start": 5, "end": 2}, "must be >= start"),
    ],
)
def test_arguments_of_the_wrong_type_are_refused_not_coerced(embedder, name, arguments, expected):
    memory = SemanticMemory(embedder=embedder)
    memory.add(chatter(6))
    status, output = call(tools(memory)[name], **arguments)
    assert status == "error" and expected in output and len(memory) == 6, output


def test_forgetting_is_opt_in_bounded_and_confirmed(embedder):
    memory = SemanticMemory(embedder=embedder)
    assert [t.tool_name for t in memory_tools(memory)] == ["conversation_search", "conversation_read"]
    for wrong in ({"confirm_forget": lambda request: True}, {"max_forget_per_call": 5}, {"max_output_chars": 10}):
        with pytest.raises(ConfigurationError):
            memory_tools(memory, **wrong)
    conversation = chatter(40)
    conversation[2], conversation[5] = said("user", f"My card is {SECRET}."), said("user", f"Use {SECRET} again.")
    memory.add(conversation)
    forget = tools(memory, max_forget_per_call=20)["conversation_forget"]
    for arguments in ({"query": "the meeting"}, {"indices": list(range(21))}):
        assert "Nothing was forgotten" in call(forget, **arguments)[1] and len(memory) == 40
    asked = []
    confirmed = tools(memory, confirm_forget=lambda request: asked.append(request) or len(request.indices) == 1)
    assert "did not confirm" in call(confirmed["conversation_forget"], query=SECRET)[1] and len(memory) == 40
    assert asked[-1].indices == (2, 5) and asked[-1].query == SECRET and SECRET in json.dumps(asked[-1].messages)
    status, output = call(confirmed["conversation_forget"], indices=[5, 99_999])
    assert "Forgot 1 archived message(s): 5" in output and "99999" in output and len(memory) == 39


@pytest.mark.parametrize("archive_when", ["added", "leaving"])
def test_forgotten_messages_never_come_back(embedder, tmp_path, archive_when):
    """Forgotten by the model mid-conversation: never searched, read, summarized, or archived again."""

    def responder(messages, system_prompt, is_summary):
        if is_summary:
            return "Summary of earlier turns."
        last = render_message(messages[-1])
        if "[tool result" in last:
            return "Done, it is forgotten."
        return ToolCall("conversation_forget", {"query": SECRET}) if "forget my card" in last else "Noted."

    def build(session: str) -> tuple[Agent, SemanticSummarizingConversationManager, ScriptedModel]:
        manager = SemanticSummarizingConversationManager(
            archive_path=tmp_path / "ann.db",
            user_id="ann",
            embedder=embedder,
            archive_when=archive_when,
            preserve_recent_messages=4,
        )
        model = ScriptedModel(responder, max_input_chars=3000)
        session_manager = FileSessionManager(session_id=session, storage_dir=str(tmp_path / "sessions"))
        agent = Agent(
            model=model,
            conversation_manager=manager,
            tools=memory_tools(allow_forget=True),
            session_manager=session_manager,
            agent_id="assistant",
            callback_handler=None,
        )
        return agent, manager, model

    agent, manager, model = build("one")
    agent(f"My card is {SECRET}, keep it for the hotel.")
    agent("Please forget my card number.")
    result = [b["toolResult"] for m in agent.messages for b in m["content"] if "toolResult" in b][-1]
    assert result["status"] == "success" and SECRET not in json.dumps(result)
    for n in range(25):  # long enough for the card and the forget call to leave the active context
        agent(f"Filler question {n} about the weather in Lyon and the train times. " * 3)
    assert manager.removed_message_count > 6 and model.summary_requests
    assert not any(SECRET in json.dumps(r["messages"]) for r in model.summary_requests)
    for request in model.summary_requests:  # what the summary saw keeps every tool call with its result
        uses = {b["toolUse"]["toolUseId"] for m in request["messages"] for b in m["content"] if "toolUse" in b}
        results = {b["toolResult"]["toolUseId"] for m in request["messages"] for b in m["content"] if "toolResult" in b}
        assert uses == results
    manager.memory.close()

    for session in ("one", "two"):  # the same session restored, and a new session of the same user
        agent, manager, _ = build(session)
        agent("Anything new about the weather in Lyon?")
        memory = manager.memory
        assert len(memory) > 20 and not memory.find_text(SECRET)
        assert all(SECRET not in json.dumps(hit.message) for hit in memory.search(f"my card is {SECRET}", top_k=20))
        status, output = call(agent.tool_registry.registry["conversation_search"], agent, query="card for the hotel")
        assert status == "success" and SECRET not in output
        output = call(agent.tool_registry.registry["conversation_read"], agent, start=0, end=49)[1]
        assert labels(output) and SECRET not in output
        memory.close()


def test_the_tools_of_an_unnamed_memory_keep_to_the_agents_session(embedder):
    shared = SemanticMemory(embedder=embedder, embedding="background")
    agents = []
    for session in ("alice", "bob-\u2028" + "b" * 300):  # an odd, long id is archived as its digest
        manager = SemanticSummarizingConversationManager(memory=shared)
        agent = Agent(
            model=ScriptedModel(),
            conversation_manager=manager,
            tools=memory_tools(allow_forget=True),
            callback_handler=None,
        )
        agent._session_id = session  # what a session manager's id sets (no session file name could be this long)
        agents.append(agent)
    alice, bob = agents
    alice("My locker code is 4417.")
    bob("I keep my bike in the basement.")
    search, read, forget = (
        alice.tool_registry.registry[n] for n in ("conversation_search", "conversation_read", "conversation_forget")
    )
    assert "4417" in call(search, alice, query="locker code")[1]
    assert "basement" in call(search, bob, query="where is the bike")[1]
    assert "4417" not in call(search, bob, query="my locker code")[1]
    assert "4417" not in call(read, bob, start=0, end=10)[1] and "basement" in call(read, bob, start=0, end=10)[1]
    assert "Nothing was forgotten" in call(forget, bob, query="4417")[1] and shared.find_text("4417")


def test_archive_work_never_runs_on_the_event_loop(embedder, monkeypatch):
    memory = SemanticMemory(embedder=embedder)
    memory.add(chatter(10))
    on_loop: list[str] = []

    def watched(name):
        original = getattr(SemanticMemory, name)

        def method(self, *args, **kwargs):
            try:
                asyncio.get_running_loop()
                on_loop.append(name)
            except RuntimeError:
                pass  # a worker thread: no event loop runs here
            return original(self, *args, **kwargs)

        monkeypatch.setattr(SemanticMemory, name, method)

    for name in ("search", "records", "find_text", "forget", "add", "stats"):
        watched(name)
    script = [
        ToolCall("conversation_search", {"query": "crane"}, "a"),
        ToolCall("conversation_read", {"start": 0}, "b"),
        ToolCall("conversation_forget", {"query": "harbour"}, "c"),
        "Done.",
    ]
    agent = Agent(model=ScriptedModel(script), tools=list(tools(memory).values()), callback_handler=None)
    agent("Look up the crane, then forget the harbour notes.")
    statuses = [b["toolResult"]["status"] for m in agent.messages for b in m["content"] if "toolResult" in b]
    assert statuses == ["success"] * 3 and not memory.find_text("harbour") and not on_loop
