"""Pure functions over messages: the ids the model edits by, the ranges it may edit, applying and replaying edits.

An edit names its range by the tracking ids of its messages, in order, and by the tracking id of the message before
it (``after``). ``apply_edit`` removes exactly one run of messages carrying those ids, before the current turn, and
right after ``after`` when that message is still there; a message outside the run that shares an id stays, and
applying an edit again changes nothing. The log of applied edits lives in ``agent.state`` (``STATE_KEY``), which
every Strands session manager saves. A ``RepositorySessionManager`` stores messages append-only and restores them
from an offset that edits shift, so the log also records the first stored message the agent held (``anchor``) and
the inserted ones in front of it (``head``): ``replay`` applies the edits again and drops whatever else came back
in front of the anchor. Over a snapshot session manager, which saves the edited messages, replaying changes nothing.
"""

from __future__ import annotations

import copy
import hashlib
import re
from collections.abc import Sequence
from typing import Any

from strands.agent.conversation_manager.compression.pin_message import is_pinned
from strands.types.content import Message

from strands_semantic_memory.tools._arguments import quoted, text

__all__ = ["STATE_KEY", "apply_edit", "current_turn_start", "front", "message_id", "plan_range", "replay"]

STATE_KEY = "semantic_memory_context_edits"
"""The key of the edit log in ``agent.state``: ``{"version", "edits", "head", "anchor"}``."""
LOG_VERSION = 1
ID_PREFIX, ID_LENGTH = "ctx:", 8
_ID = re.compile(r"\[?\s*(?:ctx\s*:\s*)?([0-9a-f]{4,64})\s*\]?", re.IGNORECASE)


def message_id(message: Message, length: int = ID_LENGTH) -> str | None:
    """The id the model sees for a message: the start of SHA-256 of its tracking id (None without one)."""
    tracking_id = message.get("tracking_id")
    return hashlib.sha256(str(tracking_id).encode()).hexdigest()[:length] if tracking_id else None


def current_turn_start(messages: Sequence[Message]) -> int:
    """Where the current turn starts: the latest user message without tool results (0 when there is none)."""
    for position in range(len(messages) - 1, -1, -1):
        message = messages[position]
        if message.get("role") == "user" and not _ids(message, "toolResult"):
            return position
    return 0


def _ids(message: Message, kind: str) -> set[str]:
    blocks = [b.get(kind) for b in message.get("content") or [] if isinstance(b, dict)]
    return {str(b["toolUseId"]) for b in blocks if isinstance(b, dict) and b.get("toolUseId")}


def close_tool_pairs(messages: Sequence[Message], first: int, last: int) -> tuple[int, int]:
    """``first..last`` widened until every tool call in it has its result in it, and every result its call."""
    while True:
        uses = set().union(*(_ids(messages[p], "toolUse") for p in range(first, last + 1)))
        results = set().union(*(_ids(messages[p], "toolResult") for p in range(first, last + 1)))
        wide_first = min([first, *(p for p in range(first) if _ids(messages[p], "toolUse") & (results - uses))])
        after = range(last + 1, len(messages))
        wide_last = max([last, *(p for p in after if _ids(messages[p], "toolResult") & (uses - results))])
        if (wide_first, wide_last) == (first, last):
            return first, last
        first, last = wide_first, wide_last


def _position(messages: Sequence[Message], ref: Any, name: str) -> int:
    """Where the message the model names by id (``ctx:1a2b3c4d``, or a unique prefix) is."""
    match = _ID.fullmatch(text(ref, name, 100).strip())
    if match is None:
        raise ValueError(f"{name}={quoted(ref)} is not a message id; use the id shown before a message: ctx:1a2b3c4d")
    wanted = match.group(1).lower()
    found = [p for p, m in enumerate(messages) if message_id(m, len(wanted)) == wanted]
    if len(found) != 1:
        raise ValueError(f"{name}={quoted(ref)} matches {len(found)} messages of the active context, not one")
    return found[0]


def plan_range(messages: Sequence[Message], start: Any, end: Any, summary_id: Any) -> tuple[int, int, bool]:
    """The positions an edit from ``start`` to ``end`` covers, widened to keep tool calls with their results.

    Returns:
        ``(first, last, widened)``.

    Raises:
        ValueError: If the range reaches the current turn or holds a pinned message or the manager's summary.
    """
    asked = sorted((_position(messages, start, "start"), _position(messages, end, "end")))
    turn = current_turn_start(messages)
    first, last = close_tool_pairs(messages, asked[0], asked[1])
    if last >= turn:
        raise ValueError("the range reaches the current turn (the latest user message and what followed it)")
    if any(is_pinned(list(messages), p) for p in range(first, last + 1)):
        raise ValueError("the range holds a pinned message, which stays in the context")
    if summary_id and any(messages[p].get("tracking_id") == summary_id for p in range(first, last + 1)):
        raise ValueError("the range holds the conversation manager's summary, which the manager maintains")
    return first, last, [first, last] != asked


def apply_edit(messages: list[Message], edit: dict[str, Any]) -> bool:
    """Replace exactly the run of messages ``edit`` names with its inserted ones (see the module docstring).

    Returns:
        Whether ``messages`` changed.
    """
    removed, after = list(edit["removed"]), edit.get("after")
    ids = [m.get("tracking_id") for m in messages[: current_turn_start(messages)]]
    runs = [p for p in range(len(ids) - len(removed) + 1) if removed and ids[p : p + len(removed)] == removed]
    if after is not None and after in ids:
        runs = [p for p in runs if p > 0 and ids[p - 1] == after]
    if not runs:
        return False
    present = {m.get("tracking_id") for m in messages}
    inserted = [copy.deepcopy(m) for m in edit["inserted"] if m.get("tracking_id") not in present]
    messages[runs[0] : runs[0] + len(removed)] = inserted
    return True


def new_log() -> dict[str, Any]:
    """An empty edit log."""
    return {"version": LOG_VERSION, "edits": [], "head": [], "anchor": None}


def front(messages: Sequence[Message], log: dict[str, Any], summary_id: Any) -> tuple[list[str], str | None]:
    """The inserted messages (the manager's summary, this log's) in front of the first stored one, and its id."""
    inserted = {m.get("tracking_id") for e in log["edits"] for m in e["inserted"]} | {summary_id}
    head: list[str] = []
    for message in messages:
        tracking_id = message.get("tracking_id")
        if tracking_id not in inserted or not tracking_id:
            return head, tracking_id
        head.append(tracking_id)
    return head, None


def replay(messages: list[Message], log: Any) -> int:
    """Apply the log over messages a session restored, then drop what came back in front of the anchor.

    Returns:
        How many edits changed the messages.
    """
    if not isinstance(log, dict) or log.get("version") != LOG_VERSION:
        return 0
    applied = sum(apply_edit(messages, edit) for edit in log["edits"])
    anchor = log.get("anchor")
    at = next((p for p, m in enumerate(messages) if anchor and m.get("tracking_id") == anchor), None)
    if at is not None:
        messages[:at] = [m for m in messages[:at] if m.get("tracking_id") in set(log.get("head") or [])]
    return applied
