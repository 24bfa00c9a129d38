"""The session of an agent, and the sessions a turn may recall: the one rule for users and sessions."""

from __future__ import annotations

import types

from hypothesis import given
from hypothesis import strategies as st

from strands_semantic_memory.messages._session import agent_scope, session_of, session_scope

ids = st.text(min_size=1, max_size=40).filter(lambda s: all(c.isprintable() for c in s))


@given(user=ids, session=st.one_of(st.none(), ids))
def test_a_named_user_recalls_every_session(user, session):
    assert session_scope(user, session) is None


@given(session=ids)
def test_without_a_user_only_the_agents_session_and_records_without_one(session):
    scope = session_scope(None, session)
    assert scope == frozenset({session, None})


def test_no_session_known_means_no_scope():
    assert session_scope(None, None) is None


def test_the_agents_session_id_is_read_and_checked(caplog):
    assert session_of(types.SimpleNamespace(session_id="monday")) == "monday"
    assert session_of(types.SimpleNamespace()) is None
    assert session_of(None) is None
    assert session_of(types.SimpleNamespace(session_id="bad\x00id")) is None
    assert "not a valid id" in caplog.text
    assert session_of(types.SimpleNamespace(session_id="x" * 10_000)) is None


def test_an_agents_scope_is_its_sessions_scope():
    agent = types.SimpleNamespace(session_id="monday")
    assert agent_scope(None, agent) == session_scope(None, "monday") == frozenset({"monday", None})
    assert agent_scope("alice", agent) is None and agent_scope(None, None) is None
