"""Message encoding: ``decode_message`` inverts ``encode_message`` exactly, with or without bytes values."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from strands.types.session import decode_bytes_values, encode_bytes_values

from strands_semantic_memory.messages._codec import BYTES_MARKER, ESCAPE_KEY, _loads, decode_message, encode_message

_text = st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=40) | st.sampled_from(
    [BYTES_MARKER, ESCAPE_KEY, "data", "\\u005f", "\x00", "\ud800", 'a "quoted" \\ value']
)
_leaf = _text | st.binary(max_size=20) | st.integers() | st.booleans() | st.none()


def _look_alikes(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """The message's own dicts shaped like the markers: Strands' bytes marker, and this library's escape."""
    return st.fixed_dictionaries({BYTES_MARKER: st.just(True), "data": st.sampled_from(["AAE=", "", "not base64"])}) | (
        st.fixed_dictionaries({ESCAPE_KEY: st.dictionaries(_text, inner, max_size=2)})
    )


_values = st.recursive(
    _leaf,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3) | _look_alikes(inner),
    max_leaves=12,
)


def _reserved(value: Any) -> bool:
    """Whether a dict anywhere in ``value`` has one of the marker keys."""
    if isinstance(value, dict):
        return BYTES_MARKER in value or ESCAPE_KEY in value or any(_reserved(v) for v in value.values())
    return isinstance(value, list) and any(_reserved(v) for v in value)


@settings(max_examples=300, deadline=None)
@given(content=st.lists(st.dictionaries(_text, _values, max_size=3), max_size=3))
def test_round_trip_is_exact(content: list[dict[str, Any]]) -> None:
    message: Any = {"role": "user", "content": content}
    data = encode_message(message)
    assert decode_message(data) == message
    assert decode_message(data.decode("utf-8", "surrogatepass")) == message
    if _reserved(message):
        return
    # Without look-alikes: what Strands' session encoding reads, and byte for byte what json.dumps writes of it
    # (UTF-8; ASCII escapes throughout when a lone surrogate has no UTF-8).
    assert decode_message(data) == decode_bytes_values(json.loads(data))
    plain = encode_bytes_values(message)
    try:
        expected = json.dumps(plain, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:
        expected = json.dumps(plain, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    assert data == expected


def test_bytes_values_come_back_as_bytes() -> None:
    message: Any = {"role": "user", "content": [{"image": {"format": "png", "source": {"bytes": b"\x89PNG\x00"}}}]}
    decoded: Any = decode_message(encode_message(message))
    assert decoded["content"][0]["image"]["source"]["bytes"] == b"\x89PNG\x00"


def test_escaped_marker_key_is_still_decoded() -> None:
    """A key spelled with JSON escapes (a hand-written state, say) decodes as Strands' sessions would."""
    data = b'{"role":"user","content":[{"x":{"\\u005f_bytes_encoded__":true,"data":"AAE="}}]}'
    decoded: Any = decode_message(data)
    assert decoded["content"][0]["x"] == b"\x00\x01"


def test_a_dict_shaped_like_the_bytes_marker_comes_back_as_that_dict() -> None:
    """A tool input that looks like Strands' bytes marker is the message's own data, not bytes."""
    forged = {BYTES_MARKER: True, "data": "AAE="}
    message: Any = {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t", "name": "n", "input": forged}}]}
    decoded: Any = decode_message(encode_message(message))
    assert decoded == message
    assert decoded["content"][0]["toolUse"]["input"] == forged
    escape = {ESCAPE_KEY: {"a": b"\x01"}}  # the escape key itself, with bytes inside
    message = {"role": "user", "content": [{"text": "x"}], "extra": escape}
    assert decode_message(encode_message(message)) == message


def test_archives_written_before_the_escape_decode_as_before() -> None:
    """Stored bytes values (Strands' form, written by earlier releases too) still come back as bytes."""
    data = b'{"role":"user","content":[{"image":{"source":{"bytes":{"__bytes_encoded__":true,"data":"AAE="}}}}]}'
    decoded: Any = decode_message(data)
    assert decoded["content"][0]["image"]["source"]["bytes"] == b"\x00\x01"


def _outcome(read: Any, data: bytes) -> tuple[Any, ...]:
    try:
        return ("value", json.dumps(read(data)))
    except ValueError as error:  # JSONDecodeError and UnicodeDecodeError
        return ("error", type(error), str(error))


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None)
@given(
    value=_json_values,
    encoding=st.sampled_from(["utf-8", "utf-16-le", "utf-16-be", "utf-32-le", "utf-8-sig"]),
    before=st.sampled_from(["", " ", "\n"]),
    after=st.sampled_from(["", " ", "\n", "x", "}", "{}"]),
    cut=st.integers(0, 3),
)
def test_archived_bytes_are_read_as_json_loads_reads_them(value, encoding, before, after, cut):
    data = (before + json.dumps(value, ensure_ascii=False) + after).encode(encoding, "surrogatepass")
    for variant in (data, data[: len(data) - cut], b"{" + data[1:]):
        assert _outcome(_loads, variant) == _outcome(json.loads, variant)
