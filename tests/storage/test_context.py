"""What the hook brings back from a storage, and a real Agent with Strands' ContextManager, SemanticStorage and the
hook: a fact summarized away comes back by meaning."""

from __future__ import annotations

import asyncio
import json

from strands import Agent
from strands.experimental.context_manager import ContextManager
from strands.storage.search import KeywordSearchStrategy

from strands_semantic_memory import SemanticMemoryHook, memory_tools
from strands_semantic_memory.formatting._block import ARCHIVE_BEGIN, ARCHIVE_END, QUESTION_PREFIX
from strands_semantic_memory.messages import render_message
from strands_semantic_memory.retrieval import Passage
from strands_semantic_memory.storage import BudgetSummarization
from strands_semantic_memory.storage._context import MAX_EXTRA_HITS, TurnScope
from strands_semantic_memory.storage._entries import ROLE, entry_message
from tests.support.context_manager import FACT, QUESTION, SUMMARY_PROMPT_START, planning_turns
from tests.support.scripted_model import ScriptedModel, ToolCall

TOPICS = planning_turns(2)


def stored(key: str, text: str) -> dict:
    return entry_message(key, text.encode(), indexed=True)


def passage(indices: list[int], messages: list[dict], hits: list[int], scores: list[float]) -> Passage:
    return Passage(
        start=indices[0],
        end=indices[-1],
        messages=messages,
        hit_indices=hits,
        score=max(scores) + 0.1 * (sum(scores) - max(scores)),
        indices=indices,
        hit_scores=scores,
        roles=[m["role"] for m in messages],
        timestamps=[float(i) for i in indices],
    )


def test_a_turn_keeps_entries_the_context_no_longer_holds_within_its_view():
    context = [{"role": "user", "content": [{"text": "still in context"}]}]
    scope = TurnScope.of("team/", context, top_k=2)
    assert scope.present == frozenset({"still in context"})
    assert scope.depth == 3
    messages = [
        stored("team/a", "left the context"),
        stored("team/b", "still in context"),
        stored("other/c", "another namespace"),
        stored("team/d", ""),
        {"role": "user", "content": [{"text": "a conversation message"}]},
    ]
    found = scope.passages([passage([0, 1, 2, 3, 4], messages, [0, 1], [0.5, 0.9])])
    assert len(found) == 1
    kept = found[0]
    assert kept.indices == [0] and kept.hit_indices == [0] and kept.hit_scores == [0.5]
    assert kept.score == 0.5, "a passage that lost its best hit is worth its remaining hits"
    assert kept.roles == [ROLE] and kept.timestamps == [0.0] and (kept.start, kept.end) == (0, 0)
    root = TurnScope.of("", context, top_k=2).passages([passage([0, 1, 2, 3, 4], messages, [0, 1], [0.5, 0.9])])
    assert root[0].indices == [0, 2, 4], "the whole storage, and a shared memory's own messages, on the root view"


def test_a_turn_keeps_the_best_passages_up_to_top_k_hits_in_conversation_order():
    scope = TurnScope.of("", [], top_k=2)
    passages = [
        passage([0], [stored("a", "zero")], [0], [0.2]),
        passage([5], [stored("b", "five")], [5], [0.9]),
        passage([9], [stored("c", "nine")], [9], [0.6]),
        passage([12], [stored("d", "twelve")], [12], [0.1]),
    ]
    assert [w.start for w in scope.passages(passages)] == [5, 9]
    only_in_context = TurnScope.of("", [{"role": "user", "content": [{"text": "five"}]}], top_k=2)
    assert [w.start for w in only_in_context.passages(passages)] == [0, 9]
    assert scope.passages([passage([1], [stored("e", "x")], [1], [0.4])])[0].score == 0.4, "untouched passages keep it"


def test_a_turn_keeps_the_best_hits_not_the_passages_with_most_hits():
    scope = TurnScope.of("", [], top_k=2)
    run = [stored(key, key) for key in "abcd"]
    crowded = passage([0, 1, 2, 3], run, [0, 1, 2, 3], [0.5, 0.45, 0.4, 0.3])  # passage score 0.615
    strong = passage([9], [stored("e", "e")], [9], [0.6])
    kept = scope.passages([crowded, strong])
    assert [w.start for w in kept] == [0, 9], "the strongest single hit is kept beside a crowded passage"
    assert kept[0].hit_indices == [0] and kept[0].hit_scores == [0.5] and kept[0].score == 0.5
    assert kept[0].indices == [0, 1, 2, 3], "the passage's other entries stay, as neighbours"
    tied = TurnScope.of("", [], top_k=1).passages([passage([4], [stored("f", "f")], [4], [0.6]), strong])
    assert [w.start for w in tied] == [4], "ties: the earlier entry"


def test_a_large_context_widens_the_search_by_at_most_max_extra_hits():
    context = [{"role": "user", "content": [{"text": f"message {n}"}]} for n in range(MAX_EXTRA_HITS + 50)]
    assert TurnScope.of("", context, top_k=3).depth == 3 + MAX_EXTRA_HITS


def responder(messages, system_prompt, is_summary):
    if system_prompt and system_prompt.startswith(SUMMARY_PROMPT_START):
        return "The user planned several household and work items."
    return "Noted."


def context_managed_agent(storage, model, **kwargs):
    """The documented setup: the budget's summarization strategy, the storage, and the hook as a plugin."""
    hook = SemanticMemoryHook(storage=storage)
    agent = Agent(
        model=model,
        context_manager=ContextManager(strategies=[BudgetSummarization()]),
        storage=storage,
        plugins=[hook],
        callback_handler=None,
        **kwargs,
    )
    return agent, hook


def test_a_fact_summarized_away_comes_back_by_meaning(make_storage):
    storage = make_storage()
    model = ScriptedModel(responder, context_window_limit=1000)
    agent, hook = context_managed_agent(storage, model)
    agent("Hello, let's get organised today.")  # message 0: Strands' summarization never removes it
    agent(FACT)
    for turn in TOPICS:
        agent(turn)

    in_context = "\n".join(render_message(m) for m in agent.messages)
    assert "Lisbon" not in in_context, "the fact left the context"
    assert "[Summarized:" in in_context
    assert any((r["system_prompt"] or "").startswith(SUMMARY_PROMPT_START) for r in model.requests)
    keyword_keys = [r.key for r in asyncio.run(KeywordSearchStrategy().search(storage, QUESTION))]
    stash_keys = asyncio.run(storage.list(""))
    fact_key = next(k for k in stash_keys if json.loads(asyncio.run(storage.read(k))) == {"text": FACT})
    assert fact_key not in keyword_keys, "Strands' keyword search misses the paraphrase"
    storage.memory.embed_pending()  # the stash's vectors land off the turns; a test waits for them

    agent(QUESTION)

    sent = render_message(model.requests[-1]["messages"][-1])
    lines = sent.split("\n")
    block = lines[lines.index(ARCHIVE_BEGIN) + 1 : lines.index(ARCHIVE_END)]
    assert f"> {FACT}" in block
    assert sent.endswith(f"{QUESTION_PREFIX}{QUESTION}")
    assert not any(QUESTION in line or TOPICS[-1] in line for line in block), "nothing still in context comes back"
    assert any(FACT in render_message(m) for w in hook.last_enrichment.passages for m in w.messages)
    assert render_message(agent.messages[-2]) == QUESTION, "the history keeps the user's own words"


def test_the_conversation_tools_search_the_storage(make_storage):
    storage = make_storage()

    def scripted(messages, system_prompt, is_summary):
        last = render_message(messages[-1])
        if last.endswith(QUESTION):
            return ToolCall("conversation_search", {"query": QUESTION})
        if last.startswith("[tool result"):
            return "Your grandmother grew up in Lisbon."
        return "Noted."

    model = ScriptedModel(scripted, context_window_limit=100_000)
    agent, _ = context_managed_agent(storage, model, tools=[*memory_tools(storage)])
    agent(FACT)
    for turn in TOPICS[:3]:
        agent(turn)
    storage.memory.embed_pending()  # the stash's vectors land off the turns; a test waits for them
    agent(QUESTION)
    results = [
        block["toolResult"]
        for message in agent.messages
        for block in message["content"]
        if "toolResult" in block and block["toolResult"]["toolUseId"] == "tool-1"
    ]
    assert len(results) == 1
    assert FACT in render_message({"role": "user", "content": [{"toolResult": results[0]}]})
