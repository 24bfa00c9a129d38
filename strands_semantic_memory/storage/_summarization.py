"""BudgetSummarization: a strategy for Strands' ``ContextManager`` that keeps the memory's share of the window free.

Strands' ``proactive_summarization`` preset summarizes once the projected input of a call reaches 70 % of the window,
projected from the usage the provider reported for the previous call, which held that call's injected context too:
with ``SemanticMemoryHook`` it then fires on nearly every turn, and without it the history leaves the hook less than
its share. This strategy measures the history itself (the call's messages and system prompt, estimated as the hook
estimates them) and, while it is above ``ContextBudget.history_limit`` of the window, summarizes the oldest messages
with Strands' own summarize strategy. Every message was stashed as it was added, so nothing summarized is lost: the
hook on the same agent finds it in the storage, and spends the same budget.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from strands.experimental.context_manager import ContextState, Offload, SummarizeConfig

from strands_semantic_memory.budget import ContextBudget, history_tokens, model_window
from strands_semantic_memory.errors import ConfigurationError

if TYPE_CHECKING:
    from strands.agent.agent import Agent

__all__ = ["DEFAULT_SUMMARY_RATIO", "MAX_ROUNDS", "BudgetSummarization"]

logger = logging.getLogger(__name__)

DEFAULT_SUMMARY_RATIO = 0.3
"""Share of the messages summarized per round: that of Strands' preset (it keeps the newest 70 %) and of this
library's conversation manager."""
MAX_ROUNDS = 8
"""Most summary calls one model call waits for."""


class BudgetSummarization:
    """Summarizes the oldest messages while the history is above the budget's ``history_limit`` of the window.

    Example:
        ```python
        from strands.experimental.context_manager import ContextManager
        from strands_semantic_memory.budget import ContextBudget
        from strands_semantic_memory.storage import BudgetSummarization

        # with Agent(storage=SemanticStorage(), plugins=[SemanticMemoryHook(storage=...)]): the hook spends 0.4 too
        context_manager = ContextManager(strategies=[BudgetSummarization(ContextBudget(memory_share=0.4))])
        ```

    Each round is one call of Strands' ``Offload.summarize("*")``: the oldest ``summary_ratio`` of the messages become
    one ``[Summarized: ...]`` note. A model that declares no ``context_window_limit`` is summarized only when it
    reports an overflow (one round), as Strands does.
    """

    def __init__(
        self,
        budget: ContextBudget | None = None,
        *,
        summary_ratio: float = DEFAULT_SUMMARY_RATIO,
        summarize: SummarizeConfig | None = None,
    ) -> None:
        """Create the strategy.

        Args:
            budget: How the model's window is shared (default ``ContextBudget()``); the hook on the same agent spends
                this budget unless it is given its own.
            summary_ratio: Share of the messages (the oldest) summarized per round, 0.1 to 0.8.
            summarize: Strands' summarize options (``model``, ``system_prompt``).

        Raises:
            ConfigurationError: If ``budget`` is not a ``ContextBudget`` or ``summary_ratio`` is out of range.
        """
        if budget is not None and not isinstance(budget, ContextBudget):
            raise ConfigurationError(f"budget must be a ContextBudget or None, got {type(budget).__name__}")
        ratio = summary_ratio
        if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or not 0.1 <= ratio <= 0.8:
            raise ConfigurationError(f"summary_ratio must be a number in [0.1, 0.8], got {ratio!r}")
        self.budget: ContextBudget = budget or ContextBudget()
        self.summary_ratio = float(ratio)
        # Strands' strategy, told to act whenever it is applied: this one decides when.
        self._summarize = Offload.summarize("*", summarize).when(utilization=0.0, preserve_recent=1 - ratio)

    @property
    def name(self) -> str:
        """The strategy's name in Strands' logs."""
        return "strands-semantic-memory:budget-summarization"

    def init(self, agent: Agent, stash: Any = None) -> None:
        """Called by the ``ContextManager`` with its agent: records the budget where ``budget.agent_budget`` reads it.

        Strands keeps a ``ContextManager``'s strategies private, so the budget goes on the manager itself.
        """
        manager = getattr(agent, "context_manager", None)
        if manager is not None:
            manager.budget = self.budget
        self._summarize.init(agent, stash=stash)

    async def apply(self, context: ContextState) -> bool:
        """Summarize the oldest messages, round by round, until the history is within the budget.

        Returns:
            Whether anything was summarized.
        """
        agent = context.agent
        window = model_window(agent.model)
        if window is None:
            return bool(context.overflow) and await self._summarize.apply(context)
        limit = self.budget.history_limit(window)
        rounds = 0
        tokens = history_tokens(context.messages, agent.system_prompt)
        while rounds < MAX_ROUNDS and (tokens > limit or (context.overflow and rounds == 0)):
            if not await self._summarize.apply(context):
                break
            rounds += 1
            tokens = history_tokens(context.messages, agent.system_prompt)
        if rounds:
            logger.debug("rounds=<%d>, tokens=<%d>, limit=<%d> | history summarized to keep the memory's share free",
                         rounds, tokens, limit)  # fmt: skip
        return rounds > 0
