"""Dropping the oldest messages when summarizing fails or is not enough: where to cut, how much must go.

Also words the overflow error, naming the hook's injection budget as part of the cause.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from strands.agent.conversation_manager.compression.context_compression import adjust_split_point_for_tool_pairs
from strands.agent.conversation_manager.compression.pin_message import is_pinned
from strands.types.content import Message
from strands.types.exceptions import ContextWindowOverflowException

if TYPE_CHECKING:
    from strands.agent.agent import Agent

__all__ = ["count_tokens", "drop_split", "explain_overflow", "split_for"]

logger = logging.getLogger(__name__)


def _valid_split(messages: list[Message], split: int) -> bool:
    try:
        return adjust_split_point_for_tool_pairs(messages, split) == split
    except ContextWindowOverflowException:
        return False


def drop_split(messages: Sequence[Message], count: int) -> int:
    """Where to cut so that about ``count`` of the oldest messages leave, keeping tool pairs and the current turn.

    Args:
        messages: The active conversation.
        count: How many of the oldest messages should leave (at least 1).

    Returns:
        A split point ``k`` (messages ``[0, k)`` leave): the smallest valid one at or after ``count``, or failing
        that the largest valid one before it; ``0`` if no message can leave. The last message always stays, with the
        tool use its result answers.
    """
    conversation, last = list(messages), len(messages) - 1
    if last < 1:
        return 0
    count = max(1, min(count, last))
    candidates: list[int] = [*range(count, last + 1), *range(count - 1, 0, -1)]
    for split in candidates:
        if _valid_split(conversation, split):
            return split
    return 0


def explain_overflow(reason: str, agent: Agent, preserve: int) -> str:
    """The overflow error's text: what did not fit, and the hook's budget as part of the cause."""
    budget = _hook_budget(agent)
    hook = "max_context_length" + (f"={budget}" if budget is not None else "")
    return (
        f"{reason} ({len(agent.messages)} messages in the active context, preserve_recent_messages={preserve}). "
        f"The preserved recent messages plus the context SemanticMemoryHook injects into the turn (its {hook} "
        "budget) do not fit the model's context window: lower preserve_recent_messages or the hook's "
        "max_context_length, use a model with a larger context window, or set on_summary_failure='drop_oldest'"
    )


async def count_tokens(agent: Agent, messages: list[Message], *, full: bool = True) -> int:
    """The model's own token count (Strands' ``Model.count_tokens``) of ``messages``, with the prompt if ``full``."""
    if not full:
        return await agent.model.count_tokens(messages)
    return await agent.model.count_tokens(
        messages, tool_specs=agent.tool_registry.get_all_tool_specs(), system_prompt=agent.system_prompt
    )


async def split_for(agent: Agent, excess: int, summary: Message | None) -> int:
    """How many of the oldest messages must leave so that ``excess`` tokens go (the summary and pinned stay)."""
    messages, split = agent.messages, 0
    for position, message in enumerate(messages):
        split = position + 1
        if message is not summary and not is_pinned(messages, position):
            excess -= await count_tokens(agent, [message], full=False)
            if excess <= 0:
                break
    return split


def _hook_budget(agent: Agent) -> int | None:
    """The ``max_context_length`` of a SemanticMemoryHook registered on ``agent``, if one is.

    The hook's callbacks are found through Strands' public ``HookRegistry.get_callbacks_for``.
    """
    from strands.hooks import AgentInitializedEvent, HookRegistry

    from strands_semantic_memory.hook._hook import SemanticMemoryHook

    registry = getattr(agent, "hooks", None)
    if not isinstance(registry, HookRegistry):  # an object with the agent's interface but no hook registry
        return None
    for callback in registry.get_callbacks_for(AgentInitializedEvent(agent=agent)):
        owner = getattr(callback, "__self__", None)
        if isinstance(owner, SemanticMemoryHook):
            budget = owner.max_context_length
            return budget if isinstance(budget, int) else None
    return None
