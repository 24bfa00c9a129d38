"""A restore behind a SemanticStorage: every view reads, lists, searches and deletes what the archive holds then.

Issue 39, point 1: the key table kept the archive indices it had read before ``memory.load_state(...)`` (or a
session restore on a memory the storage shares) replaced the records behind them. Reading ``doc/carol`` returned
``doc/alice``'s bytes, ``doc/alice`` read None, a search found nothing, and writing ``doc/carol`` deleted the
restored ``doc/alice``. The rule: the table reads the archive again after a restore, every read and delete checks
that the record it acts on carries the requested key, and a restore is atomic for every view.
"""

from __future__ import annotations

import asyncio
import json
import threading

import pytest

from strands_semantic_memory import SemanticMemory, SemanticSummarizingConversationManager
from strands_semantic_memory.archives.postgres import PostgresArchive
from strands_semantic_memory.errors import StateError
from strands_semantic_memory.storage import SemanticStorage
from strands_semantic_memory.storage._entries import entry_bytes, entry_key
from tests.support.archives import new_namespace

ALICE = b"Alice keeps her passport in the blue drawer of the hall desk."
CAROL = b"Carol waters the tomatoes on the balcony every morning."
PASSPORT = "Where does Alice keep her passport?"


def run(coroutine):
    return asyncio.run(coroutine)


def saved_with_alice(embedder) -> dict:
    """An in-process archive's saved state holding one entry, ``doc/alice``, at index 0 (JSON round trip)."""
    storage = SemanticStorage(embedder=embedder, embedding="inline")
    try:
        run(storage.write("doc/alice", ALICE))
        return json.loads(json.dumps(storage.memory.to_state()))
    finally:
        storage.close()


def archive_truth(memory: SemanticMemory) -> dict[str, bytes]:
    """Each key's current bytes as the archive holds them: its newest record's."""
    truth: dict[str, bytes] = {}
    for _, message in memory.messages():
        key = entry_key(message)
        if key is not None:
            truth[key] = entry_bytes(message)
    return truth


async def agrees_with_archive(storage: SemanticStorage, view: SemanticStorage) -> dict[str, bytes]:
    """Assert that the storage and its ``doc`` view read, search and list what the archive holds; returns it.

    Listing comes last: it reads the whole archive, which would hide a stale table from the reads.
    """
    truth = archive_truth(storage.memory)
    for key in ("doc/alice", "doc/carol"):
        assert await view.read(key.removeprefix("doc/")) == truth.get(key), key
        assert await storage.read(key) == truth.get(key), key
    found = [result.key for result in await storage.search(PASSPORT)]
    assert ("doc/alice" in found) == ("doc/alice" in truth), found
    assert await view.list("") == sorted(key.removeprefix("doc/") for key in truth)
    assert await storage.list("") == sorted(truth)
    return truth


@pytest.mark.parametrize("carol_first", [True, False], ids=["carol-then-restore", "read-then-restore"])
def test_a_restore_reaches_every_view_and_no_key_reads_or_deletes_another(make_storage, embedder, carol_first):
    saved = saved_with_alice(embedder)
    storage = make_storage(embedding="inline")
    view = storage.namespace("doc")

    async def scenario():
        if carol_first:  # the sequence: doc/carol takes index 0, the index doc/alice has in the state
            await storage.write("doc/carol", CAROL)
        assert await view.read("carol") == (CAROL if carol_first else None)
        await storage.list("")  # the table has read the whole archive
        generation = storage.memory.generation
        try:
            storage.memory.load_state(saved)
        except StateError:  # a file or a PostgreSQL user that holds other messages refuses: nothing changes
            assert make_storage.kind != "in_memory"
            assert storage.memory.generation == generation
        else:
            assert storage.memory.generation == generation + 1
        truth = await agrees_with_archive(storage, view)
        if make_storage.kind == "in_memory" or (make_storage.kind == "sqlite" and not carol_first):
            assert truth == {"doc/alice": ALICE}, "the restore replaced the archive"
        else:
            assert truth == ({"doc/carol": CAROL} if carol_first else {}), "the restore was refused"
        # Writing and deleting another key leaves the restored entry alone.
        await storage.write("doc/carol", b"Carol moved the tomatoes indoors.")
        assert archive_truth(storage.memory).get("doc/alice") == truth.get("doc/alice")
        await agrees_with_archive(storage, view)
        await view.delete("carol")
        assert archive_truth(storage.memory).get("doc/alice") == truth.get("doc/alice")
        assert await agrees_with_archive(storage, view) == {k: v for k, v in truth.items() if k != "doc/carol"}

    run(scenario())


def test_a_session_restore_on_a_shared_memory_reaches_the_storage(embedder):
    """The manager restores its session into the memory the storage shares: the storage follows at once."""
    memory = SemanticMemory(embedder=embedder)
    manager = SemanticSummarizingConversationManager(memory=memory)
    storage = SemanticStorage(memory)
    view = storage.namespace("doc")

    async def scenario():
        await storage.write("doc/alice", ALICE)
        session = json.loads(json.dumps(manager.get_state()))  # the session saved with doc/alice in it
        await storage.delete("doc/alice")
        await storage.write("doc/carol", CAROL)
        assert await view.list("") == ["carol"]
        manager.restore_from_session(session)
        assert await agrees_with_archive(storage, view) == {"doc/alice": ALICE}
        await view.write("carol", CAROL)
        assert await agrees_with_archive(storage, view) == {"doc/alice": ALICE, "doc/carol": CAROL}

    run(scenario())


def test_reads_during_restores_never_return_another_keys_bytes(embedder):
    """Restores alternate between two archives that hold different keys at index 0, while a thread reads: a restore
    is atomic for the reader, which sees doc/carol's bytes or nothing, never doc/alice's."""
    with_alice = saved_with_alice(embedder)
    storage = SemanticStorage(embedder=embedder, embedding="inline")
    run(storage.write("doc/carol", CAROL))
    with_carol = json.loads(json.dumps(storage.memory.to_state()))
    view = storage.namespace("doc")
    seen: list[bytes | None] = []
    done = threading.Event()

    def reader():
        async def loop():
            while not done.is_set():
                seen.append(await view.read("carol"))

        run(loop())

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        for n in range(60):
            storage.memory.load_state(with_alice if n % 2 == 0 else with_carol)
    finally:
        done.set()
        thread.join(timeout=30)
    storage.close()
    assert seen, "the reader ran"
    assert set(seen) <= {CAROL, None}, "a read returned another key's bytes"


def test_records_replaced_behind_the_table_are_neither_read_nor_deleted_as_another_key(embedder, pg_uri):
    """A PostgreSQL user's archive dropped and written again from elsewhere reuses the indices the table holds."""
    namespace = new_namespace("replaced")
    first = SemanticStorage(embedder=embedder, archive=PostgresArchive(pg_uri, namespace), embedding="inline")
    run(first.write("doc/alice", ALICE))
    assert run(first.list("")) == ["doc/alice"]
    PostgresArchive(pg_uri, namespace).drop_namespace()  # an operator's reset, from another process
    second = SemanticStorage(embedder=embedder, archive=PostgresArchive(pg_uri, namespace), embedding="inline")
    try:
        run(second.write("doc/carol", CAROL))
        assert run(first.read("doc/alice")) is None, "the index now holds doc/carol's record"
        run(first.delete("doc/alice"))
        assert run(second.read("doc/carol")) == CAROL, "deleting doc/alice deleted doc/carol"
        assert run(first.read("doc/carol")) == CAROL
    finally:
        first.close()
        second.close()
