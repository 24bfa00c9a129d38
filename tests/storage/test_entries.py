"""A storage entry as an archived record: the text indexed for its bytes, and the exact bytes given back."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strands._context_manager.stash import _encode as stash_encode
from strands.vended_plugins.context_offloader.plugin import _frame_content

from strands_semantic_memory.messages import decode_message, encode_message
from strands_semantic_memory.storage._entries import (
    ROLE,
    entry_bytes,
    entry_key,
    entry_message,
    entry_text,
    texts_in,
)


@pytest.mark.parametrize(
    ("data", "text"),
    [
        (b"plain text", "plain text"),
        ("Zürich".encode(), "Zürich"),
        # What Strands' stash writes (json.dumps, ASCII escapes): the block's text, escapes decoded.
        (stash_encode({"text": "I moved to Zürich\nin May"}), "I moved to Zürich\nin May"),
        (stash_encode({"json": {"city": "Zürich", "n": 3}}), '{"city": "Zürich", "n": 3}'),
        (stash_encode({"image": {"format": "png", "source": {"bytes": b"\x89PNG"}}}), "[image (png)]"),
        (
            stash_encode({"toolResult": {"toolUseId": "t", "status": "success", "content": [{"text": "42 rows"}]}}),
            "[tool result success] 42 rows",
        ),
        # Strands' ContextOffloader frames: the content of a text or JSON frame; nothing for media.
        (_frame_content(b"line one\nline two", "text/plain"), "line one\nline two"),
        (_frame_content(b'{"rows": 42}', "application/json"), '{"rows": 42}'),
        (_frame_content(b"\x89PNG\r\n\x1a\n", "image/png"), None),
        # Other JSON is indexed as written; text that is not UTF-8 is not indexed.
        (b'{"messages": [], "state": {}}', '{"messages": [], "state": {}}'),
        (b"[1, 2, 3]", "[1, 2, 3]"),
        (b"{not json", "{not json"),
        (bytes(range(256)), None),
        (b"\xff\xfe", None),
        (b"", ""),
    ],
)
def test_the_text_indexed_for_an_entry(data, text):
    assert entry_text(data) == text


def test_a_record_keeps_the_text_once_and_other_bytes_beside_it():
    plain = entry_message("a/b", b"hello world", indexed=True)
    assert plain == {
        "role": ROLE,
        "content": [{"text": "hello world"}],
        "metadata": {"custom": {"strands_storage": {"key": "a/b"}}},
    }
    stashed = entry_message("a/c", stash_encode({"text": "hi"}), indexed=True)
    assert stashed["content"] == [{"text": "hi"}]
    assert stashed["metadata"]["custom"]["strands_storage"]["data"] == b'{"text": "hi"}'
    binary = entry_message("a/d", b"\xff", indexed=True)
    assert binary["content"] == [] and binary["metadata"]["custom"]["strands_storage"]["data"] == b"\xff"
    unindexed = entry_message("a/e", b"kept, not indexed", indexed=False)
    assert unindexed["content"] == [] and entry_bytes(unindexed) == b"kept, not indexed"


def test_only_records_marked_as_entries_have_a_key():
    assert entry_key(entry_message("k", b"x", indexed=True)) == "k"
    assert entry_key({"role": "user", "content": [{"text": "x"}]}) is None
    forged_role = {"role": "user", "content": [], "metadata": {"custom": {"strands_storage": {"key": "k"}}}}
    assert entry_key(forged_role) is None
    assert entry_key({"role": ROLE, "content": [], "metadata": {"custom": {"strands_storage": {"key": 5}}}}) is None
    with pytest.raises(ValueError, match="not an archived storage entry"):
        entry_bytes({"role": "user", "content": []})


def test_a_lone_surrogate_in_stashed_json_keeps_the_exact_bytes():
    data = json.dumps({"text": "broken \ud800 pair"}).encode()
    message = entry_message("k", data, indexed=True)
    assert message["content"] == [{"text": "broken \ud800 pair"}]
    assert entry_bytes(decode_message(encode_message(message))) == data


_STASHED = st.builds(
    lambda text, ascii_only: json.dumps({"text": text}, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass"),
    st.text(max_size=200),
    st.booleans(),
)
_FRAMED = st.builds(
    _frame_content, st.binary(max_size=200), st.sampled_from(["text/plain", "application/json", "image/png"])
)
ENTRY_BYTES = st.one_of(
    st.binary(max_size=300), st.text(max_size=300).map(lambda t: t.encode("utf-8", "surrogatepass")), _STASHED, _FRAMED
)


@settings(max_examples=300, derandomize=True, deadline=None)
@given(data=ENTRY_BYTES, indexed=st.booleans())
def test_any_bytes_come_back_exactly_through_the_archive_codec(data, indexed):
    message = entry_message("key", data, indexed=indexed)
    archived = decode_message(encode_message(message))
    assert entry_bytes(archived) == data
    assert entry_key(archived) == "key"


def test_texts_in_a_context_are_the_stash_entries_they_would_make():
    messages = [
        {"role": "user", "content": [{"text": "first"}, {"text": "second"}]},
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t", "name": "n", "input": {}}}]},
        {
            "role": "user",
            "content": [
                {"toolResult": {"toolUseId": "t", "status": "success", "content": [{"text": "r"}, {"json": [1]}]}}
            ],
        },
    ]
    assert texts_in(messages) == {"first", "second", "r", "[1]"}
    assert {entry_text(stash_encode(b)) for b in messages[0]["content"]} <= texts_in(messages)
