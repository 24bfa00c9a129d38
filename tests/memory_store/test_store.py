"""SemanticMemoryStore as a Strands MemoryStore: protocol, idempotent verbatim archiving, passages as entries, and a
real Agent(memory_manager=MemoryManager(...)) whose scripted model calls Strands' own search_memory tool.
"""

from __future__ import annotations

import asyncio
import logging
import threading

import pytest
from strands import Agent, tool
from strands.memory import AddMessagesContext, MemoryManager
from strands.memory.types import _has_method

from strands_semantic_memory import SemanticMemory, SemanticSummarizingConversationManager
from strands_semantic_memory.errors import ConfigurationError
from strands_semantic_memory.memory_store import KEEP_TOOL_TRAFFIC, SemanticMemoryStore
from strands_semantic_memory.messages._text import render_message
from tests.support.archives import durable_archive, new_user_id
from tests.support.context_manager import FACT, QUESTION, planning_turns
from tests.support.conversations import PLANTED_TURN, REFERENCE, distractor_conversation, text_message
from tests.support.embedders import CountingEmbedder, RecordingEmbedder
from tests.support.processes import killed_after
from tests.support.scripted_model import ScriptedModel, ToolCall

WORKER = "semantic-memory-embedding"  # the memory's embedding thread


def run(coroutine):
    return asyncio.run(coroutine)


def test_store_plugs_into_memory_manager(embedder):
    store = SemanticMemoryStore(embedder=embedder)
    assert store.writable and store.name == "conversation_archive"
    assert store.extraction["filter"] is KEEP_TOOL_TRAFFIC and store.extraction["filter"].exclude == []
    for method in ("search", "add", "add_messages", "initialize", "get_tools"):
        assert _has_method(store, method), method
    manager = MemoryManager(stores=[store])
    assert [t.tool_name for t in manager.tools] == ["search_memory", "conversation_search", "conversation_read"]
    assert SemanticMemoryStore(embedder=embedder, tools=False).get_tools() == []
    allowed = SemanticMemoryStore(embedder=embedder, allow_forget=True)
    assert [t.tool_name for t in allowed.get_tools()][-1] == "conversation_forget"  # deletion is opt-in
    custom = SemanticMemoryStore(embedder=embedder, extraction={"trigger": []})
    assert custom.extraction == {"trigger": [], "filter": KEEP_TOOL_TRAFFIC}


def test_shared_memory_is_served_read_only_unless_asked(embedder):
    manager = SemanticSummarizingConversationManager(embedder=embedder)
    store = SemanticMemoryStore(memory=manager.memory)
    assert store.memory is manager.memory
    assert not store.writable and store.extraction is None
    MemoryManager(stores=[store])  # a read-only store needs no write sink configuration
    writable = SemanticMemoryStore(memory=manager.memory, writable=True)
    assert writable.writable and writable.extraction["filter"] is KEEP_TOOL_TRAFFIC
    with pytest.raises(ConfigurationError, match="either memory= or options"):
        SemanticMemoryStore(memory=manager.memory, top_k=3)
    with pytest.raises(ConfigurationError, match="extraction needs a writable store"):
        SemanticMemoryStore(memory=manager.memory, extraction=True)
    with pytest.raises(ConfigurationError, match="max_search_results"):
        SemanticMemoryStore(memory=manager.memory, max_search_results=0)


def test_add_messages_is_idempotent_across_retried_batches(archive_factory):  # noqa: F811
    store = SemanticMemoryStore(memory=archive_factory(), writable=True)
    batch = [text_message("user", "ok"), text_message("assistant", "ok"), text_message("user", "ok")]
    first = run(store.add_messages(batch, AddMessagesContext(sequence_numbers=[0, 1, 2])))
    assert len(set(first)) == 3, "three messages with the same text are three messages"
    again = run(store.add_messages(batch, AddMessagesContext(sequence_numbers=[0, 1, 2])))
    assert again == first and len(store.memory) == 3
    partial = run(store.add_messages(batch[1:], AddMessagesContext(sequence_numbers=[1, 2])))
    assert partial == first[1:] and len(store.memory) == 3
    # Strands numbers from 0 again for each agent it builds, and calls initialize() first.
    run(store.initialize())
    later = run(store.add_messages(batch[:1], AddMessagesContext(sequence_numbers=[0])))
    assert later[0] not in first and len(store.memory) == 4
    # Verbatim: the archived message is the message (plus the key-bearing tracking id).
    archived = store.memory.get(first[1])
    assert archived["role"] == "assistant" and archived["content"] == [{"text": "ok"}]
    with pytest.raises(ValueError, match="2 sequence numbers for 3 messages"):
        run(store.add_messages(batch, AddMessagesContext(sequence_numbers=[0, 1])))


def test_add_archives_one_piece_of_content(archive_factory):  # noqa: F811
    store = SemanticMemoryStore(memory=archive_factory(), writable=True)
    index = run(store.add("The office door code is 4471.", {"role": "assistant", "timestamp": "2024-03-01T10:00:00"}))
    record = store.memory.record(index)
    assert record.role == "assistant" and record.said_at is not None
    twice = run(store.add("The office door code is 4471."))
    assert twice != index, "each add is its own record"
    with pytest.raises(ValueError, match="non-empty"):
        run(store.add("  "))
    with pytest.raises(ValueError, match="role must be"):
        run(store.add("x", {"role": "system"}))


def test_search_returns_passages_as_entries(archive_factory):  # noqa: F811
    memory = archive_factory()
    conversation = distractor_conversation(40)
    conversation[20] = text_message("user", PLANTED_TURN)
    indices = memory.add(conversation)
    store = SemanticMemoryStore(memory=memory, max_search_results=3, context_radius=1)
    entries = run(store.search("What was my booking reference?"))
    assert 1 <= len(entries) <= 3
    assert REFERENCE in entries[0].content
    scores = [e.metadata["score"] for e in entries]
    assert scores == sorted(scores, reverse=True)
    for entry in entries:
        meta = entry.metadata
        assert meta["indices"] == list(range(meta["start"], meta["end"] + 1))
        assert len(meta["roles"]) == len(meta["indices"]) == len(meta["timestamps"])
        assert all(isinstance(t, float) for t in meta["timestamps"])
        assert set(meta["hit_indices"]) <= set(meta["indices"])
        for index, role in zip(meta["indices"], meta["roles"]):
            assert f"[Message {index}, {role}]" in entry.content
            assert role == conversation[indices.index(index)]["role"]
    top = entries[0].metadata
    assert indices[20] in top["hit_indices"]
    assert {indices[19], indices[20], indices[21]} <= set(top["indices"])  # the hit with one neighbour each side
    single = run(store.search("What was my booking reference?", {"max_search_results": 1}))
    assert len(single) == 1 and REFERENCE in single[0].content
    assert run(store.search("   ")) == []


def test_entries_are_bounded(archive_factory):  # noqa: F811
    memory = archive_factory()
    memory.add([text_message("user", f"Inspection report {i}: " + "crane cable wear " * 200) for i in range(6)])
    store = SemanticMemoryStore(memory=memory, max_entry_chars=1500)
    entries = run(store.search("crane cable wear inspection"))
    assert entries and all(len(e.content) <= 1500 for e in entries)
    assert all("cut here" in e.content or len(e.metadata.get("shown_indices", [])) for e in entries)


class ThreadRecordingEmbedder(CountingEmbedder):
    """The real embedder, noting which thread each call runs on (instrumentation)."""

    def __init__(self, inner):
        super().__init__(inner)
        self.threads: set[int] = set()

    def embed_documents(self, texts):
        self.threads.add(threading.get_ident())
        return super().embed_documents(texts)

    def embed_queries(self, texts):
        self.threads.add(threading.get_ident())
        return super().embed_queries(texts)


def test_engine_calls_run_off_the_event_loop(embedder):
    recording = ThreadRecordingEmbedder(embedder)
    store = SemanticMemoryStore(embedder=recording, embedding="inline")  # add_messages embeds in its own call

    async def scenario():
        loop_thread = threading.get_ident()
        await store.add_messages(distractor_conversation(6), AddMessagesContext(sequence_numbers=list(range(6))))
        await store.search("bicycle repair")
        return loop_thread

    loop_thread = run(scenario())
    assert recording.document_calls and recording.query_calls
    assert loop_thread not in recording.threads


def test_a_store_building_its_memory_embeds_off_the_turn_and_finds_a_batch_at_once(embedder):
    held = RecordingEmbedder(embedder, hold=True)
    store = SemanticMemoryStore(embedder=held)
    assert store.memory.options.embedding == "background"
    batch = [text_message("user", FACT), text_message("assistant", "Noted.")]
    try:
        indices = run(store.add_messages(batch, AddMessagesContext(sequence_numbers=[0, 1])))
        assert held.started.wait(60), "the memory's thread picked the batch up"
        assert held.threads == [WORKER] and store.memory.stats().pending_embedding_count == 2
        entries = run(store.search("grew up in Lisbon"))  # before any vector is stored
        assert entries and entries[0].metadata["hit_indices"][0] == indices[0]
        entries = run(store.search(QUESTION))  # by its meaning: the search embeds the pending messages for itself
        assert entries and FACT in entries[0].content and store.memory.stats().vector_count == 0
    finally:
        held.release.set()
    assert store.memory.embed_pending() == 2, "embed_pending waits for the thread's batch"
    entries = run(store.search(QUESTION))
    assert entries and FACT in entries[0].content and held.threads.count(WORKER) == 1, "the batch embedded once"
    worker = store.memory._queue.thread
    store.close()
    assert not worker.is_alive(), "close stops the thread the store's memory started"


def test_embedding_inline_is_still_an_option_and_a_given_memory_keeps_its_own_and_stays_open(embedder):
    inline = SemanticMemoryStore(embedder=embedder, embedding="inline")
    run(inline.add_messages([text_message("user", FACT)], AddMessagesContext(sequence_numbers=[0])))
    assert inline.memory.stats().pending_embedding_count == 0, "embedded before add_messages returned"
    given = SemanticMemory(embedder=embedder, embedding="background")
    store = SemanticMemoryStore(memory=given, writable=True)
    assert store.memory.options.embedding == "background"
    store.close()  # not its memory: nothing is closed
    recording = RecordingEmbedder(embedder)
    reused = SemanticMemoryStore(memory=SemanticMemory(embedder=recording, embedding="background"), writable=True)
    reused.close()
    run(reused.add_messages([text_message("user", FACT)], AddMessagesContext(sequence_numbers=[0])))
    assert recording.started.wait(60) and recording.threads == [WORKER], "its thread still embeds"
    reused.memory.close()
    inline.close()


KILLED_STORE = """
import asyncio, json, os, threading
from strands.memory import AddMessagesContext
from strands_semantic_memory import SemanticMemoryStore
from tests.support.conversations import text_message
from tests.support.embedders import NeverEmbeds
from tests.support.archives import durable_archive
store = SemanticMemoryStore(embedder=NeverEmbeds(), archive=durable_archive({kind!r}, {path!r}, {uri!r}, {user_id!r}))
batch = [text_message(role, text) for role, text in {batch!r}]
asyncio.run(store.add_messages(batch, AddMessagesContext(sequence_numbers=list(range(len(batch))))))
os.write(1, (json.dumps({{"archived": len(store.memory)}}) + chr(10)).encode())
threading.Event().wait()
"""


@pytest.mark.subprocess
@pytest.mark.parametrize("kind", ["sqlite", "pgvector"])
def test_a_process_killed_before_the_vectors_land_loses_nothing_and_they_are_embedded_at_open(
    kind, embedder, tmp_path, request
):
    path = str(tmp_path / "archive.sqlite3")
    uri = request.getfixturevalue("pg_uri") if kind == "pgvector" else ""
    user_id = new_user_id("killed-store")
    batch = [("user", FACT), ("assistant", "Noted."), *(("user", turn) for turn in planning_turns(1)[:4])]
    script = KILLED_STORE.format(kind=kind, path=path, uri=uri, user_id=user_id, batch=batch)
    lines = killed_after(script, 2)
    assert {"archived": len(batch)} in lines and any("embedding" in line for line in lines), lines

    def open_store(with_embedder, **options):
        return SemanticMemoryStore(embedder=with_embedder, archive=durable_archive(kind, path, uri, user_id), **options)

    inline = open_store(embedder, embedding="inline")  # opens without embedding anything
    assert inline.memory.stats().pending_embedding_count == len(batch), "every message kept, none embedded"
    assert [(m["role"], render_message(m)) for _, m in inline.memory.messages()] == batch
    inline.close()
    recording = RecordingEmbedder(embedder)
    reopened = open_store(recording)
    assert recording.started.wait(60), "opening the archive started embedding it, with no archive or search"
    reopened.memory.embed_pending()
    assert recording.threads[0] == WORKER and reopened.memory.stats().pending_embedding_count == 0
    entries = run(reopened.search(QUESTION))
    assert entries and FACT in entries[0].content
    reopened.close()


@tool
def weather(city: str) -> str:
    """Current weather for a city.

    Args:
        city: The city.
    """
    return f"Sunny and 21 degrees in {city}."


def test_real_agent_archives_tool_traffic_and_finds_the_fact_with_search_memory(archive_factory):  # noqa: F811
    # The user is named, so a new agent (a new session) recalls what an earlier one archived.
    memory = archive_factory(**({} if archive_factory.kind == "pgvector" else {"user_id": "alice"}))
    assert memory.user_id is not None

    # First agent: the conversation is archived verbatim after every invocation, tool calls included.
    def first_responder(messages, system_prompt, is_summary):
        last = messages[-1]
        if any("toolResult" in block for block in last["content"]):
            return "It is sunny in Lyon."
        if "weather" in render_message(last):
            return ToolCall("weather", {"city": "Lyon"}, tool_use_id="weather-1")
        return "Noted."

    first = Agent(
        model=ScriptedModel(first_responder),
        memory_manager=MemoryManager(stores=[SemanticMemoryStore(memory=memory, writable=True)], injection=False),
        tools=[weather],
        callback_handler=None,
    )
    for turn in [
        PLANTED_TURN,
        "What is the weather in Lyon?",
        *[t["content"][0]["text"] for t in distractor_conversation(6)[::2]],
    ]:
        first(turn)
    archived = [m for _, m in memory.messages()]
    assert len(archived) == len(first.messages)
    assert any("toolUse" in b for m in archived for b in m["content"]), "tool calls are archived"
    assert any("toolResult" in b for m in archived for b in m["content"]), "tool results are archived"
    assert any(PLANTED_TURN in render_message(m) for m in archived)

    # Second agent, empty history: Strands' own search_memory tool brings the fact back.
    def second_responder(messages, system_prompt, is_summary):
        last = messages[-1]
        results = [b["toolResult"] for b in last["content"] if "toolResult" in b]
        if results:
            text = render_message(last)
            found = REFERENCE if REFERENCE in text else "nothing"
            return f"Your booking reference is {found}."
        return ToolCall("search_memory", {"query": "booking reference"}, tool_use_id="search-1")

    model = ScriptedModel(second_responder)
    second = Agent(
        model=model,
        memory_manager=MemoryManager(stores=[SemanticMemoryStore(memory=memory, writable=True)]),
        callback_handler=None,
    )
    reply = second("What was my booking reference?")
    assert REFERENCE in str(reply)
    tool_result = render_message(model.chat_requests[-1]["messages"][-1])
    assert REFERENCE in tool_result and "conversation_archive" in tool_result
    # Injection: the first call's user turn carried the archived fact for that call only, never into history.
    first_request_user = render_message(model.chat_requests[0]["messages"][-1])
    assert "<memory>" in first_request_user and REFERENCE in first_request_user
    assert all("<memory>" not in render_message(m) for m in second.messages)


def test_one_archive_serves_manager_hook_tools_and_memory_manager(embedder):
    manager = SemanticSummarizingConversationManager(embedder=embedder)
    manager.memory.add([text_message("user", PLANTED_TURN), text_message("assistant", "Noted.")])
    store = SemanticMemoryStore(memory=manager.memory)
    entries = run(store.search("booking reference"))
    assert REFERENCE in entries[0].content
    assert SemanticMemory is type(store.memory) and store.memory is manager.memory


# ---------------------------------------------------------------------------------------------- through MemoryManager


def injected_entries(request: dict) -> list[str]:
    """The text of each <entry> the model received in the last user message of one request."""
    text = render_message(request["messages"][-1])
    return [part.split("</entry>")[0] for part in text.split("<entry")[1:]]


def recall_agent(store, model, **kwargs):
    return Agent(model=model, memory_manager=MemoryManager(stores=[store]), callback_handler=None, **kwargs)


def test_injected_entries_keep_their_framing_through_strands_escaping(embedder):
    store = SemanticMemoryStore(embedder=embedder, context_radius=1)
    store.memory.add(
        [
            text_message("user", "Compare the two plans for me."),
            text_message("assistant", "Plan A > plan B on cost & speed; see <notes>."),
            text_message("user", PLANTED_TURN),
            text_message("assistant", "Noted: I will remember it exactly."),
        ]
    )
    model = ScriptedModel()
    recall_agent(store, model)("What was my booking reference? And which plan was better, A or B?")
    entries = injected_entries(model.chat_requests[0])
    assert entries and REFERENCE in "".join(entries)
    for entry in entries:
        lines = entry.split(">", 1)[1].strip("\n").splitlines()  # after <entry source="...">
        assert lines, entry
        for line in lines:
            # Every line is the library's label or a quoted archived line: no framing was escaped on the way.
            assert line.startswith(("[Message ", "| ", "[... ")) or line == "|", line
            if line.startswith("[Message "):
                assert "&" not in line and "<" not in line, line
    # Archived text itself is escaped by Strands, as it should be; the "| " quotes arrive as written.
    joined = "\n".join(entries)
    assert "| Plan A &gt; plan B on cost &amp; speed; see &lt;notes&gt;." in joined
    assert "&gt; " + "My booking" not in joined and "| " + PLANTED_TURN in joined
    enrichment = store.last_enrichment
    assert enrichment is not None and enrichment.query.startswith("What was my booking reference?")
    assert [e.content for e in enrichment.entries] and REFERENCE in enrichment.entries[0].content
    assert enrichment.in_context_indices == [] and enrichment.elapsed_ms >= 0


def test_messages_still_in_the_agents_context_are_left_out_until_they_leave(embedder):
    from strands.agent.conversation_manager import SlidingWindowConversationManager

    store = SemanticMemoryStore(embedder=embedder, context_radius=1)
    model = ScriptedModel()
    agent = recall_agent(store, model, conversation_manager=SlidingWindowConversationManager(window_size=8))
    agent(PLANTED_TURN)  # archived after the invocation, and still in the agent's context
    agent("What was my booking reference?")
    assert "<memory>" not in render_message(model.chat_requests[-1]["messages"][-1])
    enrichment = store.last_enrichment
    planted = next(i for i, m in store.memory.messages() if REFERENCE in render_message(m))
    assert enrichment.entries == [] and planted in enrichment.in_context_indices
    assert {left.reason for left in enrichment.left_out} == {"in_context"}
    assert any(planted in left.passage.hit_indices for left in enrichment.left_out)

    for turn in [t["content"][0]["text"] for t in distractor_conversation(12)[::2]]:
        agent(turn)  # the sliding window lets the planted turn go
    assert not any(REFERENCE in render_message(m) for m in agent.messages)
    agent("What was my booking reference?")
    entries = injected_entries(model.chat_requests[-1])
    assert entries and REFERENCE in entries[0]
    enrichment = store.last_enrichment
    assert planted in enrichment.passages[0].hit_indices and planted not in enrichment.in_context_indices
    # The messages the agent still has are not repeated, in any entry.
    active = {render_message(m) for m in agent.messages}
    for passage in enrichment.passages:
        assert not any(render_message(m) in active for m in passage.messages)


def test_last_enrichment_says_what_the_result_limit_left_out(embedder):
    store = SemanticMemoryStore(embedder=embedder, context_radius=0)
    store.memory.add(distractor_conversation(30))
    recall_agent(store, ScriptedModel())("Hello.")  # the store now knows its agent
    entries = run(store.search("the hiking trip and the quarterly budget", {"max_search_results": 1}))
    enrichment = store.last_enrichment
    assert len(entries) == len(enrichment.passages) == 1
    # Hits were searched for beyond the limit (to replace any the agent still sees); the spare ones are named.
    limited = [left for left in enrichment.left_out if left.reason == "max_search_results"]
    assert limited and all(left.passage.score <= enrichment.passages[0].score for left in limited)
    assert run(store.search("   ")) == [] and store.last_enrichment.entries == []
    with pytest.raises(ConfigurationError, match="max_search_results must be an integer >= 1 or None, got 0"):
        run(store.search("hiking", {"max_search_results": 0}))


def test_in_context_messages_are_recognised_as_the_extraction_filter_archived_them():
    from strands_semantic_memory.memory_store._active_context import ActiveContext

    said = {
        "role": "assistant",
        "content": [
            {"text": "Checking the weather."},
            {"toolUse": {"toolUseId": "t1", "name": "weather", "input": {}}},
        ],
    }
    archived = {"role": "assistant", "content": [{"text": "Checking the weather."}], "tracking_id": "x"}
    assert ActiveContext([said], {"toolUse", "toolResult"}).holds(archived)  # a filter that strips tool calls
    assert not ActiveContext([said], set()).holds(archived)  # kept tool calls: not the same message
    assert not ActiveContext([{**said, "role": "user"}], {"toolUse"}).holds(archived)
    assert not ActiveContext([], set())


# ---------------------------------------------------------------------------------------------- the budget


def _filler(i: int, words: int = 40) -> str:
    """A long message about nothing in particular (distinct per ``i``)."""
    topics = ["gardening", "bicycles", "pottery", "sailing", "baking", "chess", "astronomy", "knitting"]
    return f"Filler {i} about {topics[i % len(topics)]}: " + " ".join(f"word{(i * 7 + k) % 97}" for k in range(words))


def _agent_over(store, history, window):
    """An agent whose history is ``history`` and whose model (scripted) declares a window of ``window`` tokens,
    with ``store`` injecting through Strands' ``MemoryManager``; and its model."""
    model = ScriptedModel(max_input_chars=4 * window, context_window_limit=window)
    agent = Agent(
        model=model,
        messages=[dict(m) for m in history],
        memory_manager=MemoryManager(stores=[store], search_tool_config=False),
        callback_handler=None,
    )
    return agent, model


def test_injection_fits_the_room_the_call_leaves_when_the_history_is_near_its_share(embedder):
    from strands_semantic_memory.budget import ContextBudget, history_tokens

    window = 2000  # tokens: 8,000 characters
    # the relevance gate is not under test: every turn may inject, so the room left is what bounds the entries
    store = SemanticMemoryStore(embedder=embedder, tools=False, inject_when="always")
    said = [text_message("user" if i % 2 == 0 else "assistant", f"Booking note {i}: " + _filler(i)) for i in range(40)]
    store.memory.add(said)
    # The agent's history is archived as well (a writable store archives every message) and takes a little more
    # than its share of the window (0.45), so the room left, not the memory's share, bounds the entries.
    history = [
        text_message("user" if i % 2 == 0 else "assistant", f"Ferry booking note {i}: " + _filler(100 + i, 70))
        for i in range(8)
    ]
    store.memory.add([dict(m) for m in history])
    agent, model = _agent_over(store, history, window)
    question = "What did the ferry booking notes say?"  # the best hits are still in the agent's context
    used = history_tokens([*agent.messages, text_message("user", question)])
    assert used > ContextBudget().history_limit(window) and used < window  # near full, still fits on its own

    agent(question)

    assert model.overflows == 0
    request = model.chat_requests[-1]
    sent = sum(len(render_message(m)) for m in request["messages"])
    assert sent <= 4 * window
    entries = injected_entries(request)
    enrichment = store.last_enrichment
    assert entries and len(entries) == len(enrichment.entries)
    room = window - ContextBudget().reply_share * window - used
    assert enrichment.budget_tokens is not None and enrichment.budget_tokens <= room < window * 0.5
    assert 0 < enrichment.tokens <= enrichment.budget_tokens
    # The budget bound the answer: without it, the passages found would not have fitted.
    assert enrichment.budget_left_out_indices or any(left.reason == "budget" for left in enrichment.left_out)
    # Nothing returned is already in the agent's context.
    active = {render_message(m) for m in agent.messages}
    for passage_shown in enrichment.passages:
        assert not any(render_message(m) in active for m in passage_shown.messages)
    assert enrichment.in_context_indices


def test_hits_come_before_neighbours_within_the_budget(embedder):
    from strands_semantic_memory.budget import ContextBudget

    store = SemanticMemoryStore(
        embedder=embedder, context_radius=2, tools=False, budget=ContextBudget(memory_share=0.25, max_memory_tokens=250)
    )
    messages, planted = [], []
    for i in range(30):
        if i in (5, 15, 25):
            planted.append(i)
            text = f"The zebra crossing code number {i} opens the north gate."
        else:
            text = _filler(i, 30)
        messages.append(text_message("user" if i % 2 == 0 else "assistant", text))
    indices = store.memory.add(messages)
    planted = [indices[i] for i in planted]
    model = ScriptedModel(context_window_limit=1000)  # memory: 250 tokens, about 1,000 characters
    Agent(model=model, memory_manager=MemoryManager(stores=[store]), callback_handler=None)("Hello.")

    entries = run(store.search("zebra crossing code north gate"))

    enrichment = store.last_enrichment
    assert entries and enrichment.budget_tokens == 250 and enrichment.tokens <= 250
    shown = {i for w in enrichment.passages for i in w.indices}
    assert set(planted) <= shown  # every hit made it
    left = set(enrichment.budget_left_out_indices)
    assert left and not left & set(planted)  # what did not fit are neighbours only
    # A neighbour shown sits next to a message shown in its passage (never apart from its passage).
    for w in enrichment.passages:
        for i in w.indices:
            assert i in w.hit_indices or i - 1 in w.indices or i + 1 in w.indices
    # The entries carry what the passages show, hits included.
    assert all("zebra crossing code" in entry.content for entry in entries)


def test_a_store_that_does_not_know_its_agent_applies_no_budget(embedder):
    store = SemanticMemoryStore(embedder=embedder, extraction=False)
    store.memory.add([text_message("user", PLANTED_TURN), text_message("assistant", "Noted.")])
    entries = run(store.search("booking reference"))
    assert entries and REFERENCE in entries[0].content
    assert store.last_enrichment.budget_tokens is None and store.last_enrichment.tokens > 0


def test_budget_option_is_validated(embedder):
    from strands_semantic_memory.budget import ContextBudget

    with pytest.raises(ConfigurationError, match=r"budget must be a ContextBudget or None, got float 0\.5"):
        SemanticMemoryStore(embedder=embedder, budget=0.5)
    with pytest.raises(ConfigurationError, match="budget must be a ContextBudget or None, got dict"):
        SemanticMemoryStore(embedder=embedder, budget={"memory_share": 0.5})
    budget = ContextBudget(memory_share=0.3)
    assert SemanticMemoryStore(embedder=embedder, budget=budget).budget is budget


def test_a_squeezed_budget_is_reported_once_with_the_remedy(embedder, caplog):
    window = 2000
    store = SemanticMemoryStore(embedder=embedder, tools=False)
    store.memory.add([text_message("user", f"Booking note {i}: " + _filler(i)) for i in range(10)])
    history = [
        text_message("user" if i % 2 == 0 else "assistant", f"Ferry note {i}: " + _filler(100 + i, 165))
        for i in range(6)
    ]  # about 1,600 tokens of a 2,000-token window: the memory's share (1,000) is squeezed to a few hundred
    agent, model = _agent_over(store, history, window)
    with caplog.at_level(logging.WARNING, logger="strands_semantic_memory.memory_store"):
        agent("What did the booking notes say?")
        first_room = store.last_enrichment.budget_tokens
        agent.messages[:] = [dict(m) for m in history]
        agent("What did the booking notes say?")
    warnings = [r for r in caplog.records if "proactive_compression=True" in r.getMessage()]
    assert len(warnings) == 1
    assert model.overflows == 0
    assert first_room is not None and first_room < 1000 // 4  # the share of a 2,000-token window is 1,000
    assert store.last_enrichment.budget_tokens == first_room  # squeezed again, and not reported again
