"""What a turn gets from SemanticMemoryStore through a real Agent and Strands' MemoryManager, with the real model.

Recall in a new session of the same user; the relevance gate (unrelated prompts get nothing, the model's own
search_memory is never gated); and the budget's worth with Strands' default options (issue 48, point 2: one entry
per passage cut a 2,500-token budget to about 750 tokens with Strands' default of 5 entries).
"""

from __future__ import annotations

import html
import json
import re
import statistics

import pytest
from strands import Agent
from strands.agent.conversation_manager import SlidingWindowConversationManager
from strands.memory import MemoryManager

from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.budget import ContextBudget, estimate_tokens
from strands_semantic_memory.memory_store import SemanticMemoryStore
from strands_semantic_memory.testing import ScriptedModel, ToolCall
from tests.support.store import agent_with, injected, text

ARCHIVED = [
    "I'm planning a trip to Lisbon with my sister Ana for the first week of May.",
    "Lovely. Do you want help with the hotel, the flights, or an itinerary?",
    "We booked the Hotel Avenida Palace near Rossio, five nights from May 2nd.",
    "Good choice: Rossio is central, and the tram 28 stop is a short walk away.",
    "Ana is vegetarian, so I need restaurants near the hotel that have good vegetarian dishes.",
    "Try Ao 26 Vegan Food Project in Chiado and Jardim das Cerejas near the Baixa.",
    "Also, my daughter Maya has her violin recital on Friday June 14th at 6 pm in the school hall.",
    "Noted: Maya's violin recital, Friday June 14th, 6 pm, school hall.",
    "She is playing the Bach Gavotte in D and is nervous about the fast middle section.",
    "Slow practice with a metronome at 60 and then 72 usually helps with that passage.",
    "At work I'm fixing a bug in our Rust service: a borrow checker error in the cache module.",
    "Share the error: usually a reference outlives the data it borrows from the cache map.",
    "The error is E0502, cannot borrow the cache as mutable because it is also borrowed as immutable.",
    "Clone the key before the insert, or use the entry API so there is only one mutable borrow.",
    "The entry API fixed it. The release is planned for Wednesday after the code review with Priya.",
    "Great. Priya's review on Wednesday, then the release.",
    "My landlord says the boiler will be replaced on the 20th; the technician comes at 8 in the morning.",
    "I'll remember: boiler replacement on the 20th, technician at 8 am.",
    "For the garden I bought tomato seedlings, San Marzano, and basil to plant next to them.",
    "San Marzano tomatoes like full sun; basil beside them is a classic companion planting.",
]
RELATED = [
    ("Which hotel did we book in Lisbon?", "Avenida Palace"),
    ("When is Maya's violin recital?", "June 14th"),
    ("What was the Rust borrow error in the cache module?", "E0502"),
    ("When does the technician come to replace the boiler?", "boiler"),
]
UNRELATED = [
    "What is 17 times 23?", "Write a haiku about autumn leaves.", "How do I boil an egg so the yolk stays soft?",
    "Translate 'good morning, how are you' into Italian.", "What is the capital of Australia?",
    "Explain how vaccines train the immune system.", "Give me three names for a pet hamster.",
    "How far is the Moon from the Earth?", "What is the difference between a virus and a bacterium?",
    "Recommend a board game for four players.", "Who painted the Mona Lisa?", "How many legs does a spider have?",
    "Write a limerick about a cat who loves jazz.", "What does the stock market index S&P 500 measure?",
    "How do noise-cancelling headphones work?", "Suggest a name for a coffee shop.", "Why is the sky blue?",
    "What is the boiling point of water at high altitude?", "List the planets of the solar system.",
    "How do I convert Celsius to Fahrenheit?",
]  # fmt: skip
UNCERTAIN = ContextBudget().uncertain_memory_tokens


@pytest.fixture
def archived(embedder) -> SemanticMemory:
    """An earlier session's conversation (20 messages, no session of the agent's), embedded."""
    memory = SemanticMemory(embedder=embedder, embedding="inline")
    memory.add([text("user" if i % 2 == 0 else "assistant", t) for i, t in enumerate(ARCHIVED)])
    return memory


def test_a_fact_told_in_one_session_reaches_the_model_in_a_new_session_of_the_same_user(embedder, tmp_path):
    def chat(user: str) -> tuple[Agent, SemanticMemoryStore, ScriptedModel]:
        store = SemanticMemoryStore(archive_path=tmp_path / f"{user}.db", user_id=user)
        model = ScriptedModel(context_window_limit=200_000)
        return agent_with(store, model), store, model

    monday, store, _ = chat("alice")
    monday("My storage locker code is 4417-PLUM; the locker is on Harwick Street.")
    store.close()
    friday, store, model = chat("alice")
    assert friday.session_id != monday.session_id
    friday("What is the code of my storage locker?")
    assert "4417-PLUM" in injected(model.chat_requests[-1])
    assert store.last_enrichment is not None and store.last_enrichment.source == "injection"
    store.close()
    # Another user's file holds none of it.
    bob, store, model = chat("bob")
    bob("What is the code of my storage locker?")
    assert injected(model.chat_requests[-1]) == ""
    store.close()


def test_a_request_about_the_user_gets_their_own_statements_first_and_the_world_gets_nothing(embedder, tmp_path):
    def chat() -> tuple[Agent, SemanticMemoryStore, ScriptedModel]:
        store = SemanticMemoryStore(archive_path=tmp_path / "dana.db", user_id="dana")
        model = ScriptedModel(context_window_limit=200_000)
        return agent_with(store, model), store, model

    first, store, _ = chat()
    first("Can you reword this note to my neighbour? Also, I'm vegetarian, so the barbecue invite is awkward.")
    first("How many kilometres are in a mile?")
    store.memory.embed_pending()  # a process that lived on embeds in the background
    store.close()
    second, store, _ = chat()
    second("Actually I started eating fish again, so I'm pescatarian now.")
    store.memory.embed_pending()
    store.close()
    third, store, model = chat()
    third("What should I cook for dinner this weekend?")
    block = html.unescape(injected(model.chat_requests[-1]))
    assert store.last_enrichment is not None and store.last_enrichment.entries[0].metadata.get("about_user")
    assert 0 <= block.find("pescatarian now") < block.find("I'm vegetarian")  # the latest first
    third("Who painted the Mona Lisa?")
    assert "pescatarian" not in injected(model.chat_requests[-1])
    store.close()


def test_a_statement_the_call_still_holds_is_not_repeated(embedder, tmp_path):
    store = SemanticMemoryStore(archive_path=tmp_path / "finn.db", user_id="finn")
    model = ScriptedModel(context_window_limit=200_000)
    agent = agent_with(store, model)
    agent("My booking reference is BK-7731-QZ for the Lisbon flight.")
    store.memory.embed_pending()
    agent("What was my booking reference?")
    assert "BK-7731-QZ" not in injected(model.chat_requests[-1])  # the agent's own context has it
    store.close()


def test_an_unnamed_memory_recalls_only_the_agents_own_session(embedder):
    memory = SemanticMemory(embedder=embedder, embedding="inline")
    first = agent_with(SemanticMemoryStore(memory=memory), ScriptedModel(context_window_limit=200_000))
    first("My storage locker code is 4417-PLUM; the locker is on Harwick Street.")
    model = ScriptedModel(context_window_limit=200_000)
    agent_with(SemanticMemoryStore(memory=memory, inject_when="always"), model)("What is my storage locker code?")
    assert injected(model.chat_requests[-1]) == "" and len(memory) == 4  # each turn archived in its own session


def test_what_the_agent_still_holds_is_left_out_and_comes_back_once_it_left(embedder):
    store = SemanticMemoryStore(inject_when="always")
    model = ScriptedModel(context_window_limit=200_000)
    agent = Agent(model=model, memory_manager=MemoryManager(stores=[store]), callback_handler=None,
                  conversation_manager=SlidingWindowConversationManager(window_size=4))  # fmt: skip
    agent("My booking reference is BK-7731-QZ; my train leaves at 9:10.")
    agent("What was my booking reference?")
    assert injected(model.chat_requests[-1]) == "", "the model sees the reference in its context already"
    for topic in ["stacks", "queues", "heaps"]:
        agent(f"Explain {topic} in one sentence.")
    agent("What was my booking reference?")
    assert "BK-7731-QZ" in injected(model.chat_requests[-1])
    assert all("BK-7731-QZ" not in str(m) for m in agent.messages[:-2])
    store.close()


def test_unrelated_prompts_get_nothing_and_related_ones_keep_their_facts(archived):
    store = SemanticMemoryStore(memory=archived)
    model = ScriptedModel(context_window_limit=200_000)
    agent = agent_with(store, model, search_tool_config=False)
    tokens = []
    for prompt in UNRELATED:
        agent(prompt)
        record = store.last_enrichment
        assert record is not None and record.source == "injection" and record.gated and record.query == prompt
        assert estimate_tokens(injected(model.chat_requests[-1])) == record.tokens
        tokens.append(record.tokens)
    for prompt, fact in RELATED:
        agent(prompt)
        assert store.last_enrichment is not None and store.last_enrichment.relevance == "relevant", prompt
        assert fact in injected(model.chat_requests[-1]), prompt
    # Most unrelated prompts get nothing; one that resembles the archive a little gets at most the uncertain cap.
    assert tokens.count(0) >= 0.8 * len(UNRELATED) and max(tokens) <= UNCERTAIN, list(zip(UNRELATED, tokens))
    # Ungated, each of them would have cost far more.
    ungated = SemanticMemoryStore(memory=archived, inject_when="always")
    agent = agent_with(ungated, ScriptedModel(context_window_limit=200_000), search_tool_config=False)
    always = []
    for prompt in UNRELATED[:5]:
        agent(prompt)
        assert ungated.last_enrichment is not None
        always.append(ungated.last_enrichment.tokens)
    assert min(always) > UNCERTAIN and statistics.mean(always) > 4 * statistics.mean(tokens[:5]), always


def test_the_models_own_search_memory_is_not_gated(archived):
    question = "How do I boil an egg so the yolk stays soft?"

    def responder(messages, system_prompt, is_summary):
        answered = any("toolResult" in block for block in messages[-1]["content"])
        return "Done." if answered else ToolCall("search_memory", {"query": question})

    store = SemanticMemoryStore(memory=archived)
    model = ScriptedModel(responder, context_window_limit=200_000)
    agent = agent_with(store, model)
    agent(question)
    assert injected(model.chat_requests[0]) == "", "Strands' injection for the unrelated turn was gated"
    record = store.last_enrichment
    assert record is not None and record.source == "request" and not record.gated and record.entries
    assert record.relevance in ("unrelated", "uncertain")  # measured all the same
    results = [b["toolResult"] for m in agent.messages for b in m["content"] if "toolResult" in b]
    assert [item["content"] for item in json.loads(results[0]["content"][0]["text"])] == [
        e.content for e in record.entries
    ]


def test_strands_default_options_deliver_the_budgets_worth(ferries):
    """``MemoryManager(stores=[store])`` exactly as the guide writes it, against ``injection={"max_entries": 50}``."""
    question = "What did the ferry booking notes say about the pier and the booking code?"
    delivered = {}
    for label, options in (("default", {}), ("fifty", {"injection": {"max_entries": 50}})):
        store = SemanticMemoryStore(memory=ferries)
        model = ScriptedModel(context_window_limit=200_000)
        agent_with(store, model, **options)(question)
        block, record = injected(model.chat_requests[-1]), store.last_enrichment
        assert record is not None and record.budget_tokens == ContextBudget().max_memory_tokens  # a fresh session
        assert estimate_tokens(block) == record.tokens <= record.budget_tokens, label
        entries = [html.unescape(e) for e in re.findall(r"<entry[^>]*>(.*?)</entry>", block, re.DOTALL)]
        assert [e.content for e in record.entries] == entries
        delivered[label] = (len(entries), sum(estimate_tokens(e) for e in entries))
    (count, tokens), (fifty_count, fifty_tokens) = delivered["default"], delivered["fifty"]
    assert count == 5 < fifty_count, delivered  # fewer, fuller entries
    assert tokens >= 0.98 * fifty_tokens and tokens >= 0.9 * ContextBudget().max_memory_tokens, delivered
