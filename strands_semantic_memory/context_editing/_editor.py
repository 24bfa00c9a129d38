"""``ContextEditor``: the model summarizes or drops ranges of its own active context, and nothing is lost.

A Strands plugin with two tools, ``context_summarize(start, end, summary)`` and ``context_drop(start, end)``. On
every model call each editable message carries a short id (``[ctx:1a2b3c4d]``, from its tracking id) in the call's
copy of the messages only, never in history. A tool archives the range verbatim through the agent's conversation
manager, with the agent's session, before anything leaves (a forgotten message is not archived again), then queues
the edit; it is applied at the next safe point (before the next model call, or at the end of the invocation), when
the tool results of the step are in history. The summary, or the note that keeps user and assistant turns
alternating, names the archive indices, so ``conversation_read`` brings the originals back. Ranges widen to keep
tool calls with their results; the current turn, pinned messages and the manager's summary are refused. Applied
edits are logged in ``agent.state`` and replayed over a restored session (``_edits``).

The tools are plain functions, so Strands runs them (and their archive work) in a worker thread; the safe-point
hooks only move messages and run on the event loop.

Example:
    ```python
    agent = Agent(conversation_manager=SemanticSummarizingConversationManager(), plugins=[ContextEditor()])
    ```
"""

from __future__ import annotations

import logging
import threading
import uuid
import weakref
from typing import TYPE_CHECKING, Any

from strands.hooks import AfterInvocationEvent, AgentInitializedEvent, BeforeModelCallEvent
from strands.middleware import InvokeModelContext, InvokeModelStage
from strands.plugins import Plugin
from strands.tools.decorator import tool
from strands.types.content import ContentBlock, Message
from strands.types.tools import ToolContext

from strands_semantic_memory.context_editing._edits import (
    ID_PREFIX,
    LOG_VERSION,
    STATE_KEY,
    apply_edit,
    current_turn_start,
    front,
    message_id,
    new_log,
    plan_range,
    replay,
)
from strands_semantic_memory.conversation_manager import SemanticSummarizingConversationManager
from strands_semantic_memory.errors import ConfigurationError
from strands_semantic_memory.tools._arguments import ranges, schema, text

if TYPE_CHECKING:
    from strands.agent.agent import Agent

__all__ = ["ContextEditor"]

logger = logging.getLogger(__name__)

_ID_SCHEMA = {"type": "string", "description": "The id shown before a message, e.g. ctx:1a2b3c4d."}
_RANGE = {"start": _ID_SCHEMA, "end": {**_ID_SCHEMA, "description": "The id of the range's last message."}}
_HOW = (
    " The messages are archived verbatim first, so nothing is lost. Address them by the id shown before each one, "
    "like [ctx:1a2b3c4d]; the current turn cannot be edited, and tool calls stay with their results. The change "
    "applies before your next step."
)


class ContextEditor(Plugin):
    """Lets the model summarize or drop ranges of its active context, each archived first (one per agent)."""

    name = "strands-semantic-memory:context-editor"

    def __init__(self, *, show_ids: bool = True, max_summary_chars: int = 4000) -> None:
        """Create the plugin.

        Args:
            show_ids: Show each editable message's id to the model (per call, never stored). Without ids the model
                cannot name ranges: turn it off only when you show them another way.
            max_summary_chars: The longest summary ``context_summarize`` accepts.

        Raises:
            ConfigurationError: If an option has the wrong type or ``max_summary_chars`` is below 1.
        """
        if not isinstance(show_ids, bool):
            raise ConfigurationError(f"show_ids must be True or False, got {show_ids!r:.60}")
        if not isinstance(max_summary_chars, int) or isinstance(max_summary_chars, bool) or max_summary_chars < 1:
            raise ConfigurationError(f"max_summary_chars must be an integer >= 1, got {max_summary_chars!r:.60}")
        self.show_ids, self.max_summary_chars = show_ids, max_summary_chars
        self.applied_count = 0
        self._agent: weakref.ReferenceType[Any] | None = None
        self._pending: list[dict[str, Any]] = []
        self._lock = threading.Lock()  # the queue: held for list operations only (the event loop takes it)
        self._planning = threading.Lock()  # one edit planned and archived at a time (tool threads only)
        super().__init__()

    @property
    def pending_edits(self) -> int:
        """Edits queued and not applied yet."""
        with self._lock:
            return len(self._pending)

    def init_agent(self, agent: Agent) -> None:
        """Attach to ``agent``: the id middleware and the safe-point hooks.

        Raises:
            ConfigurationError: If the plugin serves another agent, or the agent's conversation manager does not
                archive (a ``SemanticSummarizingConversationManager`` is needed: ranges are archived before they go).
        """
        held = None if self._agent is None else self._agent()
        if held is not None and held is not agent:
            raise ConfigurationError("a ContextEditor serves one agent; create one per agent")
        if not isinstance(agent.conversation_manager, SemanticSummarizingConversationManager):
            raise ConfigurationError(
                "ContextEditor archives each range before it leaves: give the agent a "
                "SemanticSummarizingConversationManager"
            )
        self._agent = weakref.ref(agent)
        if self.show_ids:
            agent.add_middleware(InvokeModelStage.Input, self._show_ids)
        agent.add_hook(self._on_initialized, AgentInitializedEvent)
        agent.add_hook(self._on_before_model_call, BeforeModelCallEvent)
        agent.add_hook(self._on_after_invocation, AfterInvocationEvent)

    # ------------------------------------------------------------------ the model's view and the safe points

    def _show_ids(self, context: InvokeModelContext) -> InvokeModelContext:
        """``[ctx:<id>]`` in front of each editable message of this call (after reasoning; after tool results)."""
        messages = list(context.messages)
        for position in range(current_turn_start(messages)):
            short = message_id(messages[position])
            if short is None:
                continue
            content: list[ContentBlock] = list(messages[position].get("content") or [])
            tag: ContentBlock = {"text": f"[{ID_PREFIX}{short}]"}
            if any(isinstance(b, dict) and "toolResult" in b for b in content):
                content.append(tag)
            else:
                lead = next((i for i, b in enumerate(content) if "reasoningContent" not in b), len(content))
                content.insert(lead, tag)
            messages[position] = {**messages[position], "content": content}
        return context.replace(messages=messages)

    def _on_initialized(self, event: AgentInitializedEvent) -> None:
        applied = replay(event.agent.messages, event.agent.state.get(STATE_KEY))
        if applied:
            logger.debug("edits=<%d> | context edits replayed over the restored session", applied)

    def _on_before_model_call(self, event: BeforeModelCallEvent) -> None:
        self._apply(event.agent, final=False)

    def _on_after_invocation(self, event: AfterInvocationEvent) -> None:
        self._apply(event.agent, final=True)

    def _apply(self, agent: Agent, *, final: bool) -> None:
        """Apply the queued edits and log them; at the end of an invocation, keep the log's anchor up to date."""
        with self._lock:
            ready, self._pending = self._pending, []
        if not ready and not final:
            return
        log = agent.state.get(STATE_KEY)
        if not ready and not log:
            return
        log = log if isinstance(log, dict) and log.get("version") == LOG_VERSION else new_log()
        for edit in ready:
            if apply_edit(agent.messages, edit):
                log["edits"].append(edit)
                self.applied_count += 1
            else:
                logger.debug("kind=<%s> | the range left the context before the edit applied", edit["kind"])
        head, anchor = front(agent.messages, log, _summary_id(agent))
        if ready or (head, anchor) != (log["head"], log["anchor"]):
            log["head"], log["anchor"] = head, anchor
            agent.state.set(STATE_KEY, log)

    # ------------------------------------------------------------------ the tools

    def _queue(self, context: ToolContext | None, start: Any, end: Any, summary: str | None) -> str:
        if context is None or self._agent is None or self._agent() is not context.agent:
            raise ValueError("this context editor serves another agent")
        agent: Any = context.agent
        with self._planning:
            messages = list(agent.messages)
            first, last, widened = plan_range(messages, start, end, _summary_id(agent))
            removed = [str(m.get("tracking_id")) for m in messages[first : last + 1]]
            with self._lock:
                if {i for e in self._pending for i in e["removed"]} & set(removed):
                    raise ValueError("the range overlaps an edit already queued in this step; wait for it to apply")
            manager: SemanticSummarizingConversationManager = agent.conversation_manager
            archived = [i for i in manager.archive(messages[first : last + 1], agent) if i is not None]
            where = f"archived verbatim as Message {ranges(archived)}" if archived else "forgotten, not archived"
            if archived and "conversation_read" in agent.tool_names:
                where += " (conversation_read shows them)"
            count = last - first + 1
            before = messages[first - 1].get("role") if first else "assistant"
            after = messages[last + 1].get("role")
            if summary is not None:
                role = "assistant" if "user" in (before, after) and "assistant" not in (before, after) else "user"
                note = f"[Summary, by the assistant, of {count} earlier messages removed from the context; {where}]"
                inserted = [_message(role, f"{note}\n{summary.strip()}")]
            elif before == after:  # a note keeps user and assistant turns alternating
                role = "assistant" if after == "user" else "user"
                inserted = [_message(role, f"[{count} earlier messages were removed from the context; {where}.]")]
            else:
                inserted = []
            edit = {
                "kind": "drop" if summary is None else "summarize",
                "removed": removed,
                "inserted": inserted,
                "after": messages[first - 1].get("tracking_id") if first else None,
            }
            with self._lock:
                self._pending.append(edit)
        wide = " (widened to keep tool calls with their results)" if widened else ""
        action = "replaced by your summary" if summary is not None else "removed"
        return f"Queued: {count} messages{wide} will be {action} before your next step; they are {where}."

    @tool(
        context=True,
        description="Replace a range of earlier messages of your context with your summary." + _HOW,
        inputSchema=schema(
            ["start", "end", "summary"],
            **_RANGE,
            summary={"type": "string", "description": "Every fact, decision, number and open question worth keeping."},
        ),
    )
    def context_summarize(
        self, start: Any = None, end: Any = None, summary: Any = None, tool_context: ToolContext | None = None
    ) -> str:
        """Replace a range of earlier messages with the model's summary (see the class)."""
        written = text(summary, "summary", self.max_summary_chars)
        if not written.strip():
            raise ValueError("summary must be non-empty text: what the range said that is worth keeping")
        return self._queue(tool_context, start, end, written)

    @tool(
        context=True,
        description="Remove a range of earlier messages from your context." + _HOW,
        inputSchema=schema(["start", "end"], **_RANGE),
    )
    def context_drop(self, start: Any = None, end: Any = None, tool_context: ToolContext | None = None) -> str:
        """Remove a range of earlier messages (see the class)."""
        return self._queue(tool_context, start, end, None)


def _message(role: str, body: str) -> Message:
    return {"role": role, "content": [{"text": body}], "tracking_id": str(uuid.uuid4())}  # type: ignore[typeddict-item]


def _summary_id(agent: Any) -> Any:
    """The tracking id of the conversation manager's summary message (Strands keeps it as ``_summary_message``)."""
    summary = getattr(agent.conversation_manager, "_summary_message", None)
    return summary.get("tracking_id") if isinstance(summary, dict) else None
