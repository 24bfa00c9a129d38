"""SemanticStorage's own behaviour: exact bytes, search by meaning, deletes that leave nothing findable, a key table in
step with the archive, the sessions of Strands' stash keys, and what the hook asks of it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strands._context_manager.stash import Stash
from strands.storage import InMemoryStorage
from strands.types.exceptions import StorageError

from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.errors import ConfigurationError
from strands_semantic_memory.messages._session import session_key
from strands_semantic_memory.storage import SemanticStorage

FACT = b"I was born and raised in Lisbon, near the river."
PARAPHRASE = "Which city did I grow up in?"
FILLER = [b"The quarterly budget review moved to Thursday.", b"Water the tomatoes every second morning."]
SECRET = "ZQ-7731-PX"

DATA = st.one_of(
    st.binary(max_size=64),
    st.text(max_size=60).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.text(max_size=60).map(lambda t: json.dumps({"text": t}).encode()),  # a stash entry (ASCII escapes)
    st.just(b'{"__bytes_encoded__": true, "data": "AAAA"}'),  # looks like the codec's own marker
)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=st.lists(st.tuples(st.sampled_from(["a", "b/c", "context/s/x_0"]), DATA), max_size=6))
def test_any_bytes_round_trip_exactly_and_one_record_per_key(make_storage, entries):
    storage = make_storage()
    expected = dict(entries)  # the last write of a key wins

    async def check() -> None:
        for key, data in entries:
            await storage.write(key, data)
        assert await storage.list("") == sorted(expected)
        for key, data in expected.items():
            assert await storage.read(key) == data

    asyncio.run(check())
    assert len(storage.memory) == len(expected)


@pytest.mark.anyio
async def test_meaning_finds_what_keywords_miss(make_storage):
    storage, keyword = make_storage(), InMemoryStorage()
    for store in (storage, keyword):
        await store.write("notes/home.md", FACT)
        for n, text in enumerate(FILLER):
            await store.write(f"notes/{n}.md", text)
    storage.memory.embed_pending()  # the vectors land off the writes' path; meaning needs them
    assert await keyword.search(PARAPHRASE) == []
    found = await storage.search(PARAPHRASE)
    assert [r.key for r in found] == ["notes/home.md"] and found[0].data == FACT and found[0].score > 0


@pytest.mark.anyio
async def test_a_delete_or_an_overwrite_leaves_nothing_findable(make_storage):
    storage = make_storage()
    for n, text in enumerate(FILLER):
        await storage.write(f"notes/{n}", text)
    await storage.write("notes/passport", b"an older note about the passport office")
    await storage.write("notes/passport", f"My passport number is {SECRET}.".encode())
    storage.memory.embed_pending()
    for query in (f"passport {SECRET}", "my travel document id"):  # by its terms, by its meaning
        assert [r.key for r in await storage.search(query)] == ["notes/passport"]
    await storage.delete("notes/passport")
    assert await storage.read("notes/passport") is None and await storage.list("") == ["notes/0", "notes/1"]
    assert await storage.search(f"passport {SECRET}") == [] and await storage.search("my travel document id") == []
    assert storage.memory.find_text(SECRET) == [] and storage.memory.find_text("passport office") == []
    assert len(storage.memory) == len(FILLER)
    await storage.write("notes/passport", b"an older note about the passport office")  # the same bytes again
    assert await storage.read("notes/passport") == b"an older note about the passport office"
    path = getattr(storage.memory.archive, "path", None)
    storage.close()
    if path is not None:
        assert all(SECRET.encode() not in file.read_bytes() for file in Path(path).parent.iterdir())


@pytest.mark.anyio
async def test_the_key_table_follows_a_forget_a_restore_and_another_storage(embedder):
    storage = SemanticStorage(embedder=embedder)
    await storage.write("a", b"the blue door code is 4471")
    state = storage.memory.to_state()
    await storage.write("b", b"the red door code is 9902")
    storage.memory.forget(query="blue door")  # through the memory (the conversation tools do this)
    assert await storage.list("") == ["b"] and await storage.read("a") is None
    storage.memory.load_state(state)  # a restore: the archive holds "a" again, never "b"
    assert await storage.list("") == ["a"] and await storage.read("b") is None
    assert await storage.read("a") == b"the blue door code is 4471"
    other = SemanticStorage(storage.memory)  # another storage on the same memory sees every write at once
    await other.write("c", b"green")
    await storage.delete("a")
    assert await storage.list("") == ["c"] == await other.list("") and await other.read("a") is None
    assert storage.memory.forget_all() == 1 and await other.list("") == []
    storage.close()


@pytest.mark.anyio
async def test_a_stash_key_gives_the_entry_its_session_however_long(make_storage):
    storage = make_storage()
    long_id = "s" * 300
    for session in ("monday", long_id, "a/b"):
        await Stash(storage, session, "agent").store(f"t-{len(session)}", 0, json.dumps({"text": "hi"}).encode())
    await storage.write("notes/shared", b"hi")
    sessions = {r.session_id for r in storage.memory.records()}
    assert sessions == {"monday", session_key(long_id), "a/b", None} and session_key(long_id).startswith("sha256:")
    assert session_key(session_key(long_id)) == session_key(long_id) and session_key("sha256:x") != "sha256:x"
    hits = storage.memory.search("hi", sessions=[long_id], top_k=10)
    assert {h.session_id for h in hits} == {session_key(long_id)}, "the agent's own session key finds its entries"


def test_held_and_visible_are_what_the_hook_reads(embedder):
    memory = SemanticMemory(embedder=embedder)
    memory.add([{"role": "user", "content": [{"text": "a conversation message about tulips"}]}])
    storage = SemanticStorage(memory)
    view, stash = storage.namespace("team"), Stash(storage.namespace("team"), "s1", "agent")
    held = {"role": "user", "tracking_id": "t1", "content": [{"text": "tulips in the held question"}]}
    tool = {"role": "user", "content": [{"toolResult": {"toolUseId": "u1", "status": "success",
                                                         "content": [{"text": "tulips from a tool"}]}}]}  # fmt: skip
    gone = {"role": "assistant", "tracking_id": "t2", "content": [{"text": "tulips summarized away"}]}
    for message in (held, tool, gone):
        asyncio.run(stash.store_message(message))
    asyncio.run(storage.write("elsewhere", b"tulips outside the view"))
    indices = {r.text: r.index for r in memory.records()}
    assert view.held([held, tool]) == {indices["tulips in the held question"], indices["tulips from a tool"]}
    assert storage.namespace("other").held([held]) == frozenset()
    passages = memory.search("tulips", top_k=10, context_radius=5).passages
    shown = {r.text for p in view.visible(passages) for r in p.records}
    assert shown == {"tulips in the held question", "tulips from a tool", "tulips summarized away"}
    shown = {r.text for p in storage.visible(passages) for r in p.records}
    assert "a conversation message about tulips" in shown and "tulips outside the view" in shown
    storage.close()
    memory.close()


@pytest.mark.anyio
async def test_sessions_are_kept_unindexed_and_an_in_process_storage_is_ephemeral(make_storage):
    storage = make_storage()
    snapshot = json.dumps({"messages": [{"role": "user", "content": [{"text": "zebra crossing"}]}]}).encode()
    await storage.write("session/s1/snapshot_latest.json", snapshot)
    await storage.write("notes/zoo", b"the zebra at the zoo")
    assert [r.key for r in await storage.search("zebra")] == ["notes/zoo"]
    assert await storage.read("session/s1/snapshot_latest.json") == snapshot
    in_process = getattr(storage.memory.archive, "path", None) is None
    assert (getattr(storage, "_ephemeral", None) is not None) == in_process, "Strands snapshots an ephemeral stash"


@pytest.mark.anyio
async def test_bad_input_is_refused_and_a_failed_write_changes_nothing(embedder, tmp_path):
    memory = SemanticMemory(embedder=embedder)
    assert SemanticStorage(memory).memory is memory, "an empty memory given is the memory used"
    for arguments, message in [
        ({"memory": memory, "archive_path": tmp_path / "x.db"}, r"build one, not \['archive_path'\]"),
        ({"embedder": embedder, "max_messages": 10}, "max_messages=10: a storage keeps every entry"),
        ({"embedder": embedder, "max_results": 0}, "max_results must be an integer >= 1, got 0"),
        ({"embedder": embedder, "min_similarity": 1.5}, "min_similarity must be a cosine similarity in -1..1"),
        ({"embedder": embedder, "unindexed_prefixes": "session/"}, "unindexed_prefixes must be a list"),
    ]:
        with pytest.raises(ConfigurationError, match=message):
            SemanticStorage(**arguments)
    memory.close()
    storage = SemanticStorage(embedder=embedder, archive_path=tmp_path / "s.db")
    await storage.write("k", b"kept")
    with pytest.raises(StorageError, match="takes bytes"):
        await storage.write("k", "text")  # type: ignore[arg-type]
    storage.memory.archive.close()
    with pytest.raises(StorageError, match="Failed to write 'k'"):
        await storage.write("k", b"lost")
    storage.close()
    reopened = SemanticStorage(embedder=embedder, archive_path=tmp_path / "s.db")
    assert await reopened.read("k") == b"kept"
    reopened.close()
