"""Message encoding: ``decode_message`` inverts ``encode_message`` exactly, with or without bytes values."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from strands.types.session import decode_bytes_values, encode_bytes_values

from strands_semantic_memory.archive import decode_message, encode_message

_text = st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=40) | st.sampled_from(
    ["__bytes_encoded__", "\\u005f", "\x00", "\ud800", 'a "quoted" \\ value']
)
_leaf = _text | st.binary(max_size=20) | st.integers() | st.booleans() | st.none()
_values = st.recursive(
    _leaf, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3), max_leaves=12
)


@settings(max_examples=300, deadline=None)
@given(content=st.lists(st.dictionaries(_text, _values, max_size=3), max_size=3))
def test_round_trip_is_exact(content: list[dict[str, Any]]) -> None:
    message: Any = {"role": "user", "content": content}
    data = encode_message(message)
    assert decode_message(data) == message
    assert decode_message(data.decode("utf-8", "surrogatepass")) == message
    # The same as walking every value for Strands' bytes marker, which the fast path skips when it cannot match.
    assert decode_message(data) == decode_bytes_values(json.loads(data))
    # Byte for byte what json.dumps writes (UTF-8; ASCII escapes throughout when a lone surrogate has no UTF-8).
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
