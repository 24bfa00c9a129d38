"""Intake: a message Strands could not have produced is refused before anything is archived."""

from __future__ import annotations

import pytest

from strands_semantic_memory.engine._intake import ROLES, new_records
from strands_semantic_memory.errors import InvalidMessageError, SemanticMemoryError
from tests.support.conversations import text_message


def test_the_roles_are_strands_roles():
    assert ROLES == ("user", "assistant")


@pytest.mark.parametrize("role", ["bot", "system", "tool", "User", "", None, 1])
def test_a_message_with_another_role_is_refused_and_nothing_is_archived(memory, role):
    bad = {"role": role, "content": [{"text": "hello"}]}
    with pytest.raises(InvalidMessageError, match=rf"messages\[1\] has role {role!r}") as raised:
        memory.add([text_message("user", "fine"), bad])
    assert isinstance(raised.value, SemanticMemoryError)
    assert len(memory) == 0


def test_user_and_assistant_messages_become_records():
    records = new_records([text_message("user", "question"), text_message("assistant", "answer")])
    assert [r.role for r in records] == ["user", "assistant"]
