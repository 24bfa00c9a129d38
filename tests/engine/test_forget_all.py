"""Forgetting a user: one call removes every message, vector, term and storage entry, on every archive."""

from __future__ import annotations

import pytest

from strands_semantic_memory import SemanticMemory
from tests.support.archives import new_user_id, reopened, vector_owners
from tests.support.conversations import distractor_conversation, text_message
from tests.support.embedders import RecordingEmbedder

MARKER = "QUOKKA-7f3e91-MARKER"


def said_by_the_user(memory: SemanticMemory, count: int = 40) -> list[int]:
    messages = distractor_conversation(count)
    messages[count // 2] = text_message("user", f"My recovery phrase is {MARKER}, keep it safe.")
    indices = memory.add(messages, session_id="s-1")
    memory._archive_entries([{"role": "stored", "content": [{"text": f"stored entry {MARKER}"}]}])
    memory.embed_pending()
    return indices


def test_forget_all_removes_everything_and_the_memory_goes_on(make_memory, store_kind):
    memory = make_memory(user_id=new_user_id("alice"))
    indices = said_by_the_user(memory)
    assert memory.search(MARKER) and vector_owners(memory)[1] > 0
    version = memory.version
    assert memory.forget_all() == len(indices) + 1
    assert len(memory) == 0 and memory.indices == [] and memory.version > version
    assert memory.search(MARKER) == [] and memory.find_text(MARKER) == []
    assert vector_owners(memory) == (set(), 0)
    stats = memory.stats()
    assert (stats.message_count, stats.vector_count, stats.pending_embedding_count) == (0, 0, 0)
    [after] = memory.add([text_message("user", "a new beginning")])
    assert after == indices[-1] + 2, "indices are not handed out again"
    assert [h.index for h in memory.search("new beginning")] == [after]
    if store_kind != "in_memory":
        again = SemanticMemory(embedder=memory.embedder, archive=reopened(memory.archive))
        assert again.indices == [after] and again.find_text(MARKER) == []


def test_the_sqlite_files_hold_nothing_of_the_user_after(tmp_path, embedder):
    path = tmp_path / "alice.sqlite3"
    memory = SemanticMemory(embedder=embedder, archive_path=path, user_id="alice")
    said_by_the_user(memory)

    def files_holding(needle: bytes) -> list[str]:
        return [p.name for p in sorted(tmp_path.iterdir()) if p.is_file() and needle in p.read_bytes()]

    assert files_holding(MARKER.encode()), "before: the marker is in the file or its WAL"
    memory.forget_all()
    assert files_holding(MARKER.encode()) == [], "after: in no byte of the file, its -wal or anything beside"
    assert files_holding(b"recovery phrase") == []
    memory.add([text_message("user", "still alice's memory")])
    memory.close()
    assert SemanticMemory(embedder=embedder, archive_path=path).user_id == "alice"


def test_postgres_holds_no_row_of_the_user_after_and_other_users_are_untouched(pg_uri, embedder):
    import psycopg

    from strands_semantic_memory.archives.postgres import PostgresArchive

    alice_id, bob_id = new_user_id("alice"), new_user_id("bob")
    alice = SemanticMemory(embedder=embedder, archive=PostgresArchive(pg_uri, alice_id))
    bob = SemanticMemory(embedder=embedder, archive=PostgresArchive(pg_uri, bob_id))
    said_by_the_user(alice)
    bob.add([text_message("user", f"bob's own {MARKER} note")], session_id="b-1")
    bob.embed_pending()

    def rows_naming(needle: str) -> dict[str, int]:
        """Rows of every table of the schema whose text form holds ``needle`` (bytea too: its hex and its text)."""
        found = {}
        with psycopg.connect(pg_uri) as connection:  # not through the archive: using it registers its user again
            tables = [
                t
                for (t,) in connection.execute(
                    "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
                ).fetchall()
            ]
            for table in tables:
                (count,) = connection.execute(
                    f"SELECT count(*) FROM {table} AS t WHERE t::text LIKE %s OR t::text LIKE %s",  # noqa: S608
                    (f"%{needle}%", f"%{needle.encode().hex()}%"),
                ).fetchone()
                if count:
                    found[table] = count
        return found

    before = rows_naming(bob_id)
    assert rows_naming(alice_id)["ssm_archive"] > 40 and rows_naming(alice_id)["ssm_users"] == 1
    assert alice.forget_all() == 41
    assert rows_naming(alice_id) == {}, "no row of alice in any table, her row in ssm_users included"
    assert rows_naming(bob_id) == before and bob.search(MARKER)[0].session_id == "b-1"
    assert [h.index for h in alice.search(MARKER)] == []
    [after] = alice.add([text_message("user", "alice again")])
    assert after == 41 and rows_naming(alice_id)["ssm_users"] == 1, "registered again, her indices go on"


@pytest.mark.parametrize("store_kind", ["in_memory", "sqlite"], indirect=True)
def test_a_batch_embedding_when_the_user_is_forgotten_is_dropped(make_memory, embedder):
    held = RecordingEmbedder(embedder, hold=True)
    memory = make_memory(embedder=held, embedding="background")
    memory.add([text_message("user", f"{MARKER} said just before the user asked to be forgotten")])
    assert held.started.wait(30), "the background thread holds the batch"
    assert memory.forget_all() == 1
    held.release.set()
    memory.embed_pending()  # waits for the thread's batch: its vectors belong to a forgotten archive
    assert vector_owners(memory) == (set(), 0) and memory.stats().vector_count == 0
    [index] = memory.add([text_message("user", "after the forgetting")])
    memory.embed_pending()
    assert vector_owners(memory)[0] == {index}
    memory.close()
