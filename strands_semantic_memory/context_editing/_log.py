"""The log of applied context edits, kept in ``agent.state`` so sessions can replay it.

Strands' ``RepositorySessionManager`` saves messages append-only and restores them by offset; ``replay_log``
re-applies the logged edits over the restored messages and drops what came back in front of the first message the
agent had at its last invocation (a no-op for a snapshot session manager, which saves the edited messages).
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from strands.types.content import Message

from strands_semantic_memory.context_editing._ranges import current_turn_start, manager_summary_id

if TYPE_CHECKING:
    from strands.agent.agent import Agent

__all__ = ["LOG_VERSION", "STATE_KEY", "Edit", "apply_edit", "front", "inserted_ids", "new_log", "replay_log"]

logger = logging.getLogger(__name__)

STATE_KEY = "semantic_memory_context_edits"
"""Key in ``agent.state`` of the log of applied edits (JSON; replayed on session restore)."""

LOG_VERSION = 1


def apply_edit(
    messages: list[Message],
    removed: Sequence[str],
    inserted: Sequence[Message],
    *,
    before: int | None = None,
    after: str | None = None,
) -> bool:
    """Remove exactly the run of messages an edit names and put ``inserted`` where it began.

    The edit names its range by the tracking ids of its messages, in order, and by the tracking id of the message
    that preceded it (``after``). The run removed is one where consecutive messages, before position ``before``
    (the current turn), carry exactly those ids: the one right after ``after`` if there is one. When ``after``
    is still in ``messages`` but no run follows it, the edit is already applied. A message outside the run that
    shares an id with it (the same message sent again) stays.

    Idempotent: once applied, applying again changes nothing.

    Returns:
        Whether ``messages`` changed.
    """
    ids = [m.get("tracking_id") for m in messages[:before]]
    width = len(removed)
    runs = [p for p in range(len(ids) - width + 1) if width and ids[p : p + width] == list(removed)]
    if after is not None and after in ids:
        runs = [p for p in runs if p > 0 and ids[p - 1] == after]
    if not runs:
        return False
    start = runs[0]
    present = {m.get("tracking_id") for m in messages}
    insert = [copy.deepcopy(m) for m in inserted if m.get("tracking_id") not in present]
    messages[start : start + width] = insert
    return True


@dataclass
class Edit:
    """An edit queued by a tool, applied at the next safe point."""

    kind: str
    removed: list[str]
    inserted: list[Message]
    after: str | None = None
    archived: list[int] = field(default_factory=list)
    ready: bool = False

    def apply(self, messages: list[Message]) -> bool:
        """Apply the edit to ``messages`` (see ``apply_edit``); returns whether they changed."""
        return apply_edit(messages, self.removed, self.inserted, before=current_turn_start(messages), after=self.after)

    def as_log(self) -> dict[str, Any]:
        """The edit as a JSON-ready log entry."""
        return {
            "kind": self.kind,
            "removed": list(self.removed),
            "inserted": copy.deepcopy(self.inserted),
            "after": self.after,
        }


def new_log() -> dict[str, Any]:
    """An empty edit log."""
    return {"version": LOG_VERSION, "edits": [], "head": [], "anchor": None}


def front(agent: Agent, log: dict[str, Any]) -> tuple[list[str], str | None]:
    """The first message a session stores (the anchor) and the ids in front of it that are not stored messages.

    In front of the anchor there may be the conversation manager's summary (a session restores it from the
    manager's state) and summaries or notes of this plugin (the log replays them); nothing else belongs there.
    """
    inserted = {str(m.get("tracking_id")) for e in log.get("edits", []) for m in e.get("inserted", [])}
    manager_summary = manager_summary_id(agent)
    head: list[str] = []
    for message in agent.messages:
        tracking_id = message.get("tracking_id")
        if not tracking_id:
            break
        if tracking_id == manager_summary or tracking_id in inserted:
            head.append(str(tracking_id))
            continue
        return head, str(tracking_id)
    return head, None


def inserted_ids(agent: Agent) -> set[str]:
    """Tracking ids of summaries and notes this plugin inserted (not archived again as if someone said them)."""
    log = agent.state.get(STATE_KEY)
    ids: set[str] = set()
    if isinstance(log, dict):
        for edit in log.get("edits", []):
            ids.update(str(m.get("tracking_id")) for m in edit.get("inserted", []))
    return ids


def replay_log(messages: list[Message], log: Any) -> None:
    """Replay the edit log over messages a session manager restored (a no-op when they already reflect it)."""
    if not isinstance(log, dict) or not log.get("edits"):
        return
    if log.get("version") != LOG_VERSION:
        logger.warning("version=<%s> | unknown context edit log version; not replayed", log.get("version"))
        return
    replayed = sum(
        Edit(str(e.get("kind")), list(e.get("removed", [])), list(e.get("inserted", [])), e.get("after")).apply(
            messages
        )
        for e in log["edits"]
    )
    anchor = log.get("anchor")
    head = set(log.get("head") or [])
    positions = [p for p, m in enumerate(messages) if anchor and m.get("tracking_id") == anchor]
    trimmed = 0
    if positions:
        # A session restored by offset can bring back messages the agent no longer had in front of the anchor
        # (an edit shifted what the offset counts); keep only the known prepended ones there.
        leading = messages[: positions[0]]
        kept = [m for m in leading if m.get("tracking_id") in head]
        trimmed = len(leading) - len(kept)
        messages[: positions[0]] = kept
    if replayed or trimmed:
        logger.info("replayed=<%d>, trimmed=<%d> | context edits replayed over the restored session", replayed, trimmed)
