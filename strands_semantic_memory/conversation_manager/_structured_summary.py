"""One structured summary: merge what leaves the context into the pydantic session state, through the model."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel
from strands.types.content import Message

from strands_semantic_memory.conversation_manager._session_state import SessionState, cited_sources, clean_state
from strands_semantic_memory.conversation_manager._summarizer import merge_request, request_state

if TYPE_CHECKING:
    from strands.agent.agent import Agent

__all__ = ["merge_into_state", "previous_prose"]


def previous_prose(summary: Message | None, state: BaseModel | None, messages: list[Message]) -> str | None:
    """A prose summary to migrate into the first state (restored from a text session), if any.

    Args:
        summary: The manager's current summary message.
        state: The structured state so far (None before the first structured reduction).
        messages: The messages leaving the context.
    """
    if state is not None or summary is None or not any(m is summary for m in messages):
        return None
    return "\n".join(b["text"] for b in summary["content"] if isinstance(b.get("text"), str))


def merge_into_state(
    schema: type[BaseModel],
    previous: BaseModel | None,
    seen: list[Message],
    indices: list[int],
    agent: Agent,
    *,
    prose: str | None,
    summarization_agent: Any,
    system_prompt: str | None,
) -> BaseModel:
    """The new state: ``previous`` with ``seen`` (archived at ``indices``) merged in by the summarizing model.

    Args:
        schema: The state's pydantic class.
        previous: The state so far, or None.
        seen: The leaving messages the summarizer sees.
        indices: Their archive indices, same order (the state may cite only these and earlier sources).
        agent: The agent (its auxiliary model summarizes when no ``summarization_agent`` is given).
        prose: A prose summary to migrate into the first state.
        summarization_agent: The manager's dedicated summarization agent, if any.
        system_prompt: The manager's summarization system prompt, if any.

    Returns:
        The merged state (``previous`` itself when nothing new reached the summarizer).
    """
    if previous is not None and not seen:
        return previous  # nothing new reached the summarizer
    prompt = merge_request(schema, previous, seen, indices, prior_summary=prose)
    state = request_state(
        schema,
        prompt,
        model=None if summarization_agent is not None else agent.aux_model,
        agent=summarization_agent,
        system_prompt=system_prompt,
    )
    if isinstance(state, SessionState):
        allowed = (cited_sources(previous) if previous is not None else set()) | set(indices)
        state = clean_state(state, allowed)
    return state
