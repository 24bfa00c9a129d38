"""Turn a Strands message into the text that gets embedded, and recognise text this library injected.

The archive keeps every message exactly as it was; this module only decides what text stands for it in the
indexes. Rules, block by block:

- ``text``: as is. A non-string value (a caller bug, seen with hand-built messages) is rendered as JSON.
- ``toolUse``: ``[tool call <name>] <input as JSON>``.
- ``toolResult``: ``[tool result <status>]`` followed by its text and JSON parts, and placeholders for media.
- ``image``, ``video``, ``document``: a placeholder naming the kind, format and (for documents) the name.
- ``reasoningContent``: the reasoning text. ``citationsContent``: its cited text. ``guardContent``: its text.
- ``cachePoint`` and unknown blocks: nothing (unknown kinds are logged once at debug level).

A message can render to an empty string (an empty content list, a cache point). It is archived all the same,
with no vector, so it still widens context windows around its neighbours.
"""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import Mapping
from typing import Any

from strands.types.content import Message

logger = logging.getLogger(__name__)

METADATA_KEY = "strands_semantic_memory"
"""Key under ``message["metadata"]["custom"]`` where this library marks the messages it touches."""

CONTEXT_HEADER = "Based on our previous conversation, these earlier exchanges may be relevant:"
CONTEXT_BEGIN = "---Previous Context---"
CONTEXT_END = "---End Previous Context---"
QUESTION_PREFIX = "Current question: "


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return str(value)


def _media_placeholder(kind: str, block: Mapping[str, Any]) -> str:
    parts = [kind]
    if isinstance(block, Mapping):
        if block.get("name"):
            parts.append(str(block["name"]))
        if block.get("format"):
            parts.append(f"({block['format']})")
    return "[" + " ".join(parts) + "]"


def _render_tool_result_part(part: Mapping[str, Any]) -> str:
    if "text" in part:
        text = part["text"]
        return text if isinstance(text, str) else _json(text)
    if "json" in part:
        return _json(part["json"])
    for kind in ("image", "document", "video"):
        if kind in part:
            return _media_placeholder(kind, part[kind])
    return ""


def render_block(block: Mapping[str, Any]) -> str:
    """Render one content block to searchable text (see the module docstring for the rules).

    Args:
        block: A Strands ``ContentBlock``.

    Returns:
        The text standing for the block; empty when the block carries nothing searchable.
    """
    if not isinstance(block, Mapping):
        return _json(block)
    if "text" in block:
        text = block["text"]
        return text if isinstance(text, str) else _json(text)
    if "toolUse" in block:
        tool_use = block["toolUse"] or {}
        return f"[tool call {tool_use.get('name', '?')}] {_json(tool_use.get('input', {}))}"
    if "toolResult" in block:
        result = block["toolResult"] or {}
        parts = [_render_tool_result_part(p) for p in result.get("content", []) or [] if isinstance(p, Mapping)]
        body = " ".join(p for p in parts if p)
        return f"[tool result {result.get('status', 'success')}] {body}".rstrip()
    for kind in ("image", "document", "video"):
        if kind in block:
            return _media_placeholder(kind, block[kind])
    if "reasoningContent" in block:
        reasoning = block["reasoningContent"] or {}
        text = (reasoning.get("reasoningText") or {}).get("text", "")
        return text if isinstance(text, str) else _json(text)
    if "citationsContent" in block:
        cited = (block["citationsContent"] or {}).get("content", []) or []
        return " ".join(c["text"] for c in cited if isinstance(c, Mapping) and isinstance(c.get("text"), str))
    if "guardContent" in block:
        text = ((block["guardContent"] or {}).get("text") or {}).get("text", "")
        return text if isinstance(text, str) else _json(text)
    if "cachePoint" not in block:
        logger.debug("block_keys=<%s> | content block kind not rendered for search", sorted(block))
    return ""


def render_message(message: Mapping[str, Any]) -> str:
    """Render a whole message to the text that gets embedded.

    Args:
        message: A Strands ``Message``.

    Returns:
        The rendered blocks joined by newlines; empty if nothing in the message is searchable.
    """
    content = message.get("content") or []
    if not isinstance(content, list):
        content = [content]
    return "\n".join(text for text in (render_block(b) for b in content) if text)


def _custom(message: Mapping[str, Any]) -> dict[str, Any]:
    metadata = message.get("metadata")
    if not isinstance(metadata, Mapping):
        return {}
    custom = metadata.get("custom")
    if not isinstance(custom, Mapping):
        return {}
    marker = custom.get(METADATA_KEY)
    return dict(marker) if isinstance(marker, Mapping) else {}


def set_marker(message: Message, **values: Any) -> None:
    """Record this library's bookkeeping on a message, under ``metadata.custom``, which Strands never sends.

    Args:
        message: The message to mark, in place.
        **values: Keys to set in the marker.
    """
    metadata = message.setdefault("metadata", {})
    custom = metadata.setdefault("custom", {})
    marker = custom.setdefault(METADATA_KEY, {})
    marker.update(values)


def clear_marker(message: Message) -> None:
    """Remove this library's bookkeeping from a message, and the metadata dicts it leaves empty."""
    metadata = message.get("metadata")
    if not isinstance(metadata, dict):
        return
    custom = metadata.get("custom")
    if isinstance(custom, dict):
        custom.pop(METADATA_KEY, None)
        if not custom:
            metadata.pop("custom")
    if not metadata:
        message.pop("metadata")


def is_summary(message: Mapping[str, Any]) -> bool:
    """Whether the message is a conversation summary made by the semantic conversation manager."""
    return _custom(message).get("kind") == "summary"


def is_enriched(message: Mapping[str, Any]) -> bool:
    """Whether the hook injected earlier context into this message (and has not stripped it yet)."""
    return "original_content" in _custom(message)


def _strip_injected_text(text: str) -> str | None:
    """The user's own words from an enriched text, or None when the text is not in the enrichment format."""
    if not text.startswith(CONTEXT_HEADER):
        return None
    end = text.find(CONTEXT_END)
    if end < 0:
        return None
    rest = text[end + len(CONTEXT_END) :].lstrip("\n")
    return rest[len(QUESTION_PREFIX) :] if rest.startswith(QUESTION_PREFIX) else rest


def restore_original_content(message: Message) -> bool:
    """Put back the user's own content of a message the hook enriched, in place, and drop the marker.

    Args:
        message: Any message.

    Returns:
        True if the message was enriched and has been restored; False (untouched) otherwise.
    """
    marker = _custom(message)
    if "original_content" not in marker:
        return False
    message["content"] = marker["original_content"]
    clear_marker(message)
    return True


def original_message(message: Message) -> Message:
    """The message as the user wrote it: injected context removed, this library's marker dropped.

    Works from the marker the hook leaves (exact), and falls back to recognising the enrichment format in the
    first text block (for messages whose metadata was lost, e.g. pasted from logs into a new session).

    Args:
        message: A message, enriched or not. It is not modified.

    Returns:
        A deep copy with the user's own content.
    """
    clean = copy.deepcopy(message)
    if not restore_original_content(clean):
        content = clean.get("content") or []
        for block in content:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                stripped = _strip_injected_text(block["text"])
                if stripped is not None:
                    block["text"] = stripped
                break
    clear_marker(clean)
    return clean


def chunk_text(text: str, size: int, max_chunks: int) -> tuple[list[str], bool]:
    """Split text into pieces of at most ``size`` characters, at whitespace where there is some.

    Embedding models read a bounded number of tokens (256 word pieces for all-MiniLM-L6-v2); a long message is
    embedded as several chunks so its end is as findable as its start.

    Args:
        text: The rendered message.
        size: Maximum characters per chunk.
        max_chunks: Stop after this many chunks.

    Returns:
        ``(chunks, truncated)``; ``truncated`` is True when text remained after ``max_chunks`` chunks.
    """
    chunks: list[str] = []
    start, length = 0, len(text)
    while start < length and len(chunks) < max_chunks:
        end = min(length, start + size)
        if end < length:
            cut = text.rfind(" ", start + size // 2, end)
            if cut > start:
                end = cut
        piece = text[start:end].strip()
        if piece:
            chunks.append(piece)
        start = end
    return chunks, start < length and bool(text[start:].strip())
