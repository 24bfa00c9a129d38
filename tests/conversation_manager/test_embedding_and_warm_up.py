"""The manager keeps embedding out of the user's turn, and loads the model at agent start when asked.

A real ``Agent`` driven by a scripted chat model; the embedders are the bundled model wrapped to record threads.
"""

from __future__ import annotations

import threading

import pytest

from strands_semantic_memory import SemanticMemory, SemanticSummarizingConversationManager
from strands_semantic_memory.embeddings import SentenceTransformerEmbedder
from strands_semantic_memory.embeddings._local import bundled_model_path
from strands_semantic_memory.errors import ConfigurationError
from tests.support.conversations import PLANTED_TURN, REFERENCE, TOPIC_TURNS, make_agent
from tests.support.embedders import RecordingEmbedder, WarmUpRecorder
from tests.support.scripted_model import ScriptedModel

LIMIT = 1200  # characters; the scripted model overflows above it
WORKER = "semantic-memory-embedding"


def _run_until_reduced(manager) -> object:
    agent = make_agent(ScriptedModel(max_input_chars=LIMIT), manager)
    for turn in [PLANTED_TURN, *TOPIC_TURNS]:
        agent(turn)
    assert manager.removed_message_count > 0, "the conversation was reduced"
    return agent


def test_reductions_archive_at_once_and_embed_only_in_the_background_thread(embedder):
    recording = RecordingEmbedder(embedder)
    manager = SemanticSummarizingConversationManager(embedder=recording, preserve_recent_messages=4)
    turn_threads: set[str] = set()
    original = manager.reduce_context

    def reduce_context(agent, e=None, **kwargs):
        turn_threads.add(threading.current_thread().name)
        return original(agent, e, **kwargs)

    manager.reduce_context = reduce_context
    _run_until_reduced(manager)
    assert recording.started.wait(60), "the archived messages were handed to the background thread"
    during_turns = list(recording.threads)
    archived = len(manager.memory)
    assert archived == manager.removed_message_count
    before_search = len(recording.calls)
    assert 0 in [h.index for h in manager.memory.search(REFERENCE, top_k=2)], "searchable before any wait"
    scored = sum(len(texts) for name, texts in recording.calls[before_search:] if name == "MainThread")
    assert turn_threads and WORKER not in turn_threads
    assert set(during_turns) == {WORKER}, "no document was embedded on the turn's thread"
    manager.memory.embed_pending()  # (in this thread: what the background thread has not claimed yet)
    assert manager.memory.stats().pending_embedding_count == 0
    # each message embedded once to be stored; the search embedded the pending ones for itself, at most once more
    assert archived <= recording.documents_embedded <= archived + scored
    manager.memory.close()


def test_inline_embedding_is_still_available(embedder):
    recording = RecordingEmbedder(embedder)
    manager = SemanticSummarizingConversationManager(embedder=recording, preserve_recent_messages=4, embedding="inline")
    _run_until_reduced(manager)
    assert manager.memory.options.embedding == "inline"
    assert manager.memory.stats().pending_embedding_count == 0, "embedded before the reduction returned"
    assert recording.threads and WORKER not in recording.threads


def test_a_ready_memory_keeps_its_own_embedding_option(embedder):
    memory = SemanticMemory(embedder=embedder)
    manager = SemanticSummarizingConversationManager(memory=memory)
    assert manager.memory.options.embedding == "inline"
    with pytest.raises(ConfigurationError, match="embedding"):
        SemanticSummarizingConversationManager(memory=memory, embedding="inline")
    with pytest.raises(ConfigurationError, match="embedding must be one of"):
        SemanticSummarizingConversationManager(embedder=embedder, embedding="later")


def test_warm_up_loads_the_model_in_the_background_when_the_agent_is_built():
    fresh = SentenceTransformerEmbedder(str(bundled_model_path()))
    recorder = WarmUpRecorder(fresh)
    manager = SemanticSummarizingConversationManager(embedder=recorder, warm_up=True)
    assert fresh._model is None, "nothing is loaded before the agent exists"
    make_agent(ScriptedModel(), manager)
    assert recorder.warmed.wait(120), "the warm-up ran"
    assert recorder.warmed_on == ["semantic-memory-warm-up"] and fresh._model is not None
    assert manager.memory.stats().degraded is None


def test_without_warm_up_nothing_is_loaded_at_agent_start():
    fresh = SentenceTransformerEmbedder(str(bundled_model_path()))
    recorder = WarmUpRecorder(fresh)
    make_agent(ScriptedModel(), SemanticSummarizingConversationManager(embedder=recorder))
    assert recorder.warmed_on == [] and fresh._model is None
