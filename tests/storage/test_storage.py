"""SemanticStorage on every archive: exact bytes, search by meaning, forgetting for good, durability, sharing."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strands.storage import InMemoryStorage
from strands.types.exceptions import StorageError

from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.archives.postgres import PostgresArchive
from strands_semantic_memory.errors import ConfigurationError
from strands_semantic_memory.messages import render_message
from strands_semantic_memory.storage import SemanticStorage
from strands_semantic_memory.tools._conversation_tools import forget_text, search_text
from tests.support.archives import durable_archive, new_user_id, vector_owners
from tests.support.embedders import RecordingEmbedder
from tests.support.processes import killed_after

SECRET = "ZQ-7731-PASSPORT"
FACT = b"I was born and raised in Lisbon, in a flat near the river."
PARAPHRASE = "Which city did I grow up in?"  # shares no word with FACT once stopwords are dropped
RECITAL = b"Maya's violin recital is on Friday at 6 pm in the school hall."
FILLER = [
    b"The quarterly budget review moved to Thursday afternoon.",
    b"Sourdough needs a starter fed twice a day.",
    b"The database migration finished without errors.",
    b"Rust lifetimes tie a reference to the data it borrows.",
]


WORKER = "semantic-memory-embedding"  # the memory's embedding thread


def run(coroutine):
    return asyncio.run(coroutine)


def _norm(key: str) -> str:
    return "/".join(part for part in key.split("/") if part)


KEYS = st.text(alphabet="abz/._-", min_size=1, max_size=10).filter(
    lambda k: _norm(k) != "" and ".." not in k.split("/")
)
DATA = st.one_of(
    st.binary(max_size=200),
    st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.text(max_size=100).map(lambda t: json.dumps({"text": t}).encode()),
)


@settings(max_examples=25, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=st.lists(st.tuples(KEYS, DATA), max_size=5))
def test_any_bytes_round_trip_exactly(make_storage, entries):
    storage = make_storage()
    expected = {_norm(key): data for key, data in entries}  # the last write of a key wins

    async def check():
        for key, data in entries:
            await storage.write(key, data)
        assert await storage.list("") == sorted(expected)
        for key, data in expected.items():
            assert await storage.read(key) == data, key

    run(check())
    assert len(storage.memory) == len(expected), "one record per key"


def test_meaning_finds_what_keywords_miss(make_storage):
    storage = make_storage()
    keyword = InMemoryStorage()

    async def fill():
        for store in (storage, keyword):
            await store.write("notes/home.md", FACT)
            for n, text in enumerate(FILLER):
                await store.write(f"notes/{n}.md", text)
        storage.memory.embed_pending()  # the vectors land off the writes' path; meaning needs them
        return await storage.search(PARAPHRASE), await keyword.search(PARAPHRASE)

    ours, theirs = run(fill())
    assert theirs == [], "Strands' keyword search finds nothing for the paraphrase"
    assert [r.key for r in ours] == ["notes/home.md"]
    assert ours[0].data == FACT and 0 < ours[0].score


def test_search_ranks_best_first_and_respects_max_results(make_storage):
    storage = make_storage(max_results=2)

    async def fill():
        await storage.write("a", b"dark")
        await storage.write("b", b"dark mode toggle feature")
        await storage.write("c", b"enable dark mode in the settings")
        return await storage.search("dark mode")

    results = run(fill())
    assert len(results) == 2
    assert results[0].score >= results[1].score
    assert {r.key for r in results} <= {"a", "b", "c"}


def test_forgetting_removes_the_bytes_and_every_index_entry(make_storage, request):
    storage = make_storage()
    memory = storage.memory
    secret = f"My passport number is {SECRET}, keep it safe.".encode()

    async def fill():
        for n, text in enumerate(FILLER):
            await storage.write(f"notes/{n}", text)
        await storage.write("notes/passport", b"an older note that is overwritten")
        await storage.write("notes/passport", secret)
        assert [r.key for r in await storage.search(f"passport {SECRET}")][:1] == ["notes/passport"]
        await storage.delete("notes/passport")
        return await storage.read("notes/passport"), await storage.list(""), await storage.search(f"passport {SECRET}")

    data, keys, found = run(fill())
    assert data is None and "notes/passport" not in keys
    assert all(r.key != "notes/passport" for r in found)
    assert len(memory) == len(FILLER), "one record per live key: the overwritten one went with the overwrite"
    store = memory.archive
    assert store.find_text(SECRET.lower()) == [] and store.find_text("older note") == []
    live = set(memory.indices)
    owners, _ = vector_owners(memory)
    assert owners <= live, "no vector is left without its record"
    hits = memory.search(f"my passport number {SECRET}", top_k=10)
    assert all(SECRET not in json.dumps(h.message) for h in hits)
    if make_storage.kind == "sqlite":
        storage.close()
        for file in Path(store.path).parent.iterdir():
            assert SECRET.encode() not in file.read_bytes(), file.name
    if make_storage.kind == "pgvector":
        with psycopg.connect(request.getfixturevalue("pg_uri")) as connection:
            rows = connection.execute(
                "SELECT count(*) FROM ssm_archive WHERE user_id = %s AND convert_from(data, 'UTF8') LIKE %s",
                (store.user_id, f"%{SECRET}%"),
            ).fetchone()
        assert rows == (0,)


def test_forgetting_through_the_conversation_tools_deletes_the_key(make_storage):
    storage = make_storage()

    async def fill():
        await storage.write("stash/a", f"the passport number is {SECRET}".encode())
        await storage.write("stash/b", b"the weather was fine")

    run(fill())
    assert SECRET in search_text(storage.memory, f"passport {SECRET}")
    assert "Forgot 1" in forget_text(storage.memory, query=SECRET)
    assert run(storage.read("stash/a")) is None
    assert run(storage.list("")) == ["stash/b"]
    assert run(storage.read("stash/b")) == b"the weather was fine"


def test_unindexed_prefixes_keep_bytes_exactly_without_indexing(make_storage):
    storage = make_storage()
    snapshot = json.dumps({"messages": [{"role": "user", "content": [{"text": "zebra crossing"}]}]}).encode()

    async def fill():
        await storage.write("session/s1/snapshot_latest.json", snapshot)
        await storage.write("notes/zoo", b"the zebra at the zoo")
        return await storage.search("zebra"), await storage.read("session/s1/snapshot_latest.json")

    found, data = run(fill())
    assert [r.key for r in found] == ["notes/zoo"]
    assert data == snapshot


def test_a_durable_archive_keeps_entries_across_processes(store_kind, embedder, tmp_path, request):
    if store_kind == "in_memory":
        pytest.skip("an in-process archive ends with its process")
    if store_kind == "sqlite":

        def open_storage():
            return SemanticStorage(embedder=embedder, archive_path=tmp_path / "stash.sqlite3")
    else:
        from strands_semantic_memory.archives.postgres import PostgresArchive
        from tests.support.archives import new_user_id

        namespace = new_user_id("storage")

        def open_storage():
            store = PostgresArchive(request.getfixturevalue("pg_uri"), namespace)
            return SemanticStorage(embedder=embedder, archive=store)

    first = open_storage()
    assert getattr(first, "_ephemeral", None) is None, "Strands may treat the stash as durable"
    run(first.write("notes/home", FACT))
    run(first.write("notes/gone", b"deleted before the restart"))
    run(first.delete("notes/gone"))
    if store_kind == "pgvector":  # a second process on the same namespace sees the entries at once
        second = open_storage()
        assert run(second.read("notes/home")) == FACT
        run(second.write("notes/other", b"written by the second process"))
        run(second.delete("notes/home"))
        assert run(first.read("notes/other")) == b"written by the second process"
        assert run(first.read("notes/home")) is None
        assert run(first.list("")) == ["notes/other"]
        second.close()
    first.close()
    reopened = open_storage()
    expected = ["notes/other"] if store_kind == "pgvector" else ["notes/home"]
    assert run(reopened.list("")) == expected
    if store_kind == "sqlite":
        assert run(reopened.read("notes/home")) == FACT
        reopened.memory.embed_pending()  # what was left pending at close is embedded at open; wait for it
        assert [r.key for r in run(reopened.search(PARAPHRASE))] == ["notes/home"]
    reopened.close()


def test_a_write_is_found_by_its_words_and_by_its_meaning_by_the_very_next_search(make_storage, embedder):
    """Issue 39.7: a search sees every write made before it. The memory's thread is held, so no vector is stored
    yet: the search embeds the few pending entries itself and scores them as if their vectors were stored."""
    held = RecordingEmbedder(embedder, hold=True)
    storage = make_storage(embedder=held)
    assert storage.memory.options.embedding == "background", "a storage that builds its memory embeds off the turn"
    try:
        run(storage.write("notes/recital", RECITAL))
        assert held.started.wait(60), "the memory's thread picked the entry up"
        run(storage.write("notes/groceries", b"Buy oat milk, eggs and two lemons."))
        for n, text in enumerate(FILLER):
            run(storage.write(f"notes/{n}", text))
        assert held.threads == [WORKER], "no write embedded: every document call so far is the thread's"
        assert [r.key for r in run(storage.search("violin recital"))] == ["notes/recital"], "by its words"
        assert [r.key for r in run(storage.search("When is the kid's music performance?"))][:1] == ["notes/recital"]
        assert storage.memory.stats().vector_count == 0, "found by meaning before any vector was stored"
    finally:
        held.release.set()
    storage.memory.embed_pending()
    assert storage.memory.stats().pending_embedding_count == 0
    assert [r.key for r in run(storage.search("When is the kid's music performance?"))][:1] == ["notes/recital"]


def test_embedding_inline_is_still_an_option_and_a_given_memory_keeps_its_own(embedder):
    inline = SemanticStorage(embedder=embedder, embedding="inline")
    run(inline.write("notes/home", FACT))
    assert inline.memory.stats().pending_embedding_count == 0, "embedded before the write returned"
    assert [r.key for r in run(inline.search(PARAPHRASE))] == ["notes/home"]
    given = SemanticMemory(embedder=embedder)
    assert SemanticStorage(given).memory.options.embedding == given.options.embedding == "inline"
    inline.close()


def test_close_waits_for_the_batch_in_hand_and_the_thread_never_reopens_the_archive(make_storage, embedder):
    held = RecordingEmbedder(embedder, hold=True)
    storage = make_storage(embedder=held)
    store = storage.memory.archive
    run(storage.write("notes/home", FACT))
    assert held.started.wait(60)
    worker = storage.memory._queue.thread
    closer = threading.Thread(target=storage.close)
    closer.start()
    held.release.set()
    closer.join(120)
    assert not closer.is_alive() and not worker.is_alive(), "close returned once the thread had ended"
    if make_storage.kind == "in_memory":
        assert storage.memory.stats().pending_embedding_count == 0
        return
    if make_storage.kind == "pgvector":
        assert store._connections._pool is None, "no pool was reopened after close"
        reopened = SemanticStorage(
            embedder=RecordingEmbedder(embedder), archive=PostgresArchive(store.dsn, store.user_id)
        )
    else:
        reopened = SemanticStorage(embedder=RecordingEmbedder(embedder), archive_path=store.path)
    assert reopened.memory.stats().pending_embedding_count == 0, "the batch in hand was stored before the close"
    assert [r.key for r in run(reopened.search(PARAPHRASE))] == ["notes/home"]
    assert reopened.memory.embedder.document_calls == 0
    reopened.close()


def test_closing_a_namespaced_view_leaves_the_shared_memory_and_its_embedding_open(make_storage):
    storage = make_storage()
    view = storage.namespace("agent-1")
    view.close()
    run(storage.write("notes/home", FACT))  # the storage that built the memory still writes
    worker = storage.memory._queue.thread
    assert worker is not None and worker.is_alive() and worker.name == WORKER, "the write started the embedding"
    storage.memory.embed_pending()
    assert [r.key for r in run(storage.search(PARAPHRASE))] == ["notes/home"]
    storage.close()


KILLED_STORAGE = """
import asyncio, json, os, threading
from strands_semantic_memory.storage import SemanticStorage
from tests.support.embedders import NeverEmbeds
from tests.support.archives import durable_archive
storage = SemanticStorage(embedder=NeverEmbeds(), archive=durable_archive({kind!r}, {path!r}, {uri!r}, {namespace!r}))
async def fill():
    for key, data in {entries!r}:
        await storage.write(key, data)
asyncio.run(fill())
os.write(1, (json.dumps({{"written": len(storage.memory)}}) + chr(10)).encode())
threading.Event().wait()
"""


@pytest.mark.subprocess
@pytest.mark.parametrize("kind", ["sqlite", "pgvector"])
def test_a_process_killed_before_the_vectors_land_loses_no_entry_and_they_are_embedded_at_open(
    kind, embedder, tmp_path, request
):
    path = str(tmp_path / "stash.sqlite3")
    uri = request.getfixturevalue("pg_uri") if kind == "pgvector" else ""
    namespace = new_user_id("killed-storage")
    entries = [("notes/home", FACT), *((f"notes/{n}", text) for n, text in enumerate(FILLER))]
    script = KILLED_STORAGE.format(kind=kind, path=path, uri=uri, namespace=namespace, entries=entries)
    lines = killed_after(script, 2)
    assert {"written": len(entries)} in lines and any("embedding" in line for line in lines), lines

    def open_storage(with_embedder, **options):
        return SemanticStorage(embedder=with_embedder, archive=durable_archive(kind, path, uri, namespace), **options)

    inline = open_storage(embedder, embedding="inline")  # opens without embedding anything
    assert inline.memory.stats().pending_embedding_count == len(entries), "every entry kept, none embedded"
    assert {key: run(inline.read(key)) for key in run(inline.list(""))} == dict(entries)
    inline.close()
    recording = RecordingEmbedder(embedder)
    reopened = open_storage(recording)
    assert recording.started.wait(60), "opening the archive started embedding it, with no write or search"
    reopened.memory.embed_pending()
    assert recording.threads[0] == WORKER and reopened.memory.stats().pending_embedding_count == 0
    assert [r.key for r in run(reopened.search(PARAPHRASE))] == ["notes/home"]
    reopened.close()


def test_concurrent_writes_leave_one_record_per_key(make_storage):
    storage = make_storage()

    async def fill():
        await asyncio.gather(*(storage.write(f"k{n % 3}", f"value {n}".encode()) for n in range(12)))
        return {key: await storage.read(key) for key in await storage.list("")}

    values = run(fill())
    assert sorted(values) == ["k0", "k1", "k2"]
    assert all(v is not None and v.startswith(b"value ") for v in values.values())
    assert len(storage.memory) == 3


def test_two_storages_on_one_memory_see_each_other(embedder):
    memory = SemanticMemory(embedder=embedder)
    first, second = SemanticStorage(memory), SemanticStorage(memory)
    run(first.write("a", b"from the first"))
    assert run(second.read("a")) == b"from the first"
    run(second.write("a", b"overwritten by the second"))
    assert run(first.read("a")) == b"overwritten by the second"
    run(first.delete("a"))
    assert run(second.read("a")) is None and run(second.list("")) == []


def test_a_memory_shared_with_a_conversation_keeps_its_messages_apart(embedder):
    memory = SemanticMemory(embedder=embedder)
    memory.add([{"role": "user", "content": [{"text": "a conversation message about Lisbon"}]}])
    storage = SemanticStorage(memory)
    run(storage.write("k", b"an entry about Lisbon"))
    assert run(storage.list("")) == ["k"]
    assert [r.key for r in run(storage.search("Lisbon"))] == ["k"]
    assert len(memory) == 2


def test_in_process_storage_is_ephemeral_for_strands(embedder):
    from strands.storage.storage import _EPHEMERAL

    storage = SemanticStorage(embedder=embedder)
    assert storage._ephemeral is _EPHEMERAL
    assert storage.namespace("x")._ephemeral is _EPHEMERAL


def test_a_failed_write_or_delete_raises_storage_error_and_changes_nothing(embedder, tmp_path):
    storage = SemanticStorage(embedder=embedder, archive_path=tmp_path / "closed.sqlite3")
    run(storage.write("k", b"v"))
    storage.close()  # the file is closed: writes fail, reads are served from the loaded archive
    with pytest.raises(StorageError, match="Failed to write 'k'") as raised:
        run(storage.write("k", b"w"))
    assert raised.value.__cause__ is not None
    with pytest.raises(StorageError, match="Failed to delete 'k'"):
        run(storage.delete("k"))
    assert run(storage.read("k")) == b"v"
    assert run(storage.list("")) == ["k"]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"max_results": 0}, "max_results must be an integer >= 1"),
        ({"max_results": True}, "max_results must be an integer >= 1"),
        ({"min_similarity": 1.5}, "min_similarity is a cosine similarity"),
        ({"min_similarity": float("nan")}, "min_similarity must be a number"),
        ({"unindexed_prefixes": "session/"}, "unindexed_prefixes must be a list"),
        ({"unindexed_prefixes": ["a/../b"]}, "invalid prefix"),
        ({"unindexed_prefixes": ["/"]}, "non-empty key prefix"),
        ({"max_num_archived_messages": 10}, "max_num_archived_messages=10: a storage keeps every entry"),
        ({"max_memory_archived_messages": 10_000}, "max_memory_archived_messages=10000"),
        ({"top_k": 0}, "top_k"),
    ],
)
def test_bad_options_are_refused_before_anything_is_built(embedder, tmp_path, arguments, message):
    path = tmp_path / "never.sqlite3"
    with pytest.raises(ConfigurationError, match=message):
        SemanticStorage(embedder=embedder, archive_path=path, **arguments)
    assert not path.exists() or "top_k" in arguments


def test_memory_or_the_arguments_that_build_one(embedder, tmp_path):
    memory = SemanticMemory(embedder=embedder)
    with pytest.raises(ConfigurationError, match="not both .*archive_path, top_k"):
        SemanticStorage(memory, archive_path=tmp_path / "x.sqlite3", top_k=2)
    with pytest.raises(ConfigurationError, match="must be a SemanticMemory"):
        SemanticStorage("memory")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="must not evict"):
        SemanticStorage(SemanticMemory(embedder=embedder, max_num_archived_messages=5))


def test_writes_take_bytes_only(storage):
    with pytest.raises(StorageError, match="takes bytes for 'k', got str"):
        run(storage.write("k", "text"))  # type: ignore[arg-type]
    assert run(storage.list("")) == []


REPORT = (
    "Incident report: the nightly backup job failed because the storage volume was full. "
    "Old snapshots were pruned and the job was rerun successfully at 04:10. " * 6
)


def test_strands_context_offloader_keeps_offloaded_results_findable(embedder):
    from strands import Agent, tool
    from strands.vended_plugins.context_offloader import ContextOffloader
    from strands.vended_plugins.context_offloader.plugin import _unframe_content

    from tests.support.scripted_model import ScriptedModel, ToolCall

    @tool
    def fetch_report() -> str:
        """Fetch the latest incident report."""
        return REPORT

    def scripted(messages, system_prompt, is_summary):
        if render_message(messages[-1]).startswith("[tool result"):
            return "The backup failed on a full volume."
        return ToolCall("fetch_report", {})

    storage = SemanticStorage(embedder=embedder)
    offloader = ContextOffloader(storage=storage, max_result_tokens=60, preview_tokens=10, evict_after_cycles=None)
    agent = Agent(model=ScriptedModel(scripted), tools=[fetch_report], plugins=[offloader], callback_handler=None)
    agent("What happened last night?")

    keys = run(storage.list("offloader/"))
    assert len(keys) == 1
    content, content_type = _unframe_content(run(storage.read(keys[0])))
    assert (content, content_type) == (REPORT.encode(), "text/plain")
    storage.memory.embed_pending()  # the offloaded text is embedded off the turn; the paraphrase needs its vector
    assert [r.key for r in run(storage.search("why did the data protection run break?"))] == keys


def test_strands_snapshot_sessions_round_trip_through_the_storage_unindexed(embedder, tmp_path):
    from strands import Agent
    from strands.session import SnapshotSessionManager

    from tests.support.scripted_model import ScriptedModel

    storage = SemanticStorage(embedder=embedder, archive_path=tmp_path / "sessions.sqlite3")
    first = Agent(
        model=ScriptedModel(), session_manager=SnapshotSessionManager("s1", storage=storage), callback_handler=None
    )
    first("Remember that the zebra crossing is on Elm Street.")
    assert run(storage.list("session/s1/")) != []
    assert run(storage.search("zebra crossing")) == [], "session snapshots are kept, not indexed"
    second = Agent(
        model=ScriptedModel(), session_manager=SnapshotSessionManager("s1", storage=storage), callback_handler=None
    )
    assert [render_message(m) for m in second.messages] == [render_message(m) for m in first.messages]
    storage.close()
