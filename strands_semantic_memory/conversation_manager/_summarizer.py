"""How the summarizer is asked: what it sees, the merge prompt, and Strands' structured output.

* ``summary_view``: the leaving messages the summarizer sees under a user filter, tool pairs kept whole.
* ``merge_request``: the prompt of one merge: the previous state (never a re-summary of prose), the leaving
  messages verbatim, labelled with their archive indices, and the instruction.
* ``request_state``: the updated state from the summarization model (``Model.structured_output``) or a
  dedicated summarization agent (``agent(..., structured_output_model=...)``), validated against the schema.
* ``merge_into_state``: one structured reduction: the previous summary with the leaving messages merged in by the
  model, its sources checked; ``previous_prose``: a prose summary to migrate into the first structured one.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel
from strands.types.content import Message

from strands_semantic_memory.conversation_manager._structured_summary import (
    STATE_CLOSE,
    STATE_OPEN,
    StructuredSummary,
    cited_sources,
    clean_state,
    state_json,
)

if TYPE_CHECKING:
    from strands.agent.agent import Agent
    from strands.models import Model

__all__ = [
    "DEFAULT_STATE_PROMPT",
    "MessageFilter",
    "default_system_prompt",
    "describe_indices",
    "merge_into_state",
    "merge_request",
    "previous_prose",
    "request_state",
    "summary_view",
]

T = TypeVar("T")
S = TypeVar("S", bound=BaseModel)

MessageFilter = Callable[[Message], bool]
"""Decides whether the summarizer sees a message (True: it does). The archive receives every message regardless."""

DEFAULT_STATE_PROMPT = """You maintain the session state of a conversation: a structured record that replaces the \
earlier messages in the assistant's context. You receive the current session state and the messages now leaving the \
context, and you return the updated session state.

Rules:
- Zero loss for facts and decisions: keep every name, number, date, identifier, amount, file path and piece of code \
exactly as written in the messages. Copy values verbatim; never round, abbreviate or paraphrase them.
- For each fact and decision, list in "sources" the archive numbers (#N) of the messages it comes from.
- Merge, do not re-summarize: keep every item of the current state unless the new messages contradict, complete or \
resolve it. Replace a contradicted item with the new value, remove resolved open threads, and add nothing twice.
- user_preferences: preferences, constraints and goals the user stated. tone: the user's tone and preferred style.
- shared_concepts: concepts already explained to or known by the user, so they are not explained again.
- open_threads: unanswered questions and pending tasks.
- narrative: two or three sentences that bridge to where the conversation stands now.
- Do not address the user and do not comment on tools."""

_GENERIC_STATE_PROMPT = """You maintain a structured record of a conversation that replaces the earlier messages in \
the assistant's context. You receive the current record and the messages now leaving the context; return the updated \
record. Keep names, numbers, identifiers and code exactly as written. Keep every item of the current record unless \
the new messages contradict or resolve it; replace contradicted values; add nothing twice."""

_INSTRUCTION = "Return the updated {name}: merge the messages above into the current one."


def default_system_prompt(schema: type[BaseModel]) -> str:
    """The system prompt for ``schema``: the detailed one for ``StructuredSummary``, a generic one otherwise."""
    return DEFAULT_STATE_PROMPT if issubclass(schema, StructuredSummary) else _GENERIC_STATE_PROMPT


def describe_indices(indices: Sequence[int]) -> str:
    """Archive indices as compact ranges: ``[3, 4, 5, 9]`` -> ``"#3-#5, #9"``."""
    parts: list[str] = []
    run: list[int] = []
    for index in indices:
        if run and index == run[-1] + 1:
            run.append(index)
            continue
        if run:
            parts.append(f"#{run[0]}" if len(run) == 1 else f"#{run[0]}-#{run[-1]}")
        run = [index]
    if run:
        parts.append(f"#{run[0]}" if len(run) == 1 else f"#{run[0]}-#{run[-1]}")
    return ", ".join(parts)


def merge_request(
    schema: type[BaseModel],
    previous: BaseModel | None,
    messages: Sequence[Message],
    indices: Sequence[int],
    *,
    prior_summary: str | None = None,
) -> list[Message]:
    """The prompt of one merge: the previous state, the leaving messages verbatim, the instruction.

    Args:
        schema: The state's schema (its name is used in the instruction).
        previous: The state so far, or None on the first reduction.
        messages: The messages leaving the context that the summarizer may see.
        indices: Their archive indices, same order.
        prior_summary: A prose summary to build the first state from (a session that was summarized as text).

    Returns:
        ``[state message] + messages + [instruction]``; the first and last are user messages.
    """
    if previous is None and prior_summary:
        current = (
            f"There is no {schema.__name__} yet. The earlier conversation was summarized in prose:\n"
            f"{prior_summary}\n\nBuild the {schema.__name__} from that summary and the messages that follow."
        )
    elif previous is None:
        current = f"There is no {schema.__name__} yet: build it from the messages that follow."
    else:
        current = f"The current {schema.__name__}:\n{STATE_OPEN}\n{state_json(previous)}\n{STATE_CLOSE}"
    if messages:
        current += (
            f"\n\nThe {len(messages)} messages that follow are leaving the context. "
            f"They are archived as {describe_indices(indices)} (in order)."
        )
    else:
        current += "\n\nNo new messages: return it unchanged."
    head: Message = {"role": "user", "content": [{"text": current}]}
    tail: Message = {"role": "user", "content": [{"text": _INSTRUCTION.format(name=schema.__name__)}]}
    return [head, *messages, tail]


def _run_sync(factory: Callable[[], Awaitable[T]]) -> T:
    """Run a coroutine to completion from synchronous code, in a worker thread with its own event loop.

    Conversation managers are called synchronously, sometimes from inside the agent's running loop, so the
    coroutine cannot be run on the calling thread (Strands' summarizing manager does the same).
    """

    async def main() -> T:
        return await factory()

    with ThreadPoolExecutor(max_workers=1) as executor:
        context = contextvars.copy_context()
        return executor.submit(context.run, asyncio.run, main()).result()


async def _from_model(model: Model, schema: type[S], prompt: list[Message], system_prompt: str) -> Any:
    output: Any = None
    async for event in model.structured_output(schema, prompt, system_prompt=system_prompt):
        if isinstance(event, dict) and "output" in event:
            output = event["output"]
    return output


def _from_agent(summarizer: Agent, schema: type[S], prompt: list[Message]) -> Any:
    """Ask a dedicated summarization agent, restoring its messages and system prompt afterwards (as Strands does)."""
    saved_messages = summarizer.messages.copy()
    saved_prompt = summarizer.system_prompt
    try:
        summarizer.messages = list(prompt[:-1])
        result = summarizer(prompt[-1]["content"], structured_output_model=schema)
        return result.structured_output
    finally:
        summarizer.messages = saved_messages
        summarizer.system_prompt = saved_prompt


def request_state(
    schema: type[S],
    prompt: list[Message],
    *,
    model: Model | None = None,
    agent: Agent | None = None,
    system_prompt: str | None = None,
) -> S:
    """Get the updated state through Strands' structured output, from ``agent`` if given, else ``model``.

    Args:
        schema: The pydantic model to produce.
        prompt: From ``merge_request``.
        model: The summarization model (``model.structured_output``).
        agent: A dedicated summarization agent (``agent(..., structured_output_model=schema)``); it keeps its own
            system prompt.
        system_prompt: Overrides the default system prompt of the model path.

    Returns:
        A validated instance of ``schema``.

    Raises:
        pydantic.ValidationError: If the model's output does not validate against ``schema``.
        RuntimeError: If the model produced no structured output.
        Exception: Whatever the model or agent raised.
    """
    if agent is not None:
        output = _from_agent(agent, schema, prompt)
    elif model is not None:
        resolved = system_prompt if system_prompt is not None else default_system_prompt(schema)
        output = _run_sync(lambda: _from_model(model, schema, prompt, resolved))
    else:  # pragma: no cover - the manager always passes one
        raise ValueError("request_state needs a model or an agent")
    if output is None:
        raise RuntimeError(f"the summarization model returned no structured output for {schema.__name__}")
    if isinstance(output, schema):
        return output
    data = output.model_dump() if isinstance(output, BaseModel) else output
    return schema.model_validate(data)


def _tool_ids(message: Message) -> set[str]:
    ids: set[str] = set()
    for block in message.get("content") or []:
        if not isinstance(block, dict):
            continue
        for kind in ("toolUse", "toolResult"):
            item = block.get(kind)
            if isinstance(item, dict) and item.get("toolUseId"):
                ids.add(str(item["toolUseId"]))
    return ids


def summary_view(messages: Sequence[Message], keep: MessageFilter | None) -> list[int]:
    """Positions of the messages the summarizer sees: those ``keep`` accepts, tool pairs kept whole.

    If ``keep`` rejects one side of a tool use/result pair, the other side is left out too, so the summarizer
    never receives a tool use without its result (providers reject that).

    Args:
        messages: The messages leaving the context.
        keep: The user's filter, or None (every message is seen).

    Returns:
        Positions into ``messages``, in order.
    """
    if keep is None:
        return list(range(len(messages)))
    rejected = {i for i, m in enumerate(messages) if not keep(m)}
    rejected_ids = set().union(*(_tool_ids(messages[i]) for i in rejected)) if rejected else set()
    return [i for i, m in enumerate(messages) if i not in rejected and not (_tool_ids(m) & rejected_ids)]


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
    if isinstance(state, StructuredSummary):
        allowed = (cited_sources(previous) if previous is not None else set()) | set(indices)
        state = clean_state(state, allowed)
    return state
