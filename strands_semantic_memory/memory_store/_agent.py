"""The agent a store serves: one at a time, and where its invocation stands (model calls, tool calls, overflows).

Strands hands a store's ``search`` nothing but the query, from two places: its injection middleware, which runs
inside a model call (between ``BeforeModelCallEvent`` and ``AfterModelCallEvent``), and its ``search_memory`` tool
(between ``BeforeToolCallEvent`` and ``AfterToolCallEvent``). An ``AgentLink``, made when the store learns its
agent (``MemoryManager`` attaches the store's extraction trigger), registers callbacks for those events, so the
store can tell a search for injection from one the model asked for, and sees the overflows of the agent's model
calls: after a first ``ContextWindowOverflowException`` in an invocation the store injects at most half of what it
injected into the call that overflowed, after a second nothing, until the next invocation.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

from strands.hooks import (
    AfterInvocationEvent,
    AfterModelCallEvent,
    AfterToolCallEvent,
    BeforeInvocationEvent,
    BeforeModelCallEvent,
    BeforeToolCallEvent,
)
from strands.types.exceptions import ContextWindowOverflowException

if TYPE_CHECKING:
    from strands.agent.agent import Agent

__all__ = ["AgentLink", "Invocation"]


@dataclass
class Invocation:
    """What one invocation of the agent has been through, as far as injection is concerned.

    Attributes:
        overflows: Model calls of the invocation the model refused with a context overflow.
        injected_tokens: Tokens the store injected into the model call under way (0 when nothing).
        cap: The most tokens the store may inject for the rest of the invocation (None: no cap): half of what it
            injected into the call that overflowed first, 0 after a second overflow.
    """

    overflows: int = 0
    injected_tokens: int = 0
    cap: int | None = None


class AgentLink:
    """The one agent a store serves (held weakly), with the callbacks that follow its invocations."""

    def __init__(self, agent: Agent) -> None:
        """Link to ``agent`` and register the callbacks on its hooks."""
        self._agent = weakref.ref(agent)
        self.in_model_call = False
        self.tools_running = 0
        self.invocation = Invocation()
        agent.add_hook(self._before_invocation, BeforeInvocationEvent)
        agent.add_hook(self._after_invocation, AfterInvocationEvent)
        agent.add_hook(self._before_model_call, BeforeModelCallEvent)
        agent.add_hook(self._after_model_call, AfterModelCallEvent)
        agent.add_hook(self._before_tool_call, BeforeToolCallEvent)
        agent.add_hook(self._after_tool_call, AfterToolCallEvent)

    @property
    def agent(self) -> Agent | None:
        """The agent, while it exists."""
        return self._agent()

    @property
    def injecting(self) -> bool:
        """Whether a search now comes from Strands' injection: a model call is being prepared and no tool runs."""
        return self.in_model_call and self.tools_running == 0

    def injected(self, tokens: int) -> None:
        """Note what the store injected into the model call under way."""
        self.invocation.injected_tokens = tokens

    def _before_invocation(self, event: BeforeInvocationEvent) -> None:
        self.invocation = Invocation()
        self.in_model_call = False
        self.tools_running = 0

    def _after_invocation(self, event: AfterInvocationEvent) -> None:
        self.in_model_call = False
        self.tools_running = 0

    def _before_model_call(self, event: BeforeModelCallEvent) -> None:
        self.in_model_call = True
        self.invocation.injected_tokens = 0

    def _after_model_call(self, event: AfterModelCallEvent) -> None:
        self.in_model_call = False
        if isinstance(event.exception, ContextWindowOverflowException):
            invocation = self.invocation
            invocation.overflows += 1
            invocation.cap = invocation.injected_tokens // 2 if invocation.overflows == 1 else 0

    def _before_tool_call(self, event: BeforeToolCallEvent) -> None:
        self.tools_running += 1

    def _after_tool_call(self, event: AfterToolCallEvent) -> None:
        self.tools_running = max(0, self.tools_running - 1)
