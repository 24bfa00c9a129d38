"""Agentic context editing: the model summarizes or drops ranges of its own active context, losing nothing.

``ContextEditor`` is a Strands plugin. It gives the model two tools,

- ``context_summarize(start, end, summary)``: replace a range of active messages with the model's own summary;
- ``context_drop(start, end)``: remove a range of active messages;

and shows the model, on every model call, a short id in front of each message it may edit (``[ctx:1a2b3c4d]``).
The id is derived from the message's Strands ``tracking_id`` (which survives session save and restore), is added
to the per-call copy of the messages only (an ``InvokeModelStage`` input middleware), and never enters history.

Guarantees, each tested:

- **Nothing is lost.** The range is archived verbatim in the memory *before* anything is removed; the summary or
  note that replaces it names the archive indices, so ``conversation_read`` brings the originals back.
- **Tool calls stay whole.** A range that would separate a ``toolUse`` from its ``toolResult`` is widened to
  include both (the tool result says so).
- **The current turn is never touched**: the latest user message and everything after it (including the tool
  call being processed) cannot be edited, nor can pinned messages or the conversation manager's summary.
- **Safe point.** The tools only queue the edit. It is applied at the next safe point of the agent loop, before
  the next model call (``BeforeModelCallEvent``: the tool results of the current step are in history by then)
  or at the end of the invocation, never while the model's tool call is being processed.
- **Sessions.** Applied edits are logged in ``agent.state`` (by tracking id), which every Strands session manager
  saves. Strands' ``RepositorySessionManager`` (``FileSessionManager``, ``S3SessionManager``) saves messages
  append-only and restores them by offset, so on restore the plugin replays the log and drops what came back in
  front of the first message the agent had at its last invocation. A snapshot session manager saves the edited
  messages directly; replaying is then a no-op.

The plugin wires the parts together: ``_ranges`` (message ids and which ranges may be edited) and ``_log``
(applying an edit, and the log sessions replay).

Example:
    ```python
    from strands import Agent
    from strands_semantic_memory import ContextEditor, SemanticSummarizingConversationManager

    manager = SemanticSummarizingConversationManager()
    agent = Agent(conversation_manager=manager, plugins=[ContextEditor()])
    ```
"""

from __future__ import annotations

import asyncio
import copy
import logging
import threading
import uuid
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from strands.hooks import AfterInvocationEvent, AgentInitializedEvent, BeforeModelCallEvent
from strands.middleware.stages import InvokeModelContext, InvokeModelStage
from strands.plugins import Plugin
from strands.tools.decorator import tool
from strands.types.content import ContentBlock, Message
from strands.types.tools import ToolContext

from strands_semantic_memory._validation import check_flag, check_int
from strands_semantic_memory.context_editing._log import (
    LOG_VERSION,
    STATE_KEY,
    Edit,
    front,
    inserted_ids,
    new_log,
    replay_log,
)
from strands_semantic_memory.context_editing._ranges import (
    ID_LENGTH,
    ID_PREFIX,
    current_turn_start,
    message_id,
    plan_range,
    replacement_role,
)
from strands_semantic_memory.engine._memory import SemanticMemory, resolve_memory
from strands_semantic_memory.errors import ConfigurationError
from strands_semantic_memory.messages._session import session_of
from strands_semantic_memory.tools._arguments import format_index_ranges

if TYPE_CHECKING:
    from strands.agent.agent import Agent

logger = logging.getLogger(__name__)

__all__ = ["ID_LENGTH", "ID_PREFIX", "STATE_KEY", "ContextEditor", "current_turn_start", "message_id"]

_PASS_AS = "ContextEditor(memory=...)"


class ContextEditor(Plugin):
    """Lets the model summarize or drop ranges of its active context; archives each range first.

    See the module docstring for the guarantees. Use one ``ContextEditor`` per agent.
    """

    name = "strands-semantic-memory:context-editor"

    def __init__(
        self,
        memory: Any = None,
        *,
        show_ids: bool = True,
        max_summary_chars: int = 4000,
    ) -> None:
        """Create the plugin.

        Args:
            memory: Where ranges are archived before they leave the context: a ``SemanticMemory``, a
                ``SemanticSummarizingConversationManager`` or a ``SemanticMemoryStore``. Default: the memory of
                the agent's conversation manager.
            show_ids: Show each editable message's id to the model (``[ctx:1a2b3c4d]``, per call, never stored).
                Without ids the model cannot address ranges; turn off only if you show them another way.
            max_summary_chars: Longest summary ``context_summarize`` accepts.

        Raises:
            ConfigurationError: If ``memory`` holds no ``SemanticMemory``, ``show_ids`` is not a bool or
                ``max_summary_chars`` is not an integer >= 1 (the message names the option and the value).
        """
        self._memory: SemanticMemory | None = None if memory is None else resolve_memory(memory, pass_as=_PASS_AS)
        check_flag("show_ids", show_ids)
        check_int("max_summary_chars", max_summary_chars, minimum=1)
        self.show_ids = show_ids
        self.max_summary_chars = max_summary_chars
        self._agent: Agent | None = None
        self._pending: list[Edit] = []
        self._lock = threading.Lock()
        self.applied_count = 0
        super().__init__()

    @property
    def memory(self) -> SemanticMemory:
        """The memory ranges are archived in (known once the plugin is attached to an agent).

        Raises:
            ConfigurationError: Before the plugin is attached, when no memory was given.
        """
        if self._memory is None:
            raise ConfigurationError("ContextEditor has no memory yet: attach it to an agent, or pass memory=")
        return self._memory

    @property
    def pending_edits(self) -> int:
        """Edits queued by the model and not applied yet."""
        with self._lock:
            return len(self._pending)

    # ------------------------------------------------------------------ wiring

    def init_agent(self, agent: Agent) -> None:
        """Attach to ``agent``: resolve the memory, register the id middleware and the safe-point hooks.

        Raises:
            ConfigurationError: If the plugin is already attached to another agent, or no memory can be found.
        """
        if self._agent is not None and self._agent is not agent:
            raise ConfigurationError("a ContextEditor serves one agent; create one per agent")
        if self._memory is None:  # ranges are archived before they are removed: there must be an archive
            self._memory = resolve_memory(agent, pass_as=_PASS_AS)
        self._agent = agent
        if self.show_ids:
            agent.add_middleware(InvokeModelStage.Input, self._show_ids)
        agent.add_hook(self._on_agent_initialized, AgentInitializedEvent)
        agent.add_hook(self._on_before_model_call, BeforeModelCallEvent)
        agent.add_hook(self._on_after_invocation, AfterInvocationEvent)

    def _show_ids(self, context: InvokeModelContext) -> InvokeModelContext:
        """Per-call input middleware: put ``[ctx:<id>]`` in front of each editable message (never in history)."""
        messages = list(context.messages)
        for position in range(current_turn_start(messages)):
            short = message_id(messages[position])
            if short is None:
                continue
            original = messages[position]
            content: list[ContentBlock] = list(original.get("content") or [])
            tag: ContentBlock = {"text": f"[{ID_PREFIX}{short}]"}
            if original.get("role") == "user" and any(isinstance(b, dict) and "toolResult" in b for b in content):
                content.append(tag)  # tool results come first in a user message
            else:
                lead = 0
                while lead < len(content) and isinstance(content[lead], dict) and "reasoningContent" in content[lead]:
                    lead += 1
                content.insert(lead, tag)
            tagged: Message = dict(original)  # type: ignore[assignment]
            tagged["content"] = content
            messages[position] = tagged
        return replace(context, messages=messages)

    # ------------------------------------------------------------------ safe points

    def _on_before_model_call(self, event: BeforeModelCallEvent) -> None:
        self._apply_pending(event.agent)

    def _on_after_invocation(self, event: AfterInvocationEvent) -> None:
        self._apply_pending(event.agent)
        log = event.agent.state.get(STATE_KEY)
        if isinstance(log, dict) and log.get("edits"):
            head, anchor = front(event.agent, log)
            if (head, anchor) != (log.get("head"), log.get("anchor")):
                log["head"], log["anchor"] = head, anchor
                event.agent.state.set(STATE_KEY, log)

    def _apply_pending(self, agent: Agent) -> None:
        with self._lock:
            ready = [e for e in self._pending if e.ready]
            self._pending = [e for e in self._pending if not e.ready]
        if not ready:
            return
        log = agent.state.get(STATE_KEY)
        if not isinstance(log, dict) or log.get("version") != LOG_VERSION:
            log = new_log()
        before = len(agent.messages)
        for edit in ready:
            if edit.apply(agent.messages):
                log["edits"].append(edit.as_log())
                self.applied_count += 1
            else:
                logger.info("edit=<%s> | the range left the context before the edit applied; nothing to do", edit.kind)
        log["head"], log["anchor"] = front(agent, log)
        agent.state.set(STATE_KEY, log)
        logger.debug(
            "edits=<%d>, messages_before=<%d>, messages_after=<%d> | context edits applied",
            len(ready),
            before,
            len(agent.messages),
        )

    def _on_agent_initialized(self, event: AgentInitializedEvent) -> None:
        """Replay the edit log over messages a session manager restored (a no-op when they already reflect it)."""
        replay_log(event.agent.messages, event.agent.state.get(STATE_KEY))

    # ------------------------------------------------------------------ the tools

    async def _queue(
        self, tool_context: ToolContext, start: Any, end: Any, summary: str | None
    ) -> str:  # the shared body of both tools
        agent = tool_context.agent
        if self._agent is not None and agent is not self._agent:
            raise ValueError("this context editor belongs to another agent")
        first, last, note = plan_range(agent, start, end)
        messages = agent.messages
        removed_ids = [str(messages[p].get("tracking_id")) for p in range(first, last + 1)]
        ours = inserted_ids(agent)
        forgotten = getattr(agent.conversation_manager, "is_forgotten", None)  # forgotten: leaves unarchived
        originals = [
            copy.deepcopy(messages[p])
            for p in range(first, last + 1)
            if removed_ids[p - first] not in ours and not (callable(forgotten) and forgotten(messages[p]))
        ]
        before_role = messages[first - 1].get("role") if first > 0 else None
        after_role = messages[last + 1].get("role")
        count = last - first + 1
        after = str(messages[first - 1].get("tracking_id")) if first > 0 else None
        edit = Edit(kind="summarize" if summary is not None else "drop", removed=removed_ids, inserted=[], after=after)
        with self._lock:
            taken = {i for e in self._pending for i in e.removed}
            if taken.intersection(removed_ids):
                raise ValueError("the range overlaps an edit you already asked for in this step; wait for it to apply")
            self._pending.append(edit)
        try:
            session_id = session_of(agent)
            archived = await asyncio.to_thread(self.memory.add, originals, session_id=session_id) if originals else []
        except Exception:
            with self._lock:
                self._pending.remove(edit)
            raise
        where = (
            f"archived verbatim as Message {format_index_ranges(archived)}"
            if archived
            else "earlier summaries whose originals are archived already"
        )
        if archived and "conversation_read" in agent.tool_names:
            where += " (conversation_read shows them)"
        if summary is not None:
            role = replacement_role(before_role, after_role)
            text = (
                f"[Summary, written by the assistant, of {count} earlier messages removed from the active context; "
                f"{where}]\n{summary.strip()}"
            )
            edit.inserted = [{"role": role, "content": [{"text": text}], "tracking_id": str(uuid.uuid4())}]  # type: ignore[typeddict-item]
        elif (before_role or "assistant") == after_role:  # keep user/assistant alternation with a short note
            role = "assistant" if after_role == "user" else "user"
            text = f"[{count} earlier messages were removed from the active context; {where}.]"
            edit.inserted = [{"role": role, "content": [{"text": text}], "tracking_id": str(uuid.uuid4())}]  # type: ignore[typeddict-item]
        edit.archived = list(archived)
        with self._lock:
            edit.ready = True
        action = "replaced by your summary" if summary is not None else "removed"
        return (
            f"Queued: {count} messages{note} will be {action} before your next step; they are {where}. "
            "Continue with your task."
        )

    @tool(context=True)
    async def context_summarize(self, start: str, end: str, summary: str, tool_context: ToolContext) -> str:
        """Replace a range of earlier messages in your active context with your own summary, to free up context.

        The messages are archived verbatim first, so nothing is lost.
        Address messages by the id shown before each one, like [ctx:1a2b3c4d]. The current turn cannot be edited;
        tool calls are kept together with their results. The change applies before your next step.

        Args:
            start: Id of the first message of the range, e.g. ctx:1a2b3c4d.
            end: Id of the last message of the range (inclusive).
            summary: Your summary of the range: every fact, decision, number and open question worth keeping.
            tool_context: Supplied by Strands.
        """
        if not isinstance(summary, str) or not summary.strip():
            raise ValueError("summary must be non-empty text: what the range said that is worth keeping")
        if len(summary) > self.max_summary_chars:
            raise ValueError(f"summary is {len(summary)} characters; at most {self.max_summary_chars} are accepted")
        return await self._queue(tool_context, start, end, summary)

    @tool(context=True)
    async def context_drop(self, start: str, end: str, tool_context: ToolContext) -> str:
        """Remove a range of earlier messages from your active context, to free up context.

        The messages are archived verbatim first, so nothing is lost.
        Address messages by the id shown before each one, like [ctx:1a2b3c4d]. The current turn cannot be edited;
        tool calls are kept together with their results. The change applies before your next step.

        Args:
            start: Id of the first message of the range, e.g. ctx:1a2b3c4d.
            end: Id of the last message of the range (inclusive).
            tool_context: Supplied by Strands.
        """
        return await self._queue(tool_context, start, end, None)
