"""Checks made when a compacting conversation manager is built: the Strands methods it overrides, its options."""

from __future__ import annotations

import inspect
from typing import Literal, get_args

from pydantic import BaseModel
from strands.agent.conversation_manager import SummarizingConversationManager

from strands_semantic_memory.conversation_manager._summarizer import MessageFilter
from strands_semantic_memory.errors import ConfigurationError, SemanticMemoryError

__all__ = [
    "ON_SUMMARY_FAILURES",
    "SUMMARY_FORMATS",
    "OnSummaryFailure",
    "SummaryFormat",
    "check_strands_compatibility",
    "validate_compaction_options",
]

SummaryFormat = Literal["text", "structured"]
"""What a summary is: Strands' prose, or a structured session state merged on each reduction."""
SUMMARY_FORMATS: tuple[SummaryFormat, ...] = get_args(SummaryFormat)
OnSummaryFailure = Literal["raise", "drop_oldest"]
"""What a failed summary during overflow recovery does: fail the turn, or drop the oldest messages (archived)."""
ON_SUMMARY_FAILURES: tuple[OnSummaryFailure, ...] = get_args(OnSummaryFailure)

_HOOKED_METHODS = {
    "_generate_summary": ("messages", "agent"),
    "_summarize_oldest": ("agent",),
    "_adjust_split_point_for_tool_pairs": ("messages", "split_point"),
}


def check_strands_compatibility() -> None:
    """Fail loudly if Strands no longer has the private methods the manager overrides.

    Archiving happens in an override of ``SummarizingConversationManager._generate_summary``; if a Strands release
    renamed it, the override would silently never run and nothing would be archived.

    Raises:
        SemanticMemoryError: If a hooked method is missing or its parameters changed.
    """
    for name, parameters in _HOOKED_METHODS.items():
        method = getattr(SummarizingConversationManager, name, None)
        found = tuple(inspect.signature(method).parameters)[1:] if callable(method) else None
        if found != parameters:
            expected = f"{name}({', '.join(parameters)})"
            change = "is missing" if found is None else "now takes (" + ", ".join(found) + ")"
            raise SemanticMemoryError(
                f"strands' SummarizingConversationManager.{expected} {change}: this manager archives by overriding "
                "it, so it would silently stop archiving. Install a strands-agents version this release supports "
                "(see pyproject.toml) or upgrade strands-semantic-memory"
            )


def validate_compaction_options(
    summary_format: SummaryFormat,
    summary_schema: type[BaseModel] | None,
    summary_filter: MessageFilter | None,
    hard_limit: float | None,
    on_summary_failure: OnSummaryFailure,
    threshold: float | None,
    state_budget: float,
) -> None:
    """Raise ConfigurationError naming the first invalid compaction option."""
    if isinstance(state_budget, bool) or not isinstance(state_budget, (int, float)) or not 0 < state_budget < 1:
        raise ConfigurationError(f"state_budget must be a share of the context window in (0, 1), got {state_budget!r}")
    if on_summary_failure not in ON_SUMMARY_FAILURES:
        raise ConfigurationError(f"on_summary_failure must be 'raise' or 'drop_oldest', got {on_summary_failure!r}")
    if summary_format not in SUMMARY_FORMATS:
        raise ConfigurationError(f"summary_format must be 'text' or 'structured', got {summary_format!r}")
    if summary_schema is not None and not (isinstance(summary_schema, type) and issubclass(summary_schema, BaseModel)):
        raise ConfigurationError(f"summary_schema must be a pydantic BaseModel class, got {summary_schema!r}")
    if summary_schema is not None and summary_format != "structured":
        raise ConfigurationError("summary_schema needs summary_format='structured'")
    if summary_filter is not None and not callable(summary_filter):
        raise ConfigurationError(f"summary_filter must be callable, got {summary_filter!r}")
    if hard_limit is not None and (isinstance(hard_limit, bool) or not 0 < hard_limit <= 1):
        raise ConfigurationError(f"hard_limit must be a share of the context window in (0, 1], got {hard_limit!r}")
    if hard_limit is not None and threshold is not None and hard_limit < threshold:
        raise ConfigurationError(
            f"hard_limit ({hard_limit}) must not be below the proactive compression threshold ({threshold})"
        )
