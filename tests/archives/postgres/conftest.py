"""Fixtures of the PostgreSQL tests: a store factory over the session's server, and a database of one's own."""

import itertools
import time

import psycopg
import pytest

from strands_semantic_memory.archives.postgres import PostgresArchive
from tests.support.archives import new_user_id


@pytest.fixture
def make_archive(pg_uri):
    """PostgresArchive factory (fresh user_id unless given); every store is closed afterwards."""
    stores = []

    def make(uri=None, user_id=None, **options):
        store = PostgresArchive(uri or pg_uri, user_id or new_user_id("store"), **options)
        stores.append(store)
        return store

    yield make
    for store in stores:
        store.close()


_databases = itertools.count()


@pytest.fixture
def fresh_database(pg_uri):
    """A database of its own (for tests that need the whole ssm_archive table), dropped afterwards."""
    name = f"ssm_test_{next(_databases)}_{time.time_ns()}"
    with psycopg.connect(pg_uri, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    yield psycopg.conninfo.make_conninfo(pg_uri, dbname=name)
    with psycopg.connect(pg_uri, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE {name} WITH (FORCE)")
