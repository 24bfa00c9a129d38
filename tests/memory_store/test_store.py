"""SemanticMemoryStore and the agent it serves: overflows end with less then nothing, one store per agent, archiving
that survives Strands' retries, and searches and archiving that never hold up the event loop.
"""

from __future__ import annotations

import asyncio
import gc

import pytest
from strands import Agent, tool
from strands.memory import AddMessagesContext, MemoryManager

from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.budget import estimate_tokens
from strands_semantic_memory.errors import ConfigurationError
from strands_semantic_memory.memory_store import SemanticMemoryStore
from strands_semantic_memory.testing import ScriptedModel, ToolCall
from tests.support.store import agent_with, injected, text


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


QUESTION = "What did the ferry booking notes say about the pier and the booking code?"


@pytest.mark.parametrize(("limit_chars", "overflows"), [(8000, 1), (3000, 2)], ids=["half-fits", "none-fits"])
def test_an_overflow_ends_the_turn_with_half_then_nothing(ferries, limit_chars, overflows):
    """A model whose real limit is far below the 8,000 tokens it declares, behind Strands' default manager."""
    history = [text("user" if i % 2 == 0 else "assistant", f"Short chat {i} about sailing.") for i in range(14)]
    store = SemanticMemoryStore(memory=ferries)
    model = ScriptedModel(max_input_chars=limit_chars, context_window_limit=8000)
    agent = Agent(model=model, messages=history, memory_manager=MemoryManager(stores=[store]), callback_handler=None)

    assert str(agent(QUESTION)).startswith("Noted.")
    blocks = [estimate_tokens(injected(r)) for r in model.chat_requests]
    assert model.overflows == overflows and len(blocks) == overflows + 1, blocks  # each overflow: one retry
    assert blocks[0] > 2000 and 0 < blocks[1] <= blocks[0] // 2, blocks  # half of what overflowed
    assert store.last_enrichment is not None and store.last_enrichment.overflows == overflows
    if overflows == 2:
        assert blocks[2] == 0, "nothing after the second overflow"
    # The next invocation starts afresh.
    model.requests.clear()
    agent(QUESTION)
    assert estimate_tokens(injected(model.chat_requests[0])) > blocks[0] // 2
    assert len(model.chat_requests) <= overflows + 1


def test_one_store_serves_one_agent_and_stores_may_share_a_memory(embedder):
    store = SemanticMemoryStore()
    alice = agent_with(store, ScriptedModel())
    with pytest.raises(ConfigurationError, match="already serves another agent.*build one store per agent"):
        agent_with(store, ScriptedModel())
    alice("Hello, I am Alice.")  # the store still serves Alice, in her session
    bob = agent_with(SemanticMemoryStore(memory=store.memory), ScriptedModel())
    bob("Hello, I am Bob.")
    sessions = [r.session_id for r in store.memory.records()]
    assert sessions == [alice.session_id] * 2 + [bob.session_id] * 2
    del alice
    gc.collect()
    agent_with(store, ScriptedModel())  # once Alice is gone, the store may serve another agent
    with pytest.raises(ConfigurationError, match="max_search_results"):
        SemanticMemoryStore(max_search_results=0)
    with pytest.raises(ConfigurationError, match="make a new memory"):
        SemanticMemoryStore(memory=store.memory, user_id="alice")
    store.close()


def test_archiving_is_verbatim_with_tool_traffic_and_idempotent_across_retries(embedder, monkeypatch):
    memory = SemanticMemory(embedder=embedder)
    store = SemanticMemoryStore(memory=memory)
    batch = [text("user", "ok"), text("assistant", "ok"), text("user", "ok")]
    first = asyncio.run(store.add_messages(batch, AddMessagesContext(sequence_numbers=[0, 1, 2])))
    assert len(set(first)) == 3, "three messages with the same text are three messages"
    assert asyncio.run(store.add_messages(batch[1:], AddMessagesContext(sequence_numbers=[1, 2]))) == first[1:]
    own = [{**text("user", "mine"), "tracking_id": "t-1"}]
    assert asyncio.run(store.add_messages(own)) == asyncio.run(store.add_messages(own))  # the message's own key
    assert len(memory) == 4

    # Through Strands: a batch committed, then reported failed (a timeout after the commit), is retried whole.
    real_add, calls = memory.add, []

    def add_then_fail(messages, **kwargs):
        calls.append(len(messages))
        indices = real_add(messages, **kwargs)
        if len(calls) == 1:
            raise TimeoutError("the commit's answer was lost")
        return indices

    monkeypatch.setattr(memory, "add", add_then_fail)
    replies = [ToolCall("multiply", {"a": 6, "b": 7}), "It is 42.", "Noted."]
    manager = MemoryManager(stores=[SemanticMemoryStore(memory=memory)])
    agent = Agent(model=ScriptedModel(replies), memory_manager=manager, tools=[multiply], callback_handler=None)
    agent("What is 6 times 7?")
    agent("Thanks.")
    assert calls == [4, 4, 2], "the failed batch was handed over again, whole"
    archived = [r.message for r in memory.records()][4:]  # each message once, in order
    assert [m["content"] for m in archived] == [m["content"] for m in agent.messages]  # tool use and result kept
    assert any("toolResult" in b for m in archived for b in m["content"])


def test_two_agents_at_once_never_hold_up_the_event_loop(embedder):
    stores = [SemanticMemoryStore(), SemanticMemoryStore()]
    agents = [agent_with(store, ScriptedModel(context_window_limit=200_000)) for store in stores]
    for agent in agents:
        agent("Hello.")  # Strands' own first-call costs (imports, tool specs) are not the store's
    prompts = ["My locker code is 4417-PLUM.", "I moved to Harwick Street.", "What is my locker code?"]

    async def talk(agent: Agent) -> None:
        for prompt in prompts:
            await agent.invoke_async(prompt)
            await agent.memory_manager.flush()

    async def measured() -> float:
        loop, done, lateness = asyncio.get_running_loop(), asyncio.Event(), [0.0]

        async def ticker() -> None:
            while not done.is_set():
                started = loop.time()
                await asyncio.sleep(0.01)
                lateness.append(loop.time() - started - 0.01)

        ticking = asyncio.create_task(ticker())
        await asyncio.gather(*(talk(agent) for agent in agents))
        done.set()
        await ticking
        return max(lateness)

    lateness = asyncio.run(measured())
    assert lateness < 0.1, f"the loop was held up for {lateness * 1000:.0f} ms"
    for store in stores:
        assert len(store.memory) == 2 * (1 + len(prompts)) and store.last_enrichment is not None
        store.close()
