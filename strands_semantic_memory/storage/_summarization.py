"""BudgetSummarization: a strategy for Strands' ``ContextManager`` that keeps the memory's share of the window free.

Strands' ``proactive_summarization`` preset summarizes the oldest messages once the projected input of a call
reaches 70 % of the window. That projection starts from the usage the provider reported for the previous call,
which held that call's injected context too: with ``SemanticMemoryHook`` the preset then fires on nearly every turn,
each time a summary call, and the history left is far smaller than the window allows; without the hook the history
grows to 70 % and leaves the hook less than its share.

``BudgetSummarization`` measures what the budget is about, the history itself (the call's messages and system
prompt, estimated as the hook estimates them), and summarizes the oldest messages, with Strands' own summarize
strategy, while it is above ``ContextBudget.history_limit`` of the window: the same headroom this library's
conversation manager keeps. The hook on the same agent then spends the same budget (the strategy records it for
the agent), so one ``ContextBudget`` serves both.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from strands.experimental.context_manager import ContextState, Offload, SummarizeConfig

from strands_semantic_memory._validation import check_instance
from strands_semantic_memory.budget import ContextBudget, history_tokens, model_window, share_budget
from strands_semantic_memory.errors import ConfigurationError

if TYPE_CHECKING:
    from strands.agent.agent import Agent

__all__ = ["DEFAULT_SUMMARY_RATIO", "MAX_ROUNDS", "BudgetSummarization"]

logger = logging.getLogger(__name__)

DEFAULT_SUMMARY_RATIO = 0.3
"""Share of the messages summarized per round: that of Strands' preset (it keeps the newest 70 %) and of this
library's conversation manager."""

MAX_ROUNDS = 8
"""Most summary calls one model call may wait for (each summarizes ``summary_ratio`` of the messages)."""


class BudgetSummarization:
    """Summarizes the oldest messages while the history is above the budget's ``history_limit`` of the window.

    Example:
        ```python
        from strands import Agent
        from strands.experimental.context_manager import ContextManager
        from strands_semantic_memory import SemanticMemoryHook, SemanticStorage
        from strands_semantic_memory.storage import BudgetSummarization

        storage = SemanticStorage()
        agent = Agent(
            model=scripted_model,
            context_manager=ContextManager(strategies=[BudgetSummarization()]),
            storage=storage,
            plugins=[SemanticMemoryHook(storage=storage)],
        )
        ```

    Each round is one call of Strands' summarize strategy (``Offload.summarize("*")``): the oldest
    ``summary_ratio`` of the messages become one ``[Summarized: ...]`` note, and the ``ContextManager`` has stashed
    every one of them, as it was added, in the agent's storage, where the hook finds them by meaning. A model that
    does not declare ``context_window_limit`` is reduced only when it reports an overflow (one round), as Strands
    does.
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
            budget: How the model's window is shared (default ``ContextBudget()``, the hook's default). The hook on
                the same agent uses this budget unless it is given its own.
            summary_ratio: Share of the messages (the oldest) summarized per round, 0.1 to 0.8.
            summarize: Strands' summarize options (``model``, ``system_prompt``), passed to its summarize strategy.

        Raises:
            ConfigurationError: If ``budget`` is not a ``ContextBudget`` or ``summary_ratio`` is out of range.
        """
        checked = check_instance("budget", budget, ContextBudget, "a ContextBudget or None")
        ratio = summary_ratio
        if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or not 0.1 <= ratio <= 0.8:
            raise ConfigurationError(f"summary_ratio must be a number in [0.1, 0.8], got {ratio!r}")
        self.budget: ContextBudget = checked if checked is not None else ContextBudget()
        self.summary_ratio = float(ratio)
        # Strands' strategy, told to act whenever it is applied: this strategy decides when.
        self._summarize = Offload.summarize("*", summarize).when(
            utilization=0.0, preserve_recent=1 - self.summary_ratio
        )

    @property
    def name(self) -> str:
        """The strategy's name in Strands' logs."""
        return "strands-semantic-memory:budget-summarization"

    def init(self, agent: Agent, stash: Any = None) -> None:
        """Called by the ``ContextManager`` with its agent: records the budget for the agent's hook."""
        share_budget(agent, self.budget)
        self._summarize.init(agent, stash=stash)

    async def apply(self, context: ContextState) -> bool:
        """Summarize the oldest messages, round by round, until the history is within the budget.

        Args:
            context: Strands' context state (the agent's messages, changed in place).

        Returns:
            Whether anything was summarized.
        """
        agent = context.agent
        window = model_window(agent.model)
        system_prompt = agent.system_prompt
        if window is None:
            return bool(context.overflow) and await self._summarize.apply(context)
        limit = self.budget.history_limit(window)
        rounds = 0
        tokens = history_tokens(context.messages, system_prompt)
        while rounds < MAX_ROUNDS and (tokens > limit or (context.overflow and rounds == 0)):
            if not await self._summarize.apply(context):
                break
            rounds += 1
            tokens = history_tokens(context.messages, system_prompt)
        if rounds:
            logger.debug(
                "rounds=<%d>, tokens=<%d>, limit=<%d> | history summarized to keep the memory's share free",
                rounds,
                tokens,
                limit,
            )
        return rounds > 0
