"""Background embedding: archive returns after the commit, a daemon thread embeds, nothing is ever lost.

Real model throughout: the embedders are the bundled model wrapped to record, pause or fail (not mocks).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence

import pytest

from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.embeddings import SentenceTransformerEmbedder, Vectors
from strands_semantic_memory.errors import ModelUnavailableError
from tests.support.conversations import text_message
from tests.support.embedders import CountingEmbedder, FlakyEmbedder, RecordingEmbedder
from tests.support.processes import killed_after, run_script

WORKER = "semantic-memory-embedding"


def test_archive_returns_before_embedding_and_lexical_search_finds_the_message_at_once(make_memory, embedder):
    held = RecordingEmbedder(embedder, hold=True)
    memory = make_memory(embedder=held, embedding="background")
    try:
        indices = memory.add([text_message("user", "my locker code is QX-5521"), text_message("assistant", "ok")])
        assert held.started.wait(60), "the background thread picked the batch up"
        assert held.threads == [WORKER] and memory.stats().pending_embedding_count == 2
        hits = memory.search("locker code QX-5521")  # hybrid, while the message has no vector yet
        assert hits and hits[0].index == indices[0] and hits[0].similarity is None
    finally:
        held.release.set()
    assert memory.embed_pending() == 2, "embed_pending waits for the batch the thread has in hand"
    assert memory.stats().pending_embedding_count == 0 and memory.stats().vector_count == 2
    hits = memory.search("locker code QX-5521")
    assert hits[0].index == indices[0] and hits[0].similarity is not None
    assert held.document_calls == 1 and held.threads == [WORKER], "embedded once, never on the caller's thread"
    memory.close()


def test_searches_leave_pending_messages_to_the_background_thread(embedder):
    held = RecordingEmbedder(embedder, hold=True)
    memory = SemanticMemory(embedder=held, embedding="background")
    memory.add([text_message("user", f"note {i} about the garden") for i in range(3)])
    assert held.started.wait(60)
    memory.add([text_message("user", "a fourth note about the garden")])  # arrives while the batch is held
    for _ in range(3):
        assert memory.search("garden")
    assert held.threads == [WORKER], "no search embedded a document"
    held.release.set()
    assert memory.embed_pending() == 4
    assert held.document_calls == 2 and held.documents_embedded == 4, "the later message in its own batch, once"
    memory.close()


def test_configure_switches_a_memory_to_background_embedding(embedder):
    recording = RecordingEmbedder(embedder)
    memory = SemanticMemory(embedder=recording)
    memory.add([text_message("user", "embedded inline")])
    assert recording.threads == ["MainThread"]
    recording.started.clear()
    recording.release.clear()  # holds the next call until the test looks at it
    memory.configure(embedding="background")
    memory.add([text_message("user", "embedded in the background")])
    assert recording.started.wait(60) and recording.threads == ["MainThread", WORKER]
    recording.release.set()
    assert memory.embed_pending() == 1
    memory.close()


class SwitchableEmbedder(RecordingEmbedder):
    """The real model behind a switch, like an embedding service that goes down (``failing``)."""

    def __init__(self, inner) -> None:
        super().__init__(inner)
        self.failing = False

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        if self.failing:
            self.threads.append(threading.current_thread().name)
            self.started.set()
            raise ConnectionError("embedding service unavailable")
        return super().embed_documents(texts)


def test_a_failure_in_the_background_is_logged_once_and_loses_nothing(embedder, caplog):
    flaky = SwitchableEmbedder(embedder)
    flaky.failing = True
    memory = SemanticMemory(embedder=flaky, embedding="background", embedding_retry_interval=3600)
    with caplog.at_level(logging.WARNING, logger="strands_semantic_memory.engine._embedding_queue"):
        memory.add([text_message("user", "the wifi password is hunter2-blue")])
        assert flaky.started.wait(60)
        memory._queue.close()  # the thread finishes its failing run, then stops
    failures = [r for r in caplog.records if "embedding failed" in r.getMessage()]
    assert len(failures) == 1 and failures[0].levelno == logging.WARNING
    assert memory.stats().pending_embedding_count == 1 and memory.stats().last_embedding_error
    assert [h.index for h in memory.search("wifi password")] == [0], "still found, lexically"
    flaky.failing = False
    assert memory.embed_pending() == 1 and memory.stats().pending_embedding_count == 0
    assert memory.stats().last_embedding_error is None and flaky.threads == [WORKER, "MainThread"]


def test_repeated_failures_in_the_background_warn_once(embedder, caplog):
    flaky = FlakyEmbedder(embedder)
    flaky.failing = True
    memory = SemanticMemory(embedder=flaky, embedding="background", embedding_retry_interval=0)
    with caplog.at_level(logging.DEBUG, logger="strands_semantic_memory.engine._embedding_queue"):
        for i in range(3):
            memory.add([text_message("user", f"message {i}")])
            with pytest.raises(Exception, match="unavailable"):
                memory.embed_pending()  # a failing run in this thread as well: the same streak of failures
        memory.close()
    failures = [r for r in caplog.records if "embedding failed" in r.getMessage()]
    assert failures and [r.levelno for r in failures].count(logging.WARNING) == 1
    assert memory.stats().pending_embedding_count == 3


def _stop_requested(queue) -> None:
    """Wait until ``close`` (in another thread) has asked the embedding thread to stop."""
    for _ in range(60_000):
        if queue._stopping:
            return
        time.sleep(0.001)
    raise AssertionError("close never asked the embedding thread to stop")


def test_close_lets_the_batch_in_hand_finish_and_keeps_the_rest_pending(embedder):
    held = RecordingEmbedder(embedder, hold=True)
    memory = SemanticMemory(embedder=held, embedding="background")
    memory.add([text_message("user", "first batch")])
    assert held.started.wait(60)
    memory.add([text_message("user", "second batch, still waiting")])
    queue = memory._queue
    worker = queue._worker
    closer = threading.Thread(target=memory.close)
    closer.start()
    _stop_requested(queue)  # close now waits for the batch the thread holds
    held.release.set()
    closer.join(120)
    assert not closer.is_alive() and not worker.is_alive() and not queue.background
    assert held.document_calls == 1 and memory.stats().pending_embedding_count == 1 and len(memory) == 2
    assert memory.embed_pending() == 1, "what the thread left is embedded on request"


def test_a_batch_still_embedding_when_close_stops_waiting_is_dropped_and_the_closed_store_never_touched(
    make_memory, embedder, caplog
):
    held = RecordingEmbedder(embedder, hold=True)
    memory = make_memory(embedder=held, embedding="background")
    store = memory.archive
    memory.add([text_message("user", "my locker code is QX-5521")])
    assert held.started.wait(60)
    queue = memory._queue
    worker = queue._worker
    with caplog.at_level(logging.DEBUG, logger="strands_semantic_memory"):
        queue.close(timeout=0)  # memory.close() with a batch that outlasts its wait: the thread still embeds
        store.close()
        held.release.set()
        worker.join(60)
    assert not worker.is_alive()
    assert not [r for r in caplog.records if "storing vectors failed" in r.getMessage()], "no call on the closed store"
    assert any("closed during a batch" in r.getMessage() for r in caplog.records)
    if type(store).__name__ == "PostgresArchive":
        from strands_semantic_memory.archives.postgres import PostgresArchive

        assert store._connections._pool is None, "the thread reopened no connection pool"
        store = PostgresArchive(store.dsn, store.namespace)
    elif type(store).__name__ == "SqliteArchive":
        from strands_semantic_memory.archives import SqliteArchive

        store = SqliteArchive(store.path)
    else:
        assert memory.stats().pending_embedding_count == 1, "the dropped batch is still pending"
        return
    reopened = SemanticMemory(embedder=embedder, archive=store)
    assert len(reopened) == 1 and reopened.stats().pending_embedding_count == 1, "kept, waiting for its vector"
    assert reopened.embed_pending() == 1
    reopened.close()


def test_close_called_while_holding_the_store_lock_returns_and_the_thread_then_stops(embedder):
    held = RecordingEmbedder(embedder, hold=True)
    memory = SemanticMemory(embedder=held, embedding="background")
    memory.add([text_message("user", "my locker code is QX-5521")])
    assert held.started.wait(60)
    queue, worker = memory._queue, memory._queue._worker
    with memory._archive_lock:  # e.g. a caller inside a write transaction: the thread's store call must wait
        held.release.set()
        closer = threading.Thread(target=queue.close, kwargs={"timeout": 0})
        closer.start()
        closer.join(60)
        assert not closer.is_alive(), "close did not wait for the thread's store call to get the lock"
    worker.join(60)
    assert not worker.is_alive() and memory.stats().pending_embedding_count == 1, "the batch stays pending"


def test_exit_asks_every_thread_to_stop_before_waiting_for_any(embedder, monkeypatch):
    import weakref

    from strands_semantic_memory.engine import _embedding_queue

    monkeypatch.setattr(_embedding_queue, "_live_queues", weakref.WeakSet())  # only this test's threads
    held = RecordingEmbedder(embedder, hold=True)
    memories = [SemanticMemory(embedder=held, embedding="background") for _ in range(2)]
    for memory in memories:
        memory.add([text_message("user", "the garden needs water")])
    assert held.started.wait(60)
    stopper = threading.Thread(target=_embedding_queue._stop_all)
    stopper.start()
    for memory in memories:
        _stop_requested(memory._queue)  # both asked while the first batch still holds the embedder
    held.release.set()
    stopper.join(120)
    assert not stopper.is_alive() and not any(m._queue._worker and m._queue._worker.is_alive() for m in memories)
    for memory in memories:
        memory.close()


def test_inline_mode_embeds_before_archive_returns_on_the_callers_thread(embedder):
    recording = RecordingEmbedder(embedder)
    memory = SemanticMemory(embedder=recording)
    memory.add([text_message("user", "inline by default")])
    assert recording.threads == [threading.current_thread().name] and memory.stats().pending_embedding_count == 0
    assert memory._queue._worker is None, "no background thread was started"


def test_an_unavailable_model_degrades_to_lexical_search_visibly_and_is_not_retried(tmp_path, caplog):
    empty = tmp_path / "empty-model"
    empty.mkdir()
    counting = CountingEmbedder(SentenceTransformerEmbedder(str(empty)))  # found, but nothing loads from it
    memory = SemanticMemory(embedder=counting, embedding_retry_interval=0)
    with caplog.at_level(logging.WARNING, logger="strands_semantic_memory"):
        memory.add([text_message("user", "the ferry leaves at 7:40 from pier 3")])
        calls = counting.document_calls
        for i in range(3):
            memory.add([text_message("user", f"another note {i}")])
            hits = memory.search("when does the ferry leave?")
            assert hits and hits[0].index == 0 and hits[0].similarity is None
    stats = memory.stats()
    assert stats.degraded is not None and "ModelUnavailableError" in stats.degraded and str(empty) in stats.degraded
    assert stats.pending_embedding_count == 4
    assert counting.document_calls == calls, "no automatic retry of a model that cannot load"
    assert counting.query_calls <= 1, "searches stop asking the model"
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len([r for r in warnings if "unavailable" in r.getMessage()]) == 1, [r.getMessage() for r in warnings]
    assert not [r for r in warnings if "query embedding failed" in r.getMessage()]
    with pytest.raises(ModelUnavailableError):
        memory.embed_pending()  # an explicit call does try, and says why it cannot


def test_warm_up_loads_the_model(tmp_path):
    from strands_semantic_memory.embeddings._local import bundled_model_path

    fresh = SentenceTransformerEmbedder(str(bundled_model_path()))
    memory = SemanticMemory(embedder=fresh)
    assert fresh._model is None
    memory.warm_up()
    assert fresh._model is not None and memory.stats().degraded is None


def test_warm_up_of_an_unavailable_model_raises_and_shows_in_stats(tmp_path):
    empty = tmp_path / "empty-model"
    empty.mkdir()
    memory = SemanticMemory(embedder=SentenceTransformerEmbedder(str(empty)))
    with pytest.raises(ModelUnavailableError, match="empty-model"):
        memory.warm_up()
    assert memory.stats().degraded is not None


KILLED_BEFORE_EMBEDDING = """
import json, os, sys, threading
from strands_semantic_memory import SemanticMemory
from tests.support.embedders import NeverEmbeds
from tests.support.conversations import text_message
from tests.support.archives import durable_archive
store = durable_archive({kind!r}, {path!r}, {uri!r}, {namespace!r})
memory = SemanticMemory(embedder=NeverEmbeds(), archive=store, embedding="background")
memory.add([text_message("user", f"fact {{i}}: the vault code is VC-{{i}}0{{i}}") for i in range(5)])
os.write(1, (json.dumps({{"archived": len(memory)}}) + chr(10)).encode())
threading.Event().wait()
"""


@pytest.mark.subprocess
@pytest.mark.parametrize("kind", ["sqlite", "pgvector"])
def test_a_process_killed_before_embedding_loses_nothing_and_the_archive_is_embedded_at_open(
    kind, tmp_path, request, embedder
):
    from tests.support.archives import durable_archive, new_namespace

    path = str(tmp_path / "archive.sqlite3")
    uri = request.getfixturevalue("pg_uri") if kind == "pgvector" else ""
    namespace = new_namespace("killed")
    script = KILLED_BEFORE_EMBEDDING.format(kind=kind, path=path, uri=uri, namespace=namespace)
    lines = killed_after(script, 2)  # archived, and the thread is embedding
    assert {"archived": 5} in lines and {"embedding": 5} in lines

    def reopen(with_embedder, **options):
        return SemanticMemory(embedder=with_embedder, archive=durable_archive(kind, path, uri, namespace), **options)

    inline = reopen(embedder)
    assert len(inline) == 5 and inline.stats().pending_embedding_count == 5, "every message kept, none embedded"
    assert [m["content"][0]["text"] for _, m in inline.messages()] == [
        f"fact {i}: the vault code is VC-{i}0{i}" for i in range(5)
    ]
    inline.close()
    recording = RecordingEmbedder(embedder)
    reopened = reopen(recording, embedding="background")
    assert recording.started.wait(60), "opening the archive started its embedding, with no archive or search"
    reopened.embed_pending()
    assert recording.threads == [WORKER] and reopened.stats().pending_embedding_count == 0
    hits = reopened.search("what is the vault code?", top_k=5)
    assert len(hits) == 5 and all(h.similarity is not None for h in hits)
    reopened.close()


ENDS_WHILE_WORKING = """
from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.archives import SqliteArchive
memory = SemanticMemory(archive=SqliteArchive({path!r}), embedding="background")
memory.warm_up(wait=False)
memory.add([{{"role": "user", "content": [{{"text": f"note {{i}}: " + "the garden needs water " * 40}}]}}
                for i in range(200)])
"""

IN_PROCESS_ENDS_WHILE_WORKING = """
from strands_semantic_memory import SemanticMemory
memory = SemanticMemory(embedding="background")
memory.add([{"role": "user", "content": [{"text": f"note {i}: " + "the garden needs water " * 40}]}
                for i in range(200)])
"""


@pytest.mark.subprocess
def test_a_process_ending_while_an_in_process_memory_embeds_exits_cleanly():
    """An archive that ends with the process: at exit its thread still finishes the batch in hand (native code
    abandoned mid-call can abort the process) and starts no other."""
    result = run_script(IN_PROCESS_ENDS_WHILE_WORKING)
    assert result.returncode == 0 and result.stderr == "", result.stderr


@pytest.mark.subprocess
def test_a_process_ending_while_the_threads_work_exits_cleanly_and_loses_nothing(tmp_path, embedder):
    """Native code left running in a thread the interpreter abandons at exit can abort the process: the warm-up
    thread is joined and the embedding thread stopped after its batch, so the process ends normally."""
    path = str(tmp_path / "archive.sqlite3")
    result = run_script(ENDS_WHILE_WORKING.format(path=path))
    assert result.returncode == 0 and result.stderr == "", result.stderr
    from strands_semantic_memory.archives import SqliteArchive

    reopened = SemanticMemory(embedder=embedder, archive=SqliteArchive(path))
    assert len(reopened) == 200
    reopened.embed_pending()
    assert reopened.stats().pending_embedding_count == 0
    reopened.close()


IN_PROCESS_EXIT = """
from strands_semantic_memory import SemanticMemory
memory = SemanticMemory(embedding="background")
memory.add([{"role": "user", "content": [{"text": "the garden needs water"}]}])
memory.embed_pending()  # the thread is now idle, waiting for work
"""


@pytest.mark.subprocess
def test_a_process_with_an_idle_in_process_memory_exits_at_once_and_silently():
    result = run_script(IN_PROCESS_EXIT)
    assert result.returncode == 0 and result.stderr == "", result.stderr
