"""Which active messages a model's context edit may address, and how a requested range is made safe.

The model names messages by a short id derived from their Strands ``tracking_id`` (``message_id``).
``plan_range`` turns two ids into positions, widens the range so no tool call is separated from its result,
and refuses ranges that reach the current turn, hold a pinned message, or hold the conversation manager's summary.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from strands.types.content import Message

if TYPE_CHECKING:
    from strands.agent.agent import Agent

__all__ = [
    "ID_LENGTH",
    "ID_PREFIX",
    "close_tool_pairs",
    "current_turn_start",
    "manager_summary_id",
    "message_id",
    "plan_range",
    "replacement_role",
    "resolve_id",
]

ID_PREFIX = "ctx:"
ID_LENGTH = 8
_ID_PATTERN = re.compile(r"^\[?\s*(?:ctx\s*:\s*)?([0-9a-f]{4,64})\s*\]?$", re.IGNORECASE)


def message_id(message: Message, length: int = ID_LENGTH) -> str | None:
    """The short id the model sees for a message: the first ``length`` hex digits of SHA-256 of its tracking id.

    Returns:
        The id, or None for a message without a tracking id (Strands gives every message one before it calls
        the model).
    """
    tracking_id = message.get("tracking_id")
    if not tracking_id:
        return None
    return hashlib.sha256(str(tracking_id).encode("utf-8")).hexdigest()[:length]


def _is_plain_user_turn(message: Message) -> bool:
    if message.get("role") != "user":
        return False
    return not any(isinstance(b, dict) and "toolResult" in b for b in message.get("content") or [])


def current_turn_start(messages: Sequence[Message]) -> int:
    """Position of the current turn's first message: the latest user message that is not a tool result.

    Everything from there on (the user's request, the model's tool calls and their results) is the current turn.
    0 when there is no such message (then nothing is editable).
    """
    for position in range(len(messages) - 1, -1, -1):
        if _is_plain_user_turn(messages[position]):
            return position
    return 0


def _tool_ids(message: Message, kind: str) -> set[str]:
    ids: set[str] = set()
    for block in message.get("content") or []:
        if isinstance(block, dict) and kind in block:
            value = block[kind]  # type: ignore[literal-required]
            if isinstance(value, dict) and value.get("toolUseId"):
                ids.add(str(value["toolUseId"]))
    return ids


def close_tool_pairs(messages: Sequence[Message], first: int, last: int) -> tuple[int, int]:
    """Widen ``first..last`` until no tool call in it lacks its result and no result lacks its call."""
    while True:
        uses = set().union(*(_tool_ids(messages[p], "toolUse") for p in range(first, last + 1)))
        results = set().union(*(_tool_ids(messages[p], "toolResult") for p in range(first, last + 1)))
        new_first, new_last = first, last
        for orphan in results - uses:  # its call is before the range
            for p in range(first - 1, -1, -1):
                if orphan in _tool_ids(messages[p], "toolUse"):
                    new_first = min(new_first, p)
                    break
        for orphan in uses - results:  # its result is after the range
            for p in range(last + 1, len(messages)):
                if orphan in _tool_ids(messages[p], "toolResult"):
                    new_last = max(new_last, p)
                    break
        if (new_first, new_last) == (first, last):
            return first, last
        first, last = new_first, new_last


def _is_pinned(message: Message) -> bool:
    metadata = message.get("metadata")
    custom = metadata.get("custom") if isinstance(metadata, dict) else None
    return isinstance(custom, dict) and custom.get("pinned") is True


def replacement_role(before: str | None, after: str | None) -> str:
    """The role that keeps user/assistant alternation around an inserted message, ``user`` when either clashes."""
    before = before or "assistant"  # a conversation starts with a user message

    def clashes(role: str) -> int:
        return int(before == role) + int(after == role)

    return min(("user", "assistant"), key=clashes)


def manager_summary_id(agent: Agent) -> str | None:
    """Tracking id of the conversation manager's summary message, if it has one."""
    try:
        summary = agent.conversation_manager.get_state().get("summary_message")
    except Exception:  # a custom manager whose state cannot be read: nothing to protect
        return None
    return summary.get("tracking_id") if isinstance(summary, dict) else None


def resolve_id(messages: Sequence[Message], ref: Any, name: str) -> int:
    """Position in ``messages`` of the message a model names by id (``ctx:1a2b3c4d``, or a unique prefix).

    Raises:
        ValueError: If ``ref`` is not an id, or matches no message or several (the message is for the model).
    """
    if not isinstance(ref, str):
        raise ValueError(f"{name} must be a message id such as '{ID_PREFIX}1a2b3c4d', got {ref!r}")
    match = _ID_PATTERN.match(ref.strip())
    if match is None:
        raise ValueError(f"{name}={ref!r} is not a message id; use the id shown before a message, e.g. ctx:1a2b3c4d")
    wanted = match.group(1).lower()
    found = [p for p, m in enumerate(messages) if (message_id(m, len(wanted)) or "") == wanted]
    if not found:
        raise ValueError(f"{name}={ref!r}: no message in the active context has this id (it may be gone already)")
    if len(found) > 1:
        raise ValueError(f"{name}={ref!r} matches {len(found)} messages; give the full id shown before the message")
    return found[0]


def plan_range(agent: Agent, start: Any, end: Any) -> tuple[int, int, str]:
    """Validate a range against the live messages; returns ``(first, last, note for the model)``.

    Raises:
        ValueError: If the range cannot be edited (the message says why, for the model).
    """
    messages = agent.messages
    first = resolve_id(messages, start, "start")
    last = resolve_id(messages, end, "end")
    if last < first:
        first, last = last, first
    turn = current_turn_start(messages)
    if last >= turn:
        raise ValueError(
            "the range reaches the current turn (your latest user message and what followed it), which cannot "
            "be edited; end the range at an earlier message"
        )
    wide_first, wide_last = close_tool_pairs(messages, first, last)
    note = ""
    if (wide_first, wide_last) != (first, last):
        if wide_last >= turn:
            raise ValueError(
                "the range would separate a tool call from its result, and including the result would reach the "
                "current turn; end the range before that tool call"
            )
        note = f" (widened to {wide_last - wide_first + 1} messages to keep tool calls with their results)"
        first, last = wide_first, wide_last
    if any(_is_pinned(messages[p]) for p in range(first, last + 1)):
        raise ValueError("the range contains a pinned message, which must stay in context; choose another range")
    manager_summary = manager_summary_id(agent)
    if manager_summary and any(messages[p].get("tracking_id") == manager_summary for p in range(first, last + 1)):
        raise ValueError("the range contains the conversation manager's summary, which it maintains itself")
    return first, last, note
