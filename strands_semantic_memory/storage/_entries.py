"""One storage entry as one archived record, the text that stands for it, and what Strands' stash keys say.

A ``write(key, data)`` is archived as one message of the role ``"stored"`` (``engine._memory.STORAGE_ROLE``, which
``SemanticMemory.add`` refuses, so no conversation message can pass for an entry)::

    {"role": "stored",
     "content": [{"text": <the entry's text>}],              # empty when nothing is indexed
     "metadata": {"custom": {"strands_storage": {"key": <full key>, "write": <nonce>, "data": <bytes>,
                                                 "speaker": <"user" or "assistant">}}}}

``data`` is kept only when the text does not give the bytes back exactly, and the archive's codec keeps ``bytes``
values byte for byte. ``write`` is a fresh nonce: forgetting keeps a digest of a record's bytes so that it is never
archived again, and a key written again with the bytes it once held must still be archived.

The text indexed: a Strands content block or tool-result item as JSON (what the ``ContextManager``'s stash writes,
with ASCII escapes) as this library renders messages (escapes decoded, media as ``[image (png)]``); other UTF-8 text
as it is; bytes that are not UTF-8, and keys under ``unindexed_prefixes``, nothing (kept, never found).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Mapping
from typing import Any, cast

from strands._context_manager.stash import STASH_PREFIX
from strands.types.content import Message

from strands_semantic_memory.archives import StoredRecord
from strands_semantic_memory.engine._memory import STORAGE_FIELD, STORAGE_ROLE
from strands_semantic_memory.messages._text import render_block

__all__ = ["entry_message", "entry_of", "entry_text", "stash_refs", "stash_session"]

FIELD = STORAGE_FIELD
"""The ``metadata.custom`` field that makes an archived record a storage entry."""
_UNSTASHED = frozenset({"toolUse", "reasoningContent", "cachePoint"})  # blocks Strands' stash does not write


def entry_text(data: bytes) -> str | None:
    """The text indexed for an entry's bytes (see the module docstring); None when nothing is."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not text.lstrip().startswith(("{", "[")):
        return text
    try:
        value = json.loads(text)
    except ValueError:
        return text
    if isinstance(value, dict) and len(value) == 1 and "json" in value:  # a JSON tool-result item
        return json.dumps(value["json"], ensure_ascii=False, sort_keys=True)
    return (render_block(value) if isinstance(value, dict) else "") or text


def entry_message(key: str, data: bytes, *, indexed: bool, speaker: str | None = None) -> Message:
    """The archived message of an entry: its full key, its text (when ``indexed``) and, if needed, its bytes.

    ``speaker`` is who said the message the entry came from (``"user"`` or ``"assistant"``), when the hook told the
    storage (``SemanticStorage.note_speaker``).
    """
    text = entry_text(data) if indexed else None
    field: dict[str, Any] = {"key": key, "write": uuid.uuid4().hex}
    if speaker is not None:
        field["speaker"] = speaker
    try:
        exact = text is not None and text.encode("utf-8") == data
    except UnicodeEncodeError:  # a lone surrogate from a JSON escape: the text cannot give the bytes back
        exact = False
    if not exact:
        field["data"] = bytes(data)
    content = [{"text": text}] if text else []
    return cast(Message, {"role": STORAGE_ROLE, "content": content, "metadata": {"custom": {FIELD: field}}})


def entry_of(record: StoredRecord) -> tuple[str, bytes] | None:
    """``(full key, exact bytes)`` of an archived entry; None for any other archived message."""
    if record.role != STORAGE_ROLE:
        return None
    message: Mapping[str, Any] = record.message
    field = ((message.get("metadata") or {}).get("custom") or {}).get(FIELD)
    if not isinstance(field, Mapping) or not isinstance(field.get("key"), str):
        return None
    data = field.get("data")
    if isinstance(data, bytes):
        return field["key"], data
    content = message.get("content") or [{}]
    return field["key"], str(content[0].get("text", "")).encode("utf-8")


def stash_session(key: str) -> str | None:
    """The Strands session of a stash key (``context/<session id>/scopes/agent/<agent id>/<ref>``), else None.

    ``key`` is relative to the view Strands writes through. The session id is kept whole, however long (the archive
    maps a long one to its digest, as it does the agent's): an id that could not be kept would make an entry
    "no session's", which every session of an unnamed memory recalls.
    """
    parts = key.split("/")
    if parts[0] != STASH_PREFIX or len(parts) < 3:
        return None
    if len(parts) >= 6 and parts[-4:-2] == ["scopes", "agent"]:
        return "/".join(parts[1:-4])  # a session id holding "/" stays whole
    return parts[1]


def stash_refs(messages: Iterable[Mapping[str, Any]]) -> set[str]:
    """The last key segment Strands' stash writes for each block of ``messages`` (``Stash.refs_for``).

    A text or media block is stashed as ``<tracking id>_<block index>``, each part of a tool result as
    ``<tool use id>_<part index>``; tool uses, reasoning and cache points are not stashed.
    """
    refs: set[str] = set()
    for message in messages:
        tracking_id = message.get("tracking_id")
        content = message.get("content")
        for position, block in enumerate(content if isinstance(content, list) else []):
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
