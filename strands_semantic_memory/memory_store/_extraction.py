"""Strands' extraction for a writable store: the default config, triggers that tell the store its agent, and keys.

Strands hands a store's search nothing but the query; the agent (and so its active context) reaches a store only
through ``ExtractionTrigger.attach``, which ``MemoryManager`` calls once per store when the agent is built, so the
store's triggers are wrapped (``AgentAwareTrigger``) to note the agent. Extraction hands over messages without
their tracking ids; ``keyed`` gives each one an id derived from the batch's sequence number, so a retried batch is
archived once.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING

from strands.memory.extraction.triggers import InvocationTrigger
from strands.memory.extraction.types import (
    ExtractionConfig,
    ExtractionTrigger,
    ExtractionTriggerContext,
    MemoryMessageFilter,
)
from strands.types.content import Message

from strands_semantic_memory.errors import ConfigurationError

if TYPE_CHECKING:
    from strands.agent.agent import Agent

__all__ = ["KEEP_TOOL_TRAFFIC", "AgentAwareTrigger", "aware_of_agent", "keyed", "resolve_extraction"]

KEEP_TOOL_TRAFFIC = MemoryMessageFilter(exclude=[])
"""Extraction filter that keeps every content block. Strands' default drops ``toolUse``/``toolResult``; an archive
that promises to forget nothing keeps them."""

_RUN_NAMESPACE = uuid.UUID("6f6b1c2e-6c43-4d1b-9d0e-2a51b0f0a7c3")


def _default_extraction() -> ExtractionConfig:
    return ExtractionConfig(trigger=[InvocationTrigger()], filter=KEEP_TOOL_TRAFFIC)


class AgentAwareTrigger(ExtractionTrigger):
    """A store's extraction trigger that also tells the store which agent it serves."""

    def __init__(self, trigger: ExtractionTrigger, serve: Callable[[Agent], None]) -> None:
        self._trigger = trigger
        self._serve = serve
        self.name = trigger.name

    def attach(self, context: ExtractionTriggerContext) -> None:
        """Note the agent, then attach the wrapped trigger."""
        self._serve(context.agent)
        self._trigger.attach(context)


def resolve_extraction(extraction: ExtractionConfig | bool | None, writable: bool) -> ExtractionConfig | bool | None:
    """The extraction config a store's ``extraction=`` and ``writable`` ask for (trigger and filter defaulted).

    Raises:
        ConfigurationError: If ``extraction`` is neither a bool, None nor an ``ExtractionConfig``.
    """
    if extraction is None:
        return _default_extraction() if writable else None
    if extraction is True:
        return _default_extraction()
    if extraction is False:
        return False
    if not isinstance(extraction, dict):
        raise ConfigurationError(f"extraction must be a bool or a strands ExtractionConfig, got {extraction!r}")
    resolved = ExtractionConfig(**extraction)
    if "trigger" not in resolved:
        resolved["trigger"] = [InvocationTrigger()]
    if "filter" not in resolved:
        resolved["filter"] = KEEP_TOOL_TRAFFIC
    return resolved


def aware_of_agent(
    extraction: ExtractionConfig | bool | None, serve: Callable[[Agent], None]
) -> ExtractionConfig | bool | None:
    """The extraction config with each trigger wrapped so that attaching it calls ``serve`` with the agent."""
    if not isinstance(extraction, dict) or "trigger" not in extraction:
        return extraction
    triggers = extraction["trigger"]
    listed = triggers if isinstance(triggers, list) else [triggers]
    aware: ExtractionConfig = ExtractionConfig(**extraction)
    aware["trigger"] = [AgentAwareTrigger(t, serve) for t in listed]
    return aware


def keyed(message: Message, run_id: str, sequence_number: int | None) -> Message:
    """A shallow copy whose tracking id makes the engine's idempotency key survive a retried batch.

    Strands' extraction filter rebuilds each message without its tracking id. With a sequence number, the id is
    a UUID derived from the run's id and the number (the same on a retry, different in the next run);
    without one, the message's own id is kept, or a fresh one given (no idempotency is possible then).
    """
    copy: Message = dict(message)  # type: ignore[assignment]
    if sequence_number is not None:
        copy["tracking_id"] = str(uuid.uuid5(_RUN_NAMESPACE, f"{run_id}:{sequence_number}"))
    elif not copy.get("tracking_id"):
        copy["tracking_id"] = str(uuid.uuid4())
    return copy
