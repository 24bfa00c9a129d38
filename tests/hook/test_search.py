"""The archive search of a user turn: what it costs in database round trips on an archive opened from PostgreSQL."""

from __future__ import annotations

import psycopg

from strands_semantic_memory import SemanticMemory, SemanticMemoryHook
from tests.support.archives import new_user_id
from tests.support.conversations import distractor_conversation
from tests.support.postgres import RoundTrips, pg_memory

QUESTIONS = ["What about the sourdough baking?", "Who reviews the job interview?", "the hiking trip plan"]


def test_an_archive_opened_from_postgresql_is_counted_once_then_a_turn_is_two_round_trips(pg_uri, embedder):
    """A process that opens an archive and has not archived yet counts it once, not on every turn."""
    from strands_semantic_memory.archives.postgres import PostgresArchive

    namespace = new_user_id("hook")
    writer = pg_memory(pg_uri, embedder, namespace)
    connection = psycopg.connect(pg_uri, autocommit=True, prepare_threshold=0)  # as the pool's connections are
    reader = SemanticMemory(embedder=embedder, archive=PostgresArchive(pg_uri, namespace, connection=connection))
    hook = SemanticMemoryHook(memory=reader)
    try:
        assert hook.preview("the hiking trip").passages == [], "nothing archived yet"
        writer.add(distractor_conversation(40))
        writer.embed_pending()
        assert reader.version == 0, "the reader changed nothing: it cannot know the archive is not empty"
        assert hook.preview("warm up: the solar panels").passages, "counted again while it was empty: found"
        counts = []
        for question in QUESTIONS:
            with RoundTrips(connection) as turn:
                assert hook.preview(question).passages, question
            counts.append(turn.count)
        assert counts == [2] * len(QUESTIONS), "the search, then the passages' messages"
    finally:
        reader.close()
        writer.close()
        connection.close()
