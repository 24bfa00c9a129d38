"""The schema: created once and versioned at 1; a database of another version is refused as it is."""

import psycopg
import pytest

from strands_semantic_memory.archives._protocol import SearchFilter
from strands_semantic_memory.archives.postgres import SCHEMA_VERSION
from strands_semantic_memory.errors import ArchiveError
from strands_semantic_memory.messages._terms import TOKENIZER_VERSION
from tests.support.conversations import PLANTED_TURN
from tests.support.postgres import make_record


def test_schema_is_created_once_and_versioned(make_archive, fresh_database):
    first = make_archive(fresh_database)
    second = make_archive(fresh_database)
    assert len(first) == 0 and len(second) == 0
    with psycopg.connect(fresh_database) as connection:
        assert connection.execute("SELECT value FROM ssm_meta WHERE key = 'schema_version'").fetchone() == (
            str(SCHEMA_VERSION),
        )
        (storage,) = connection.execute(
            "SELECT attstorage FROM pg_attribute WHERE attrelid = 'ssm_archive'::regclass AND attname = 'embedding'"
        ).fetchone()
        assert storage == "m", "vectors stay in the row: exact scans read no TOAST"
        assert SCHEMA_VERSION == 1
        connection.execute("UPDATE ssm_meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(ArchiveError, match="newer than this library"):
        len(make_archive(fresh_database))
    with psycopg.connect(fresh_database, autocommit=True) as connection:
        connection.execute("UPDATE ssm_meta SET value = '0' WHERE key = 'schema_version'")
    with pytest.raises(ArchiveError, match="reads version 1 only"):
        len(make_archive(fresh_database))
    with psycopg.connect(fresh_database) as connection:
        assert connection.execute("SELECT value FROM ssm_meta WHERE key = 'schema_version'").fetchone() == ("0",)


def test_terms_of_another_tokenizer_version_are_indexed_again_once(make_archive, fresh_database, embedder):
    """The tokenizer check guards a later change of ``tokenize``: stored terms of another version are rebuilt from
    the stored text, once, and the version is recorded."""
    archive = make_archive(fresh_database)
    archive.add([make_record(PLANTED_TURN), make_record("painted paintings")])
    with psycopg.connect(fresh_database, autocommit=True) as connection:
        connection.execute("UPDATE ssm_archive SET tsv = 'stale'::tsvector WHERE chunk = 0")
        connection.execute(
            "UPDATE ssm_meta SET value = %s WHERE key = 'tokenizer_version'", (str(TOKENIZER_VERSION - 1),)
        )
    archive.close()  # the last archive on the pool: the next one checks the schema again, as a new process would
    again = make_archive(fresh_database, user_id=archive.user_id)
    found = again.candidates(None, "paint", 0, 5, SearchFilter())
    assert list(found.lexical) == [1]
    with psycopg.connect(fresh_database) as connection:
        assert connection.execute("SELECT value FROM ssm_meta WHERE key = 'tokenizer_version'").fetchone() == (
            str(TOKENIZER_VERSION),
        )
