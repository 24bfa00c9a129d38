"""Every public constructor refuses a bad option with a ConfigurationError that names the option and the value.

One rule per kind of value (``_validation``): flags are real booleans, counts are integers (not bools, floats or
strings) with a lower bound, scores are cosine similarities in -1..1, memories are ``SemanticMemory`` objects.
"""

from __future__ import annotations

import pytest
from strands import Agent

from strands_semantic_memory import (
    ContextEditor,
    SemanticMemory,
    SemanticMemoryError,
    SemanticMemoryHook,
    SemanticMemoryStore,
    SemanticSummarizingConversationManager,
    memory_tools,
)
from strands_semantic_memory.errors import ConfigurationError
from tests.support.scripted_model import ScriptedModel, default_responder

HOOK_CASES = [
    ({"top_k": -1}, "top_k", "-1"),
    ({"top_k": 0}, "top_k", "0"),
    ({"top_k": True}, "top_k", "True"),
    ({"memory": "not a memory"}, "memory", "'not a memory'"),
    ({"enabled": "no"}, "enabled", "'no'"),
    ({"include_metadata": 1}, "include_metadata", "1"),
    ({"keep_injected_context": None}, "keep_injected_context", "None"),
    ({"show_dates": "yes"}, "show_dates", "'yes'"),
    ({"max_context_length": "2000"}, "max_context_length", "'2000'"),
    ({"max_context_length": 0}, "max_context_length", "0"),
    ({"max_context_tokens": 2.5}, "max_context_tokens", "2.5"),
    ({"context_radius": -1}, "context_radius", "-1"),
    ({"min_score": 1.5}, "min_score", "1.5"),
    ({"min_score": "high"}, "min_score", "'high'"),
]

MANAGER_CASES = [
    ({"preserve_recent_messages": "ten"}, "preserve_recent_messages", "'ten'"),
    ({"preserve_recent_messages": -1}, "preserve_recent_messages", "-1"),
    ({"memory": "not a memory"}, "memory", "'not a memory'"),
    ({"summary_ratio": "0.3"}, "summary_ratio", "'0.3'"),
    ({"summary_ratio": True}, "summary_ratio", "True"),
    ({"pin_first": 1.5}, "pin_first", "1.5"),
    ({"proactive_compression": "yes"}, "proactive_compression", "'yes'"),
    ({"proactive_compression": {"compression_threshold": 1.5}}, "compression_threshold", "1.5"),
    ({"proactive_compression": {"threshold": 0.5}}, "proactive_compression", "'threshold'"),
    ({"summarization_agent": "an agent"}, "summarization_agent", "'an agent'"),
    ({"summarization_agent": print}, "summarization_agent", "'messages'"),
    ({"summarization_system_prompt": 42}, "summarization_system_prompt", "42"),
    ({"semantic_search_top_k": 0}, "semantic_search_top_k", "0"),
    ({"message_context_radius": "2"}, "message_context_radius", "'2'"),
    ({"semantic_search_min_score": 2}, "semantic_search_min_score", "2"),
    ({"retrieval": "fuzzy"}, "retrieval", "'fuzzy'"),
    ({"max_num_archived_messages": 0}, "max_num_archived_messages", "0"),
    ({"embedder": "all-MiniLM-L6-v2"}, "embedder", "'all-MiniLM-L6-v2'"),
    ({"reranker": object()}, "reranker", "object"),
    ({"on_summary_failure": "ignore"}, "on_summary_failure", "'ignore'"),
]

STORE_CASES = [
    ({"memory": "not a memory"}, "memory", "'not a memory'"),
    ({"name": ""}, "name", "''"),
    ({"description": 3}, "description", "3"),
    ({"max_search_results": 0}, "max_search_results", "0"),
    ({"max_entry_chars": 199}, "max_entry_chars", "199"),
    ({"writable": "yes"}, "writable", "'yes'"),
    ({"context_radius": -1}, "context_radius", "-1"),
    ({"min_score": -1.5}, "min_score", "-1.5"),
    ({"show_dates": 1}, "show_dates", "1"),
    ({"tools": "no"}, "tools", "'no'"),
    ({"allow_forget": None}, "allow_forget", "None"),
    ({"inject_when": "sometimes"}, "inject_when", "'sometimes'"),
]


def refused(build, option: str, shown: str) -> ConfigurationError:
    with pytest.raises(ConfigurationError) as raised:
        build()
    message = str(raised.value)
    assert option in message and shown in message, message
    assert isinstance(raised.value, SemanticMemoryError)
    return raised.value


@pytest.mark.parametrize(("options", "option", "shown"), HOOK_CASES)
def test_the_hook_refuses_bad_options(options, option, shown):
    refused(lambda: SemanticMemoryHook(**options), option, shown)


@pytest.mark.parametrize(("options", "option", "shown"), HOOK_CASES)
def test_the_hook_refuses_bad_options_set_later_and_keeps_the_old_value(options, option, shown):
    hook = SemanticMemoryHook()
    ((name, value),) = options.items()
    before = getattr(hook, name)
    refused(lambda: setattr(hook, name, value), option, shown)
    refused(lambda: hook.configure(**options), option, shown)
    assert getattr(hook, name) == before


def test_hook_configure_changes_all_or_nothing():
    hook = SemanticMemoryHook(top_k=2)
    refused(lambda: hook.configure(top_k=5, enabled="no"), "enabled", "'no'")
    assert hook.top_k == 2 and hook.enabled is True
    with pytest.raises(ConfigurationError, match="unknown SemanticMemoryHook option.*'topk'"):
        hook.configure(topk=5)
    hook.configure(top_k=5, enabled=False, min_score=0, context_radius=0)
    assert (hook.top_k, hook.enabled, hook.min_score, hook.context_radius) == (5, False, 0.0, 0)
    hook.enabled = True
    assert hook.enabled is True


def test_the_hook_accepts_the_edges_of_each_range(embedder):
    memory = SemanticMemory(embedder=embedder)
    hook = SemanticMemoryHook(
        top_k=1, context_radius=0, min_score=-1, max_context_length=1, max_context_tokens=1, memory=memory
    )
    assert (hook.top_k, hook.context_radius, hook.min_score, hook.memory) == (1, 0, -1.0, memory)
    assert SemanticMemoryHook(max_context_length=None, top_k=None, min_score=None).max_context_length is None


@pytest.mark.parametrize(("options", "option", "shown"), MANAGER_CASES)
def test_the_manager_refuses_bad_options(options, option, shown):
    refused(lambda: SemanticSummarizingConversationManager(**options), option, shown)


def test_the_manager_refuses_a_summarization_agent_with_a_system_prompt():
    summarizer = Agent(model=ScriptedModel(default_responder), callback_handler=None)
    with pytest.raises(ConfigurationError, match="Cannot provide both summarization_agent and summarization_system"):
        SemanticSummarizingConversationManager(summarization_agent=summarizer, summarization_system_prompt="x")
    manager = SemanticSummarizingConversationManager(summarization_agent=summarizer, summary_ratio=0.1, pin_first=0)
    assert manager.summarization_agent is summarizer and manager.summary_ratio == 0.1


@pytest.mark.parametrize(
    ("options", "attribute", "used"),
    [
        ({"summary_ratio": 0.05}, "summary_ratio", 0.1),
        ({"summary_ratio": 0.95}, "summary_ratio", 0.8),
        ({"pin_first": -2}, "pin_first", 0),
    ],
)
def test_the_manager_clamps_what_strands_clamps_and_warns(options, attribute, used, caplog):
    """A drop-in for Strands' manager accepts what Strands accepts (issue 39, point 12): clamped, with a warning."""
    with caplog.at_level("WARNING", logger="strands_semantic_memory"):
        manager = SemanticSummarizingConversationManager(**options)
    assert getattr(manager, attribute) == used
    ((name, value),) = options.items()
    warned = [r.getMessage() for r in caplog.records if r.name.startswith("strands_semantic_memory")]
    assert any(name in m and repr(value) in m and "clamped" in m for m in warned), warned


def test_the_manager_accepts_a_summarization_agent_with_the_agents_interface():
    """Strands takes any object it can call with ``messages`` and ``system_prompt``; so does this manager."""

    class Summarizer:
        messages: list = []
        system_prompt = None

        def __call__(self, prompt):
            raise AssertionError("not called here")

    summarizer = Summarizer()
    assert SemanticSummarizingConversationManager(summarization_agent=summarizer).summarization_agent is summarizer


@pytest.mark.parametrize(("options", "option", "shown"), STORE_CASES)
def test_the_memory_store_refuses_bad_options(options, option, shown, embedder):
    if "memory" not in options:
        options = {**options, "embedder": embedder}
    refused(lambda: SemanticMemoryStore(**options), option, shown)


@pytest.mark.parametrize(
    ("options", "option", "shown"),
    [
        ({"memory": "not a memory"}, "memory", "'not a memory'"),
        ({"show_ids": "yes"}, "show_ids", "'yes'"),
        ({"max_summary_chars": 0}, "max_summary_chars", "0"),
    ],
)
def test_the_context_editor_refuses_bad_options(options, option, shown):
    refused(lambda: ContextEditor(**options), option, shown)


@pytest.mark.parametrize(
    ("options", "option", "shown"),
    [
        ({"allow_forget": "no"}, "allow_forget", "'no'"),
        ({"show_dates": None}, "show_dates", "None"),
        ({"context_radius": -1}, "context_radius", "-1"),
        ({"min_score": 3}, "min_score", "3"),
        ({"max_output_chars": 999}, "max_output_chars", "999"),
    ],
)
def test_memory_tools_refuse_bad_options(options, option, shown, embedder):
    memory = SemanticMemory(embedder=embedder)
    refused(lambda: memory_tools(memory, **options), option, shown)


def test_memory_tools_name_a_source_that_holds_no_memory():
    refused(lambda: memory_tools("not a memory"), "source", "'not a memory'")


@pytest.mark.parametrize(
    ("options", "option", "shown"),
    [
        ({"embedder": "all-MiniLM-L6-v2"}, "embedder", "'all-MiniLM-L6-v2'"),
        ({"reranker": "cross-encoder"}, "reranker", "'cross-encoder'"),
        ({"top_k": "3"}, "top_k", "'3'"),
    ],
)
def test_semantic_memory_refuses_bad_options(options, option, shown):
    refused(lambda: SemanticMemory(**options), option, shown)


def test_an_embedder_is_checked_without_loading_it():
    class Lazy:
        model_id = "lazy"
        loaded = False

        @property
        def dimension(self) -> int:
            Lazy.loaded = True
            return 3

        def embed_documents(self, texts):  # pragma: no cover - never called here
            raise AssertionError

        def embed_queries(self, texts):  # pragma: no cover - never called here
            raise AssertionError

    memory = SemanticMemory(embedder=Lazy())
    assert memory.embedder.model_id == "lazy" and not Lazy.loaded
