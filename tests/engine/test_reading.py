"""Reading by index: a missing index is the library's error, and still a KeyError."""

from __future__ import annotations

import pickle

import pytest

from strands_semantic_memory.errors import MessageNotFoundError, SemanticMemoryError
from tests.support.conversations import text_message


def test_a_missing_index_raises_message_not_found(memory):
    memory.add([text_message("user", "first"), text_message("assistant", "second")])
    memory.forget([0])
    for index in (0, 2, 999):
        with pytest.raises(MessageNotFoundError) as raised:
            memory.record(index)
        error = raised.value
        assert isinstance(error, SemanticMemoryError) and isinstance(error, KeyError)
        assert error.index == index and str(error) == f"no archived message with index {index}"
    with pytest.raises(KeyError):  # what callers written against a builtin KeyError catch
        memory.get(999)
    assert memory.get(1)["content"] == [{"text": "second"}]


def test_the_error_survives_pickling_with_its_index():
    copy = pickle.loads(pickle.dumps(MessageNotFoundError(7)))
    assert (
        isinstance(copy, MessageNotFoundError) and copy.index == 7 and str(copy) == "no archived message with index 7"
    )
