"""Turn a Strands message into the text that gets embedded, and split long text into chunks.

The archive keeps every message exactly as it was; this module only decides what text stands for it in the
indexes. It never interprets the text: a message that looks like context this library injected is rendered
like any other (the injected block is written by ``_block`` and never parsed
back). Rules, block by block:

- ``text``: as is. A non-string value (a caller bug, seen with hand-built messages) is rendered as JSON.
- ``toolUse``: ``[tool call <name>] <input as JSON>``.
- ``toolResult``: ``[tool result <status>]`` followed by its text and JSON parts, and placeholders for media.
- ``image``, ``video``, ``document``: a placeholder naming the kind, format and (for documents) the name.
- ``reasoningContent``: the reasoning text. ``citationsContent``: its cited text. ``guardContent``: its text.
- ``cachePoint`` and unknown blocks: nothing (unknown kinds are logged once at debug level).

A message can render to an empty string (an empty content list, a cache point). It is archived all the same,
with no vector, so it still widens passages around its neighbours.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

logger = logging.getLogger(__name__)


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


_BREAKS = ("\n\n", "\n", ". ", "? ", "! ", "; ", ", ", " ")
"""Where a chunk may end, best first: a paragraph, a line, a sentence, a clause, a word."""


def chunk_end(text: str, start: int, size: int) -> int:
    """Where the chunk that starts at ``start`` ends: at most ``size`` characters on, at the best break.

    The best break (``_BREAKS``, in order) in the second half of the span wins, so a chunk holds whole
    paragraphs or sentences where the text has them; a run without any break is cut at ``size``.
    """
    end = min(len(text), start + size)
    if end == len(text):
        return end
    for mark in _BREAKS:
        cut = text.rfind(mark, start + size // 2, end)
        if cut > start:
            return cut + len(mark.rstrip())  # keep the sentence's full stop, leave the space
    return end


def chunk_text(text: str, size: int, max_chunks: int) -> tuple[list[str], bool]:
    """Split text into pieces of at most ``size`` characters, at paragraph, sentence or word boundaries.

    A long message is embedded as several chunks so that every part of it can be found: a vector stands for
    the mean of its word pieces, and the sentence models this library bundles read at most 256 of them
    (all-MiniLM-L6-v2 was trained on 128), so one vector for a message of several hundred words would lose its
    end and blur one fact among many. The search scores a message by its best chunk.

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
        end = chunk_end(text, start, size)
        piece = text[start:end].strip()
        if piece:
            chunks.append(piece)
        start = end
    return chunks, start < length and bool(text[start:].strip())
