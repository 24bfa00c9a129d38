"""The manager's options checked when it is built, and the Strands methods it overrides (Strands compatibility)."""

from __future__ import annotations

import inspect
import logging
import math
from collections.abc import Mapping
from typing import Any, Literal, get_args

from pydantic import BaseModel
from strands.agent.conversation_manager import SummarizingConversationManager
from strands.agent.conversation_manager.conversation_manager import DEFAULT_COMPRESSION_THRESHOLD

from strands_semantic_memory._validation import check_instance, check_int, check_members, check_score
from strands_semantic_memory.conversation_manager._summarizer import MessageFilter
from strands_semantic_memory.engine._memory import SemanticMemory
from strands_semantic_memory.errors import ConfigurationError, SemanticMemoryError

__all__ = [
    "ARCHIVE_WHEN",
    "DEFAULT_ARCHIVE_WHEN",
    "ON_SUMMARY_FAILURES",
    "SUMMARY_FORMATS",
    "ArchiveWhen",
    "OnSummaryFailure",
    "SummaryFormat",
    "check_strands_compatibility",
    "validate_archive_options",
    "validate_compaction_options",
    "validate_strands_options",
]

SummaryFormat = Literal["text", "structured"]
"""What a summary is: Strands' prose, or a structured summary merged on each reduction."""
SUMMARY_FORMATS: tuple[SummaryFormat, ...] = get_args(SummaryFormat)
OnSummaryFailure = Literal["raise", "drop_oldest"]
"""What a failed summary during overflow recovery does: fail the turn, or drop the oldest messages (archived)."""
ON_SUMMARY_FAILURES: tuple[OnSummaryFailure, ...] = get_args(OnSummaryFailure)
ArchiveWhen = Literal["added", "leaving"]
"""When the manager archives a message: at the end of the invocation that added it (``"added"``: the memory holds the
whole session, so a new session finds it), or only when it leaves the active context (``"leaving"``)."""
ARCHIVE_WHEN: tuple[ArchiveWhen, ...] = get_args(ArchiveWhen)
DEFAULT_ARCHIVE_WHEN: ArchiveWhen = "added"
"""The default of the manager's ``archive_when``."""

SUMMARY_RATIO_RANGE = (0.1, 0.8)
"""Strands' range for ``summary_ratio``; Strands clamps a value outside it silently, this manager clamps it too, and
warns."""

logger = logging.getLogger(__name__)

_AGENT_MEMBERS = ("messages", "system_prompt")
"""What a summarization agent must have besides being callable: the manager swaps them and puts them back."""

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


def validate_strands_options(
    *,
    summary_ratio: Any,
    preserve_recent_messages: Any,
    summarization_agent: Any,
    summarization_system_prompt: Any,
    pin_first: Any,
    proactive_compression: Any,
) -> None:
    """Raise ConfigurationError naming the first invalid option of Strands' ``SummarizingConversationManager``.

    What Strands accepts is accepted: a ``summary_ratio`` outside 0.1..0.8 and a negative ``pin_first`` are clamped by
    Strands, with a warning here; a ``summarization_agent`` need not be an ``Agent``, only have its interface (it is
    called with the prompt, and has ``messages`` and ``system_prompt``). Strands checks the rest late or not at all
    (a string ``preserve_recent_messages`` fails only at the first reduction); these checks run before anything is
    built.
    """
    low, high = SUMMARY_RATIO_RANGE
    if isinstance(summary_ratio, bool) or not isinstance(summary_ratio, (int, float)):
        raise ConfigurationError(f"summary_ratio must be a number in {low}..{high}, got {summary_ratio!r}")
    if not low <= summary_ratio <= high:
        logger.warning(
            "summary_ratio=<%r>, used=<%r> | summary_ratio is outside %s..%s; clamped, as Strands does",
            summary_ratio,
            max(low, min(high, summary_ratio)),
            low,
            high,
        )
    check_int("preserve_recent_messages", preserve_recent_messages, minimum=0)
    if isinstance(pin_first, int) and not isinstance(pin_first, bool) and pin_first < 0:
        logger.warning("pin_first=<%d>, used=<0> | pin_first is negative; clamped to 0, as Strands does", pin_first)
    else:
        check_int("pin_first", pin_first, minimum=0, optional=True)
    if summarization_system_prompt is not None and not isinstance(summarization_system_prompt, str):
        raise ConfigurationError(
            f"summarization_system_prompt must be a string or None, got {summarization_system_prompt!r}"
        )
    if summarization_agent is not None:
        _check_summarization_agent(summarization_agent)
        if summarization_system_prompt is not None:
            raise ConfigurationError(
                "Cannot provide both summarization_agent and summarization_system_prompt: the agent has its own "
                "system prompt (pass one of them)"
            )
    _check_proactive_compression(proactive_compression)


def _check_summarization_agent(agent: Any) -> None:
    """A summarization agent is an ``Agent``, or any object with the interface the manager uses (as in Strands)."""
    from strands.agent.agent import Agent

    if isinstance(agent, Agent):
        return
    what = "a strands Agent, or an object with its interface (called with the prompt; messages, system_prompt)"
    if not callable(agent):
        shown = repr(agent) if len(repr(agent)) <= 60 else repr(agent)[:57] + "..."
        raise ConfigurationError(
            f"summarization_agent must be {what}, got {type(agent).__name__} {shown} (not callable)"
        )
    check_members("summarization_agent", agent, _AGENT_MEMBERS, what)
    logger.debug("type=<%s> | summarization_agent is not a strands Agent; used through its interface", type(agent))


def _check_proactive_compression(value: Any) -> None:
    if value is None or isinstance(value, bool):
        return
    if not isinstance(value, Mapping):
        raise ConfigurationError(
            f"proactive_compression must be True, False, None or {{'compression_threshold': share}}, got {value!r}"
        )
    unknown = sorted(set(value) - {"compression_threshold"})
    if unknown:
        raise ConfigurationError(f"proactive_compression has unknown key(s) {unknown}; it takes compression_threshold")
    threshold = value.get("compression_threshold", DEFAULT_COMPRESSION_THRESHOLD)
    if (
        isinstance(threshold, bool)
        or not isinstance(threshold, (int, float))
        or not math.isfinite(threshold)
        or not 0 < threshold <= 1
    ):
        raise ConfigurationError(
            "proactive_compression's compression_threshold must be between 0 (exclusive) and 1 (inclusive), a share "
            f"of the context window, got {threshold!r}"
        )


def validate_archive_options(
    *,
    message_context_radius: Any,
    semantic_search_top_k: Any,
    semantic_search_min_score: Any,
    memory: Any,
    archive_when: Any,
) -> None:
    """Raise ConfigurationError naming the first invalid archive option, under the manager's own option names.

    The other archive options keep their names in ``SemanticMemory``, which checks them.
    """
    check_int("message_context_radius", message_context_radius, minimum=0)
    check_int("semantic_search_top_k", semantic_search_top_k, minimum=1)
    check_score("semantic_search_min_score", semantic_search_min_score)
    check_instance("memory", memory, SemanticMemory, "a SemanticMemory or None")
    if archive_when not in ARCHIVE_WHEN:
        raise ConfigurationError(f"archive_when must be one of {list(ARCHIVE_WHEN)}, got {archive_when!r}")
