"""Background embedding: archive returns after the commit, a daemon thread embeds, nothing is ever lost.

Real model throughout: the embedders are the bundled model wrapped to record, pause or fail (not mocks).
"""

from __future__ import annotations

import gc
import logging
import threading
import time
import weakref
from collections.abc import Sequence

import pytest

from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.embeddings import SentenceTransformerEmbedder, Vectors
from strands_semantic_memory.engine.embedding import _retry, _worker
from strands_semantic_memory.errors import EmbeddingError, ModelUnavailableError
from tests.support.conversations import text_message
from tests.support.embedders import CountingEmbedder, FlakyEmbedder, RecordingEmbedder, RejectingEmbedder
from tests.support.processes import killed_after, run_script

WORKER = "semantic-memory-embedding"


def test_archive_returns_before_embedding_and_a_search_finds_the_message_at_once(make_memory, embedder):
    held = RecordingEmbedder(embedder, hold=True)
    memory = make_memory(embedder=held, embedding="background")
    try:
        indices = memory.add([text_message("user", "my locker code is QX-5521"), text_message("assistant", "ok")])
        assert held.started.wait(60), "the background thread picked the batch up"
        assert held.threads == [WORKER] and memory.stats().pending_embedding_count == 2
        hits = memory.search("locker code QX-5521")  # hybrid, while the message has no stored vector yet
        assert hits and hits[0].index == indices[0] and hits[0].similarity is not None, "scored by the search"
        assert memory.stats().vector_count == 0, "the search stored nothing"
    finally:
        held.release.set()
    assert memory.embed_pending() == 2, "embed_pending waits for the batch the thread has in hand"
    assert memory.stats().pending_embedding_count == 0 and memory.stats().vector_count == 2
    hits = memory.search("locker code QX-5521")
    assert hits[0].index == indices[0] and hits[0].similarity is not None
    assert held.threads == [WORKER, "MainThread"], "stored by the thread; the search embedded what it had in hand"
    memory.close()


def test_searches_embed_the_pending_messages_once_and_leave_storing_them_to_the_background_thread(embedder):
    held = RecordingEmbedder(embedder, hold=True)
    memory = SemanticMemory(embedder=held, embedding="background")
    memory.add([text_message("user", f"note {i} about the garden") for i in range(3)])
    assert held.started.wait(60)
    memory.add([text_message("user", "a fourth note about the garden")])  # arrives while the batch is held
    for _ in range(3):
        assert memory.search("garden")
    searched = [texts for thread, texts in held.calls if thread == "MainThread"]
    assert len(searched) == 1 and len(searched[0]) == 4, "the first search embedded them; the next ones reused that"
    held.release.set()
    assert memory.embed_pending() == 4
    assert [len(texts) for thread, texts in held.calls if thread == WORKER] == [3], "the fourth not embedded again"
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
    with caplog.at_level(logging.WARNING, logger="strands_semantic_memory.engine.embedding"):
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
    with caplog.at_level(logging.DEBUG, logger="strands_semantic_memory.engine.embedding"):
        for i in range(3):
            memory.add([text_message("user", f"message {i}")])
            with pytest.raises(Exception, match="unavailable"):
                memory.embed_pending()  # a failing run in this thread as well: the same streak of failures
        memory.close()
    failures = [r for r in caplog.records if "| embedding failed; the messages are archived" in r.getMessage()]
    assert failures and [r.levelno for r in failures].count(logging.WARNING) == 1
    # the bounded retries may also give up within the test (retry interval 0): that is said once, too
    given_up = [r for r in caplog.records if "the embedding thread stops retrying" in r.getMessage()]
    assert len(given_up) <= 1
    assert memory.stats().pending_embedding_count == 3


def _stop_requested(queue) -> None:
    """Wait until ``close`` (in another thread) has asked the embedding thread to stop."""
    for _ in range(60_000):
        if queue.stopping:
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
    worker = queue.thread
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
    worker = queue.thread
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

        assert store._connections._shared is None, "the thread took no reference to a connection pool again"
        store = PostgresArchive(store.dsn, store.user_id)
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


def test_close_called_while_holding_the_archive_lock_returns_and_the_thread_then_stops(embedder):
    held = RecordingEmbedder(embedder, hold=True)
    memory = SemanticMemory(embedder=held, embedding="background")
    memory.add([text_message("user", "my locker code is QX-5521")])
    assert held.started.wait(60)
    queue, worker = memory._queue, memory._queue.thread
    with memory._archive_lock:  # e.g. a caller inside a write transaction: the thread's store call must wait
        held.release.set()
        closer = threading.Thread(target=queue.close, kwargs={"timeout": 0})
        closer.start()
        closer.join(60)
        assert not closer.is_alive(), "close did not wait for the thread's store call to get the lock"
    worker.join(60)
    assert not worker.is_alive() and memory.stats().pending_embedding_count == 1, "the batch stays pending"


def test_exit_asks_every_thread_to_stop_before_waiting_for_any(embedder, monkeypatch):
    monkeypatch.setattr(_worker, "_workers", weakref.WeakSet())  # only this test's threads
    held = RecordingEmbedder(embedder, hold=True)
    memories = [SemanticMemory(embedder=held, embedding="background") for _ in range(2)]
    for memory in memories:
        memory.add([text_message("user", "the garden needs water")])
    assert held.started.wait(60)
    stopper = threading.Thread(target=_worker._stop_all)
    stopper.start()
    for memory in memories:
        _stop_requested(memory._queue)  # both asked while the first batch still holds the embedder
    held.release.set()
    stopper.join(120)
    assert not stopper.is_alive() and not any(m._queue.thread and m._queue.thread.is_alive() for m in memories)
    for memory in memories:
        memory.close()


def test_inline_mode_embeds_before_archive_returns_on_the_callers_thread(embedder):
    recording = RecordingEmbedder(embedder)
    memory = SemanticMemory(embedder=recording)
    memory.add([text_message("user", "inline by default")])
    assert recording.threads == [threading.current_thread().name] and memory.stats().pending_embedding_count == 0
    assert memory._queue.thread is None, "no background thread was started"


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
store = durable_archive({kind!r}, {path!r}, {uri!r}, {user_id!r})
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
    from tests.support.archives import durable_archive, new_user_id

    path = str(tmp_path / "archive.sqlite3")
    uri = request.getfixturevalue("pg_uri") if kind == "pgvector" else ""
    user_id = new_user_id("killed")
    script = KILLED_BEFORE_EMBEDDING.format(kind=kind, path=path, uri=uri, user_id=user_id)
    lines = killed_after(script, 2)  # archived, and the thread is embedding
    assert {"archived": 5} in lines and {"embedding": 5} in lines

    def reopen(with_embedder, **options):
        return SemanticMemory(embedder=with_embedder, archive=durable_archive(kind, path, uri, user_id), **options)

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


# ---------------------------------------------------------------------- issue 39.4: a rejected text, a dropped memory


def test_a_dropped_memory_whose_embedder_rejects_a_message_is_freed_and_its_thread_ends(embedder):
    rejecting = RejectingEmbedder(embedder)
    before = set(threading.enumerate())
    memory = SemanticMemory(embedder=rejecting, embedding="background", embedding_retry_interval=0)
    memory.add([text_message("user", "this one carries POISON for the embedding service")])
    assert rejecting.rejected.wait(60), "the thread tried once"
    (thread,) = [t for t in threading.enumerate() if t not in before and t.name == WORKER]
    dropped = weakref.ref(memory)
    del memory
    gc.collect()
    assert dropped() is None, "the embedding thread kept the memory alive"
    thread.join(10)
    assert not thread.is_alive(), "the thread of a dropped memory ends"
    calls = rejecting.rejections
    time.sleep(1.5)  # longer than the floor between retries
    assert rejecting.rejections == calls, "no call after the memory was dropped"


def test_a_rejected_text_is_retried_a_bounded_number_of_times_then_the_thread_ends(embedder, monkeypatch, caplog):
    monkeypatch.setattr(_worker, "IDLE_SECONDS", 0.5)
    monkeypatch.setattr(_retry, "MIN_RETRY_SECONDS", 0.05)
    rejecting = RejectingEmbedder(embedder)
    memory = SemanticMemory(embedder=rejecting, embedding="background", embedding_retry_interval=0.01)
    with caplog.at_level(logging.WARNING, logger="strands_semantic_memory"):
        memory.add([text_message("user", "this one carries POISON for the embedding service")])
        assert rejecting.rejected.wait(60)
        thread = memory._queue.thread
        thread.join(30)
        assert not thread.is_alive(), "only a message that keeps failing remains: the thread ends"
    assert rejecting.rejections == _retry.MAX_AUTOMATIC_ATTEMPTS
    assert len([r for r in caplog.records if "stops retrying" in r.getMessage()]) == 1
    assert memory.stats().pending_embedding_count == 1, "still archived and pending, never lost"
    memory.add([text_message("user", "the garden needs water")])  # new work is embedded
    memory._queue.thread.join(30)
    assert memory.stats().pending_embedding_count == 1 and memory.stats().vector_count == 1
    # at most the bound again, now on its own schedule, plus the call of the batch it shared with the new message
    assert rejecting.rejections <= 2 * _retry.MAX_AUTOMATIC_ATTEMPTS + 1
    calls = rejecting.rejections
    time.sleep(0.5)
    assert rejecting.rejections == calls, "no automatic retry after the bound"
    with pytest.raises(EmbeddingError):
        memory.embed_pending()  # an explicit call still tries, and says why it cannot
    assert rejecting.rejections == calls + 1
    memory.close()


# ---------------------------------------------------------------------- issue 39.8: exit with hung embedders

HUNG_AT_EXIT = """
import threading, time
from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.engine.embedding import _worker
from tests.support.embedders import NeverEmbeds
_worker.EXIT_TIMEOUT = {deadline}
entered = threading.Semaphore(0)


class Hangs(NeverEmbeds):
    def embed_documents(self, texts):
        entered.release()
        return super().embed_documents(texts)


memories = [SemanticMemory(embedder=Hangs(), embedding="background") for _ in range(3)]
for n, memory in enumerate(memories):
    memory.add([{{"role": "user", "content": [{{"text": f"note {{n}}"}}]}}])
for _ in memories:
    entered.acquire()
print("exiting", time.monotonic(), flush=True)
"""


def test_exit_waits_one_deadline_for_every_hung_embedding_thread_and_names_each_abandoned_batch():
    deadline = 3.0
    result = run_script(HUNG_AT_EXIT.format(deadline=deadline))
    ended = time.monotonic()  # CLOCK_MONOTONIC: one clock for every process on the machine
    assert result.returncode == 0, result.stderr
    started = float(next(line for line in result.stdout.splitlines() if line.startswith("exiting")).split()[1])
    assert deadline - 0.5 <= ended - started < deadline + 8, f"exit took {ended - started:.1f} s for three threads"
    abandoned = [line for line in result.stderr.splitlines() if "abandoned" in line]
    assert len(abandoned) == 3 and len(set(abandoned)) == 3, result.stderr  # one line per thread, each named
    assert all("thread=<semantic-memory-embedding" in line for line in abandoned)
