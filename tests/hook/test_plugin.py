"""The hook as a Strands Plugin (``Agent(plugins=[hook])``), beside the hook-provider form (``hooks=[hook]``)."""

from __future__ import annotations

import pytest
from strands import Agent
from strands.hooks import HookProvider
from strands.plugins import Plugin

from strands_semantic_memory import SemanticMemory, SemanticMemoryHook, SemanticSummarizingConversationManager
from strands_semantic_memory.errors import ConfigurationError
from strands_semantic_memory.formatting._block import ARCHIVE_BEGIN
from strands_semantic_memory.messages._text import render_message
from strands_semantic_memory.storage import SemanticStorage
from tests.support.conversations import PLANTED_TURN, REFERENCE, TOPIC_TURNS
from tests.support.scripted_model import ScriptedModel

LIMIT = 1600
QUESTION = "What was my booking reference again?"


def question_sent(embedder, *, as_plugin: bool) -> str:
    """What the model receives for the question after the booking reference was summarized away."""
    model = ScriptedModel(max_input_chars=LIMIT)
    # Embedded inline, so both runs search the same vectors (the manager embeds in the background by default).
    memory = SemanticMemory(embedder=embedder, top_k=2, context_radius=1, embedding="inline")
    manager = SemanticSummarizingConversationManager(memory=memory, preserve_recent_messages=4)
    hook = SemanticMemoryHook()
    wiring = {"plugins": [hook]} if as_plugin else {"hooks": [hook]}
    agent = Agent(model=model, conversation_manager=manager, callback_handler=None, **wiring)
    for turn in [PLANTED_TURN, *TOPIC_TURNS]:
        agent(turn)
    assert REFERENCE not in "\n".join(render_message(m) for m in agent.messages)
    model.max_input_chars = LIMIT + 800
    agent(QUESTION)
    return render_message(model.chat_requests[-1]["messages"][-1])


def test_the_plugin_form_injects_exactly_as_the_hook_form(embedder):
    as_plugin = question_sent(embedder, as_plugin=True)
    assert as_plugin.count(ARCHIVE_BEGIN) == 1, "registered once: one block"
    assert REFERENCE in as_plugin and as_plugin.endswith(QUESTION)
    assert as_plugin == question_sent(embedder, as_plugin=False)


def test_the_hook_is_a_plugin_and_a_hook_provider():
    hook = SemanticMemoryHook(memory=SemanticMemory())
    assert isinstance(hook, Plugin) and isinstance(hook, HookProvider)
    assert hook.name == "strands-semantic-memory:hook"
    assert hook.hooks == [] and hook.tools == []


def test_storage_gives_the_hook_its_memory(embedder):
    storage = SemanticStorage(embedder=embedder)
    assert SemanticMemoryHook(storage=storage).memory is storage.memory
    assert SemanticMemoryHook(storage=storage.namespace("team"), memory=storage.memory).memory is storage.memory
    with pytest.raises(ConfigurationError, match="two different memories"):
        SemanticMemoryHook(storage=storage, memory=SemanticMemory(embedder=embedder))
    with pytest.raises(ConfigurationError, match="storage must be a SemanticStorage, got str"):
        SemanticMemoryHook(storage="stash")  # type: ignore[arg-type]
