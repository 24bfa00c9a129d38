"""Messages as the archive keeps them: exact JSON bytes, the idempotency key and the forgetting digest.

Any message survives byte for byte: NUL characters and lone surrogates are written as JSON escapes (a message holding
a lone surrogate is written with ASCII escapes throughout); ``bytes`` values are base64-encoded the way Strands
sessions write them, and a dict of the message's own that looks like that marker is wrapped so it comes back as that
dict. Values JSON cannot hold (a ``datetime`` in a tool input) are stored as their ``str()`` with a warning, so the
message is kept rather than refused.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import re
import uuid
from typing import Any

from strands.types.content import Message

__all__ = ["decode_message", "encode_message", "forget_digest", "record_key", "searchable_text"]

logger = logging.getLogger(__name__)

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


def _dumps(value: Any, default: Any = None) -> bytes:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=default)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate has no UTF-8 form; JSON's \u escapes keep it exactly
        return json.dumps(value, ensure_ascii=True, separators=(",", ":"), default=default).encode("ascii")


def encode_message(message: Message) -> bytes:
    """The message as compact JSON bytes, exactly (see the module docstring)."""
    encodable = _encode_value(message)
    try:
        return _dumps(encodable)
    except (TypeError, ValueError) as error:
        logger.warning("error=<%s> | message holds values JSON cannot represent, storing them as text", error)
        return _dumps(encodable, default=str)


def decode_message(data: bytes | str) -> Message:
    """The message ``encode_message`` wrote, as a fresh object."""
    decoded: Any = json.loads(data)
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if b"__bytes_encoded__" in raw or b"__ssm_escaped__" in raw or b"\\u" in raw:  # else no key spells a marker
        decoded = _decode_value(decoded)
    return decoded  # type: ignore[no-any-return]


_UNSEARCHABLE = re.compile("[\x00\ud800-\udfff]")


def searchable_text(text: str) -> str:
    """The text indexes and embedders receive: NUL as a space, lone surrogates as U+FFFD (the archive keeps both)."""
    return _UNSEARCHABLE.sub(lambda m: " " if m.group(0) == "\x00" else "\ufffd", text)


def record_key(data: bytes, tracking_id: object) -> str:
    """The idempotency key of a message: archiving it again returns its first index.

    A message with a Strands tracking id (every message an agent adds has one, inside its bytes) is keyed by its
    bytes, so a retried archive finds it, while another message that reuses the id with other content is archived
    too. One without a tracking id cannot be told from another with the same text (two users' "ok"), so it gets a
    fresh key and is archived each time.
    """
    if not isinstance(tracking_id, str) or not tracking_id:
        return "u:" + uuid.uuid4().hex
    return "t:" + hashlib.blake2b(data, digest_size=16, person=b"ssm-record").hexdigest()


def forget_digest(secret: bytes, data: bytes) -> bytes:
    """What an archive keeps of a forgotten message: a keyed digest of its exact bytes, never its text.

    A later copy of the same message (a live agent's context, a resumed session) has the same bytes, tracking id
    included, so the archive recognises it and does not archive it again; nothing of the text can be read back.
    """
    return hmac.new(secret, data, hashlib.sha256).digest()[:16]
