"""SemanticMemory.reembed and engine.drop_vectors on every archive, with the real model.

After a change of embedding model, every message is embedded again with the new one (and the archive is bound to
it); the messages and their indices stay, and the progress reports count up to the total.
"""

from __future__ import annotations

import pytest

from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.engine import ReembedProgress, drop_vectors
from strands_semantic_memory.errors import EmbeddingModelMismatchError
from tests.support.archives import new_user_id, vector_owners
from tests.support.conversations import text_message
from tests.support.embedders import CountingEmbedder, FlakyEmbedder, RenamedEmbedder

TEXTS = [f"message {n} about {topic}" for n, topic in enumerate(["hiking", "taxes", "sourdough", "chess", "jazz"])]


def test_reembed_embeds_every_message_again_with_progress(make_memory, embedder):
    counting = CountingEmbedder(embedder)
    memory = make_memory(embedder=counting, embedding_batch_size=2)
    memory.add([text_message("user", t) for t in TEXTS])
    memory.add([{"role": "assistant", "content": []}])  # nothing to embed: not counted
    assert counting.documents_embedded == 5
    seen: list[ReembedProgress] = []

    embedded = memory.reembed(progress=seen.append)

    assert embedded == 5
    assert counting.documents_embedded == 10
    assert [(p.done, p.total) for p in seen] == [(0, 5), (2, 5), (4, 5), (5, 5), (5, 5)]
    assert memory.stats().pending_embedding_count == 0
    assert vector_owners(memory)[0] == {0, 1, 2, 3, 4}
    assert memory.search("bread baking", top_k=1)[0].index == 2


def test_reembed_pending_only_embeds_the_backlog_and_keeps_the_vectors_there_are(make_memory, embedder):
    flaky = FlakyEmbedder(embedder)
    memory = make_memory(embedder=flaky)
    memory.add([text_message("user", t) for t in TEXTS[:2]])
    flaky.failing = True
    memory.add([text_message("user", t) for t in TEXTS[2:]])  # the embedding service is down: they wait
    flaky.failing = False
    before = flaky.documents_embedded
    seen: list[ReembedProgress] = []

    assert memory.reembed(pending_only=True, progress=seen.append) == 3

    assert flaky.documents_embedded - before == 3
    assert (seen[0].done, seen[0].total, seen[-1].done, seen[-1].total) == (0, 3, 3, 3)
    assert vector_owners(memory)[0] == {0, 1, 2, 3, 4}


@pytest.mark.parametrize("kind", ["sqlite", "pgvector"])
def test_a_durable_archive_built_by_another_model_is_embedded_again_and_bound_to_the_new_one(
    kind, embedder, tmp_path, request
):
    from strands_semantic_memory.archives.postgres import PostgresArchive
    from strands_semantic_memory.archives.sqlite import SqliteArchive

    namespace = new_user_id("reembed")

    def archive():
        if kind == "sqlite":
            return SqliteArchive(tmp_path / "archive.sqlite3")
        return PostgresArchive(request.getfixturevalue("pg_uri"), namespace)

    old = SemanticMemory(embedder=RenamedEmbedder(embedder, "old-model"), archive=archive())
    old.add([text_message("user", t) for t in TEXTS])
    old.close()
    new_model = CountingEmbedder(embedder)
    reopened = archive()
    with pytest.raises(EmbeddingModelMismatchError):
        SemanticMemory(embedder=new_model, archive=reopened).search("x")
    drop_vectors(reopened, new_model.model_id)
    memory = SemanticMemory(embedder=new_model, archive=reopened)
    assert memory.stats().pending_embedding_count == 5  # the messages stay, waiting for their vectors

    assert memory.reembed() == 5

    assert new_model.documents_embedded == 5
    assert [m for _, m in memory.messages()] == [text_message("user", t) for t in TEXTS]
    memory.close()
    again = archive()
    with pytest.raises(EmbeddingModelMismatchError):
        SemanticMemory(embedder=RenamedEmbedder(embedder, "old-model"), archive=again).search("x")
    again.close()
    memory = SemanticMemory(embedder=new_model, archive=archive())
    assert memory.stats().pending_embedding_count == 0
    assert memory.search("bread baking", top_k=1)[0].index == 2
    memory.close()
