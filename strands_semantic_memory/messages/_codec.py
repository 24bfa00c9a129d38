"""Archived records: stable indices, oldest-first order, and the byte accounting behind memory limits.

Indices are handed out in archive order and never reused, so they are positions in the conversation's
archived history. Eviction only ever removes the oldest records, so the live indices always form one
contiguous run ``oldest..newest``.

Byte accounting is an estimate of what one archived message costs, documented so limits are predictable. The
in-process archive (``InMemoryArchive``) counts:

- the message as compact UTF-8 JSON (this is how it is held in memory: decoding happens only for hits);
- per stored vector, what its tier of the vector index holds for it
  (``bytes_per_vector``: ``4 * dimension + 8`` in
  the exact tier, whose id map holds one int64 per vector);
- ``POSTING_BYTES`` per distinct term of the message in the lexical (BM25) index;
- ``IN_PROCESS_RECORD_BYTES`` for its slot in the record table.

``record_nbytes`` is the older, store-independent form (24 bytes of id bookkeeping per vector, 10 per posting,
176 per record) that stores without an in-process index (PostgreSQL) use for their limits.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import re
import uuid
from typing import Any

from strands.types.content import Message

logger = logging.getLogger(__name__)

RECORD_OVERHEAD = 176
"""Estimated bytes of bookkeeping per record in ``record_nbytes``."""

LEXICAL_ENTRY_BYTES = 10
"""Bytes per lexical entry in ``record_nbytes``."""

VECTOR_ID_OVERHEAD = 24
"""Bytes per stored vector beyond the vector itself in ``record_nbytes``."""

POSTING_BYTES = 6
"""Bytes per posting in the in-process lexical index: a uint32 index offset and a uint16 term count."""

IN_PROCESS_RECORD_BYTES = 80
"""Bytes per record in the in-process record table beyond its message: the ``bytes`` object's header (33), the
list slot (8), role code, key, counts and two times (32), the lexical index's document length and flag (5)."""

CHUNK_BITS = 8
"""Vector ids are ``(archive index << CHUNK_BITS) | chunk number``: up to 256 vectors per message."""

MAX_CHUNKS = 1 << CHUNK_BITS


def vector_id(index: int, chunk: int) -> int:
    """The id under which chunk ``chunk`` of archived message ``index`` is stored in the vector store."""
    return (index << CHUNK_BITS) | chunk


def message_index(vector_id_: int) -> int:
    """The archive index a vector id belongs to."""
    return int(vector_id_) >> CHUNK_BITS


_UTF8_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_ASCII_JSON = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"))  # encoders are stateless: shared


def _dumps(value: Any, **options: Any) -> bytes:
    utf8, ascii_only = (
        (_UTF8_JSON, _ASCII_JSON)
        if not options
        else (
            json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), **options),
            json.JSONEncoder(ensure_ascii=True, separators=(",", ":"), **options),
        )
    )
    text = utf8.encode(value)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate ("\\ud800" in a tool result) has no UTF-8 form; JSON's \\u escapes keep it exactly.
        return ascii_only.encode(value).encode("ascii")


BYTES_MARKER = "__bytes_encoded__"
"""Strands sessions' key for a bytes value written as ``{"__bytes_encoded__": true, "data": base64}``."""
ESCAPE_KEY = "__ssm_escaped__"
"""Wraps a message's own dict that holds ``BYTES_MARKER`` or this key, so it is not read as a marker."""


def _encode_value(value: Any) -> Any:
    if isinstance(value, bytes):
        return {BYTES_MARKER: True, "data": base64.b64encode(value).decode("ascii")}
    if isinstance(value, dict):
        encoded = {key: _encode_value(item) for key, item in value.items()}
        return {ESCAPE_KEY: encoded} if BYTES_MARKER in value or ESCAPE_KEY in value else encoded
    if isinstance(value, (list, tuple)):
        return [_encode_value(item) for item in value]
    return value


def _decode_value(value: Any) -> Any:
    if isinstance(value, dict):
        inner = value.get(ESCAPE_KEY)
        if len(value) == 1 and isinstance(inner, dict):  # the message's own dict, whatever its keys
            return {key: _decode_value(item) for key, item in inner.items()}
        if value.get(BYTES_MARKER) is True and "data" in value:
            return base64.b64decode(value["data"])
        return {key: _decode_value(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_decode_value(item) for item in value]
    return value


def encode_message(message: Message) -> bytes:
    """Serialize a message exactly, as compact JSON (bytes values base64-encoded the way Strands sessions do).

    Any text survives byte for byte: NUL characters and lone surrogates are written as JSON escapes (a message
    holding a lone surrogate is written with ASCII escapes throughout). Values JSON cannot hold (a ``datetime``
    in a tool input, say) are stored as their ``str()`` with a warning, so the message is kept rather than
    refused. A dict of the message's own that looks like Strands' bytes marker (a tool input
    ``{"__bytes_encoded__": true, "data": "AAE="}``) is wrapped (``ESCAPE_KEY``) so it comes back as that dict,
    not as bytes.

    Args:
        message: The message.

    Returns:
        JSON bytes (UTF-8, or ASCII for a message holding lone surrogates).
    """
    encodable = _encode_value(message)
    try:
        return _dumps(encodable)
    except (TypeError, ValueError) as error:
        logger.warning("error=<%s> | message holds values JSON cannot represent, storing them as text", error)
        return _dumps(encodable, default=str)


def encode_json(value: Any) -> bytes:
    """Compact JSON bytes of an already JSON-shaped value, with the same guarantees as ``encode_message``."""
    return _dumps(value)


_UNSEARCHABLE = re.compile("[\x00\ud800-\udfff]")


def searchable_text(text: str) -> str:
    """The form of a rendered message that indexes and embedders receive.

    NUL characters become spaces and lone surrogates U+FFFD: tokenizers, PostgreSQL's text type and UTF-8 refuse
    them. Only the indexed text changes; the archived message keeps them (see ``encode_message``).
    """
    return _UNSEARCHABLE.sub(lambda m: " " if m.group(0) == "\x00" else "\ufffd", text)


def key_number(key: str) -> int | None:
    """The compact form of a ``record_key`` kept in memory; None for keys that never repeat (no tracking id)."""
    if not key.startswith("t:"):
        return None
    return int(key[2:18], 16)


def record_key(tracking_id: str | None, data: bytes) -> str:
    """The idempotency key of a message about to be archived.

    A message with a tracking id is keyed by the id *and* its bytes, so a retried archive of the same message
    returns its first index, while a different message that reuses the id is archived too. A message without
    one cannot be told from another with the same text (two users' "ok"), so it gets a fresh key: archived each
    time.
    """
    if not tracking_id:
        return "u:" + uuid.uuid4().hex
    digest = hashlib.blake2b(data, digest_size=16, person=b"ssm-record")
    digest.update(tracking_id.encode("utf-8", "surrogatepass"))
    return "t:" + digest.hexdigest()


_DECODER = json.JSONDecoder()  # what json.loads uses without arguments


def _loads(data: bytes | str) -> Any:
    """``json.loads(data)``, reading what ``encode_message`` writes (UTF-8 bytes of an object) in one step.

    For bytes starting with ``{``, ``json.loads`` decodes UTF-8 (or UTF-16/32 when the second byte is NUL, which
    UTF-8 JSON text cannot hold after ``{``) and hands the text to its decoder, which then only checks that nothing
    but whitespace follows the value. Reading such bytes here directly takes about half the time; anything else
    (other bytes, text, an error, or more after the value) is left to ``json.loads``, so the result and every error
    are its own.
    """
    if isinstance(data, bytes) and data[:1] == b"{":
        try:
            text = data.decode("utf-8", "surrogatepass")
            value, end = _DECODER.raw_decode(text)
        except ValueError:
            pass  # json.loads reads it (another encoding) or raises its own error
        else:
            if end == len(text):
                return value
    return json.loads(data)


def decode_message(data: bytes | str) -> Message:
    """Inverse of ``encode_message``."""
    decoded: Any = _loads(data)
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if b"__bytes_encoded__" in raw or b"__ssm_escaped__" in raw or b"\\u" in raw:  # else no key spells a marker
        decoded = _decode_value(decoded)
    return decoded  # type: ignore[no-any-return]


MAX_INDEX = (1 << (63 - CHUNK_BITS)) - 1
"""The largest archive index whose vector ids fit FAISS's int64 ids."""


def record_nbytes(data_len: int, vector_count: int, dimension: int, lexical_terms: int = 0) -> int:
    """Estimated bytes of one record, store-independent (see the module docstring)."""
    return (
        data_len
        + vector_count * (dimension * 4 + VECTOR_ID_OVERHEAD)
        + lexical_terms * LEXICAL_ENTRY_BYTES
        + RECORD_OVERHEAD
    )
