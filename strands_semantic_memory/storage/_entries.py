"""One storage entry as one archived record, and the text that stands for it in the indexes.

A ``write(key, data)`` becomes one archived Strands message::

    {"role": "stored",
     "content": [{"text": <the entry's text>}],             # empty for binary or unindexed entries
     "metadata": {"custom": {"strands_storage": {"key": <full key>, "data": <bytes>}}}}

``data`` is kept only when the text does not give the bytes back exactly (``text.encode("utf-8") == data``): a
plain-text entry is stored once, as its text; a JSON content block, a framed ``ContextOffloader`` entry or binary
data keeps its exact bytes beside the text extracted from it. The archive's codec keeps bytes values exactly, so
``entry_bytes`` returns what was written, byte for byte, on every archive.

What is indexed (``entry_text``):

- a Strands content block or tool-result item as JSON (what ``ContextManager``'s stash writes: ``{"text": ...}``,
  ``{"json": ...}``, ``{"toolResult": ...}``, media): its text, as this library renders messages (JSON escapes
  decoded, media as a placeholder such as ``[image (png)]``);
- a ``ContextOffloader`` frame (two length bytes, a MIME type, the content): the content, when the type is text
  or JSON;
- other UTF-8 text (plain text, other JSON): the text itself;
- anything else (bytes that are not UTF-8, media frames): nothing; the entry is kept, not indexed.

The role is ``"stored"``: a storage entry does not say who wrote it (the stash keeps user text, assistant text and
tool results alike), and the injected block shows the role as written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any, cast

from strands.types.content import Message

from strands_semantic_memory.engine._intake import STORAGE_ROLE
from strands_semantic_memory.messages import render_message

__all__ = ["ROLE", "entry_bytes", "entry_key", "entry_message", "entry_text", "stash_refs", "texts_in"]

ROLE = STORAGE_ROLE
"""The role of every archived storage entry (one that ``SemanticMemory.add`` refuses from any caller)."""

FIELD = "strands_storage"
"""The ``metadata.custom`` field that marks an archived record as a storage entry."""

_JSON_START = ("{", "[")
_UNSTASHED = frozenset({"toolUse", "reasoningContent", "cachePoint"})  # blocks Strands' stash does not write
_FRAME_TYPE = re.compile(r"[a-z]+/[a-z0-9][a-z0-9.+-]*(;[ -~]*)?")
_TEXT_TYPES = re.compile(r"text/.*|application/(json|xml|x-ndjson|[a-z0-9.-]+\+json|[a-z0-9.-]+\+xml)(;.*)?")


def _frame(data: bytes) -> tuple[str, bytes] | None:
    """``(content type, content)`` of a ``ContextOffloader`` frame, or None when ``data`` is not one."""
    if len(data) < 5:
        return None
    length = (data[0] << 8) | data[1]
    if not 3 <= length <= 127 or len(data) < 2 + length:
        return None
    try:
        content_type = data[2 : 2 + length].decode("ascii")
    except UnicodeDecodeError:
        return None
    if not _FRAME_TYPE.fullmatch(content_type):
        return None
    return content_type, data[2 + length :]


def value_text(value: Any) -> str | None:
    """The text standing for a decoded JSON value that is a content block or a tool-result item, else None."""
    if not isinstance(value, Mapping):
        return None
    if "json" in value and len(value) == 1:
        return json.dumps(value["json"], ensure_ascii=False, sort_keys=True)
    text = render_message({"role": ROLE, "content": [dict(value)]})
    return text or None


def entry_text(data: bytes) -> str | None:
    """The text indexed for an entry's bytes (see the module docstring); None when nothing is indexed."""
    framed = _frame(data)
    if framed is not None:
        content_type, data = framed
        if not _TEXT_TYPES.fullmatch(content_type):
            return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if text.lstrip().startswith(_JSON_START):
        try:
            value = json.loads(text)
        except ValueError:
            return text
        return value_text(value) or text
    return text


def _exact(text: str, data: bytes) -> bool:
    try:
        return text.encode("utf-8") == data
    except UnicodeEncodeError:  # a lone surrogate from a JSON escape: the text cannot give the bytes back
        return False


def entry_message(key: str, data: bytes, *, indexed: bool) -> Message:
    """The archived message for an entry (see the module docstring).

    Args:
        key: The entry's full, normalized key.
        data: Its bytes.
        indexed: Whether its text is indexed (False keeps the bytes only).

    Returns:
        A Strands message the archive keeps verbatim.
    """
    text = entry_text(data) if indexed else None
    field: dict[str, Any] = {"key": key}
    if text is None or not _exact(text, data):
        field["data"] = bytes(data)
    content: list[Any] = [{"text": text}] if text else []
    return cast(Message, {"role": ROLE, "content": content, "metadata": {"custom": {FIELD: field}}})


def _field(message: Mapping[str, Any]) -> Mapping[str, Any] | None:
    if message.get("role") != ROLE:
        return None
    metadata = message.get("metadata")
    custom = metadata.get("custom") if isinstance(metadata, Mapping) else None
    found = custom.get(FIELD) if isinstance(custom, Mapping) else None
    if not isinstance(found, Mapping) or not isinstance(found.get("key"), str):
        return None
    return found


def entry_key(message: Mapping[str, Any]) -> str | None:
    """The full key of an archived storage entry; None for any other archived message."""
    found = _field(message)
    return None if found is None else str(found["key"])


def entry_bytes(message: Mapping[str, Any]) -> bytes:
    """The exact bytes of an archived storage entry.

    Raises:
        ValueError: If the message is not a storage entry.
    """
    found = _field(message)
    if found is None:
        raise ValueError("not an archived storage entry")
    data = found.get("data")
    if isinstance(data, bytes):
        return data
    content = message.get("content") or []
    if not content:
        return b""
    text = content[0].get("text") if isinstance(content[0], Mapping) else None
    if not isinstance(text, str):
        raise ValueError("archived storage entry without its text or bytes")
    return text.encode("utf-8")


def stash_refs(messages: Iterable[Mapping[str, Any]]) -> set[str]:
    """The last key segment Strands' stash writes for each stashed block of ``messages`` (``Stash.refs_for``).

    A text block is stashed as ``<tracking id>_<block index>``, each part of a tool result as
    ``<tool use id>_<part index>``; tool uses, reasoning and cache points are not stashed.
    """
    refs: set[str] = set()
    for message in messages:
        tracking_id = message.get("tracking_id")
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for position, block in enumerate(content):
            if not isinstance(block, Mapping) or _UNSTASHED.intersection(block):
                continue
            result = block.get("toolResult")
            if isinstance(result, Mapping):
                parts = result.get("content")
                count = len(parts) if isinstance(parts, list) else 0
                refs.update(f"{result.get('toolUseId')}_{i}" for i in range(count))
            elif isinstance(tracking_id, str):
                refs.add(f"{tracking_id}_{position}")
    return refs


def texts_in(messages: Iterable[Mapping[str, Any]]) -> set[str]:
    """The texts an entry stashed from these messages would be indexed as: one per text block and tool-result item.

    Strands' stash writes each text block of a message, and each item of a tool result, as one entry; an archived
    entry whose text is in this set repeats something these messages still hold.
    """
    found: set[str] = set()
    for message in messages:
        for block in message.get("content") or []:
            if not isinstance(block, Mapping) or _UNSTASHED.intersection(block):
                continue
            result = block.get("toolResult")
            parts = result.get("content") or [] if isinstance(result, Mapping) else [block]
            for part in parts:
                text = value_text(part)
                if text:
                    found.add(text)
    return found
