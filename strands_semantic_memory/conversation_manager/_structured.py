"""Structured compaction: a summary of named fields that each reduction merges into, instead of prose.

A prose summary drifts: each reduction summarizes the previous summary again. With ``summary_format="structured"``
the manager keeps a small pydantic object (``StructuredSummary`` by default) and the model receives, through Strands'
structured output, the previous object and the messages leaving the context (labelled with their archive indices),
and returns the updated one. Each fact names the archived messages it came from, and the archive keeps every word.
The object reaches the chat model as one delimited message; it never takes more than ``STATE_SHARE`` of the model's
window (counted at three characters per token): its oldest items give way first, and the message says which archived
messages they came from, so a state the model made too large cannot wedge the conversation.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field
from strands.types.content import Message

from strands_semantic_memory.budget import model_window

if TYPE_CHECKING:
    from strands.agent.agent import Agent

__all__ = ["Fact", "StructuredSummary", "merge", "summary_message"]

STATE_SHARE = 0.25
"""The most of the model's window the structured summary takes (a model that declares none: of 200,000 tokens)."""
CHARS_PER_TOKEN = 3
OPEN, CLOSE = "<session_state>", "</session_state>"
_HEADER = (
    "[Session state kept by the conversation manager: the earlier conversation condensed into facts, decisions, "
    'preferences and open threads. The earlier messages are archived word for word; the numbers in "sources" are '
    "their archive indices.]"
)
SYSTEM_PROMPT = """You maintain the session state of a conversation: a structured record that replaces the earlier \
messages in the assistant's context. You receive the current session state and the messages now leaving the context, \
and you return the updated session state.
Rules:
- Zero loss for facts and decisions: keep every name, number, date, identifier, amount, file path and piece of code \
exactly as written. Copy values verbatim; never round, abbreviate or paraphrase them.
- For each fact and decision, list in "sources" the archive numbers (#N) of the messages it comes from.
- Merge, do not re-summarize: keep every item unless the new messages contradict, complete or resolve it. Replace a \
contradicted item with the new value, remove resolved open threads, add nothing twice.
- Do not address the user and do not comment on tools."""


class Fact(BaseModel):
    """One fact or decision, with the archived messages it came from."""

    model_config = ConfigDict(extra="ignore")

    text: str = Field(description="The fact, with every name, number, date, identifier and code exactly as written.")
    sources: list[int] = Field(default_factory=list, description="Archive indices (#N) of the messages it comes from.")


class StructuredSummary(BaseModel):
    """What the conversation has established so far: the default schema of ``summary_format="structured"``."""

    model_config = ConfigDict(extra="ignore")

    facts: list[Fact] = Field(
        default_factory=list, description="Hard facts: names, numbers, dates, ids, code, results."
    )
    decisions: list[Fact] = Field(default_factory=list, description="Decisions and agreements, with their reasons.")
    user_preferences: list[str] = Field(default_factory=list, description="The user's preferences and constraints.")
    open_threads: list[str] = Field(default_factory=list, description="Unanswered questions and pending tasks.")
    narrative: str = Field(default="", description="Two or three sentences bridging to the current point.")


def _json(state: BaseModel) -> str:
    r"""Compact JSON without empty fields; ``<`` as ``\u003c`` so no text inside can close the block."""
    data = {k: v for k, v in state.model_dump(mode="json").items() if v not in ("", [], {}, None)}
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


def summary_message(state: BaseModel, note: str = "") -> Message:
    """The user-role message that carries the state (the shape of Strands' summary message)."""
    header = f"{_HEADER}\n{note}" if note else _HEADER
    return {"role": "user", "content": [{"text": f"{header}\n{OPEN}\n{_json(state)}\n{CLOSE}"}]}


def trimmed(state: BaseModel, chars: int) -> tuple[BaseModel, list[int]]:
    """``state`` within ``chars`` of JSON: the oldest list items go first; the archive indices they cited."""
    data = state.model_dump()
    left_out: list[int] = []
    while len(_json(type(state).model_validate(data))) > chars:
        lists = [k for k, v in data.items() if isinstance(v, list) and v]
        if not lists:
            break
        longest = max(lists, key=lambda k: len(json.dumps(data[k])))
        item = data[longest].pop(0)
        if isinstance(item, dict):
            left_out.extend(i for i in item.get("sources", []) if isinstance(i, int))
    return type(state).model_validate(data), sorted(set(left_out))


def _run(coroutine_factory: Any) -> Any:
    """Run a coroutine from synchronous code in a thread with its own loop (as Strands' summarizing manager does)."""
    with ThreadPoolExecutor(max_workers=1) as executor:
        return executor.submit(contextvars.copy_context().run, asyncio.run, coroutine_factory()).result()


def merge(manager: Any, messages: Sequence[Message], indices: Sequence[int], agent: Agent) -> BaseModel:
    """The state so far with ``messages`` (archived at ``indices``) merged in by the summarizing model.

    Raises:
        Exception: Whatever the model raised, or a ``pydantic.ValidationError`` for output that does not fit.
    """
    schema: type[BaseModel] = manager.summary_schema
    previous: BaseModel | None = manager.structured_summary
    if previous is not None and not messages:
        return previous
    current = (
        f"The current {schema.__name__}:\n{OPEN}\n{_json(previous)}\n{CLOSE}"
        if previous is not None
        else f"There is no {schema.__name__} yet: build it from the messages that follow."
    )
    labels = ", ".join(f"#{i}" for i in indices)
    prompt: list[Message] = [
        {"role": "user", "content": [{"text": f"{current}\n\nThe messages that follow leave the context: {labels}."}]},
        *messages,
        {"role": "user", "content": [{"text": f"Return the updated {schema.__name__}."}]},
    ]
    if manager.summarization_agent is not None:
        summarizer = manager.summarization_agent
        saved = summarizer.messages.copy()
        try:
            summarizer.messages = prompt[:-1]
            output = summarizer(prompt[-1]["content"], structured_output_model=schema).structured_output
        finally:
            summarizer.messages = saved
    else:

        async def ask() -> Any:
            found = None
            system = manager.summarization_system_prompt or SYSTEM_PROMPT
            async for event in agent.aux_model.structured_output(schema, prompt, system_prompt=system):
                if isinstance(event, dict) and "output" in event:
                    found = event["output"]
            return found

        output = _run(ask)
    if output is None:
        raise RuntimeError(f"the summarization model returned no structured output for {schema.__name__}")
    state = schema.model_validate(output.model_dump() if isinstance(output, BaseModel) else output)
    window = model_window(agent.model) or 200_000
    state, _ = trimmed(state, int(STATE_SHARE * window * CHARS_PER_TOKEN))
    return state
