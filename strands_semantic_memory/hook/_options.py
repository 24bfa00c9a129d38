"""The hook's options: one frozen record, each field checked by one rule, replaced whole by ``configure``.

``SemanticMemoryHook`` reads its options once per model call (``CallPlan``), so a change made between two calls
(``hook.enabled = False``, ``hook.configure(top_k=5)``) applies from the next call, and a call never sees half of a
change.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from strands_semantic_memory._validation import check_flag, check_instance, check_int, check_score
from strands_semantic_memory.budget import ContextBudget
from strands_semantic_memory.errors import ConfigurationError
from strands_semantic_memory.retrieval._relevance import DEFAULT_INJECT_WHEN, INJECT_WHEN, InjectWhen

__all__ = ["DEFAULT_HOOK_OPTIONS", "INJECT_WHEN", "HookOptions", "InjectWhen"]


def _optional_count(minimum: int) -> Callable[[str, Any], int | None]:
    return lambda name, value: check_int(name, value, minimum=minimum, optional=True)


def _inject_when(name: str, value: Any) -> InjectWhen:
    if value not in INJECT_WHEN:
        raise ConfigurationError(f"{name} must be one of {list(INJECT_WHEN)}, got {value!r}")
    chosen: InjectWhen = value
    return chosen


def _budget(name: str, value: Any) -> ContextBudget | None:
    return check_instance(name, value, ContextBudget, "a ContextBudget or None")


CHECKS: Mapping[str, Callable[[str, Any], Any]] = {
    "enabled": check_flag,
    "max_context_length": _optional_count(1),
    "include_metadata": check_flag,
    "top_k": _optional_count(1),
    "context_radius": _optional_count(0),
    "min_score": check_score,
    "keep_injected_context": check_flag,
    "max_context_tokens": _optional_count(1),
    "show_dates": check_flag,
    "budget": _budget,
    "inject_when": _inject_when,
}
"""Each option's check: the value as the hook keeps it, or ``ConfigurationError`` naming the option and value."""


@dataclass(frozen=True, kw_only=True)
class HookOptions:
    """What shapes the hook's searches and blocks (documented on ``SemanticMemoryHook``)."""

    enabled: bool = True
    max_context_length: int | None = None
    include_metadata: bool = False
    top_k: int | None = None
    context_radius: int | None = 0
    min_score: float | None = None
    keep_injected_context: bool = False
    max_context_tokens: int | None = None
    show_dates: bool = True
    budget: ContextBudget | None = None
    inject_when: InjectWhen = DEFAULT_INJECT_WHEN

    def __post_init__(self) -> None:
        """Check every field (booleans are not integers, flags are real booleans).

        Raises:
            ConfigurationError: If a field breaks its rule (the message names it and the value).
        """
        for field in dataclasses.fields(self):
            CHECKS[field.name](field.name, getattr(self, field.name))

    def replace(self, **changes: Any) -> HookOptions:
        """These options with ``changes``, all checked before anything changes.

        Raises:
            ConfigurationError: If a name is not an option or a value breaks its rule.
        """
        unknown = sorted(set(changes) - set(CHECKS))
        if unknown:
            raise ConfigurationError(f"unknown SemanticMemoryHook option(s) {unknown}; options: {sorted(CHECKS)}")
        return dataclasses.replace(self, **changes)


DEFAULT_HOOK_OPTIONS = HookOptions()
