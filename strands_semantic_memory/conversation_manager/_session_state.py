"""SessionState: the structured summary kept by the manager when ``summary_format="structured"``.

A prose summary drifts: each reduction summarizes the previous summary again. A session state is a small object of
named fields that the next reduction *merges into*: the model receives the previous state and the messages leaving
the context, and returns the updated state. It reaches the chat model as one compact, delimited message in place of
the prose summary, and the archive still holds every word (each fact names the archive messages it came from).

This module holds the default schema, how a state is written into the conversation and how it is saved with a
session; ``_summarizer`` asks the model for it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from strands.types.content import Message

from strands_semantic_memory.errors import StateError

__all__ = [
    "STATE_CLOSE",
    "STATE_OPEN",
    "Fact",
    "SessionState",
    "cited_sources",
    "clean_state",
    "dump_session_state",
    "load_session_state",
    "read_state_block",
    "render_state",
    "state_json",
    "state_message",
]

STATE_OPEN = "<session_state>"
"""Opening delimiter of the state in the message the chat model sees."""
STATE_CLOSE = "</session_state>"
r"""Closing delimiter; the state's JSON never contains it (``<`` is written as ``\u003c``)."""

_HEADER = (
    "[Session state kept by the conversation manager: the earlier conversation condensed into facts, decisions, "
    "preferences and open threads. The earlier messages are archived word for word; the numbers in "
    '"sources" are their archive indices.]'
)


class Fact(BaseModel):
    """One fact or decision, with the archived messages it came from."""

    model_config = ConfigDict(extra="ignore")

    text: str = Field(
        description="The fact, with every name, number, date, identifier, amount, path and code exactly as written "
        "in the messages (copy values verbatim; never round or paraphrase them)."
    )
    sources: list[int] = Field(
        default_factory=list,
        description="Archive indices (the #N numbers given with the messages) of the messages this comes from.",
    )


class SessionState(BaseModel):
    """What the conversation has established so far: the default schema of ``summary_format="structured"``."""

    model_config = ConfigDict(extra="ignore")

    facts: list[Fact] = Field(
        default_factory=list,
        description="Hard facts, zero loss: names, numbers, dates, identifiers, amounts, code, file paths, results.",
    )
    decisions: list[Fact] = Field(
        default_factory=list, description="Decisions made and agreements reached, each with its reason if given."
    )
    user_preferences: list[str] = Field(
        default_factory=list, description="The user's stated preferences, constraints and goals."
    )
    tone: str = Field(default="", description="The user's tone and preferred communication style, in a few words.")
    shared_concepts: list[str] = Field(
        default_factory=list,
        description="Concepts already explained to or known by the user, so they are not explained again.",
    )
    open_threads: list[str] = Field(
        default_factory=list, description="Unanswered questions and pending tasks; remove those that were resolved."
    )
    narrative: str = Field(
        default="", description="Two or three sentences bridging to the current point of the conversation."
    )


def _without_empty(value: Any) -> Any:
    """Drop empty strings, lists, dicts and None (nothing to say costs no tokens)."""
    if isinstance(value, dict):
        kept = {k: _without_empty(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v not in ("", [], {}, None)}
    if isinstance(value, list):
        items = [_without_empty(v) for v in value]
        return [v for v in items if v not in ("", [], {}, None)]
    return value


def state_json(state: BaseModel) -> str:
    r"""The state as compact JSON without empty fields, safe to place between the delimiters.

    ``<`` is escaped as ``\u003c`` (still valid JSON), so text inside the state can never close the block.
    """
    data = _without_empty(state.model_dump(mode="json"))
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


def render_state(state: BaseModel) -> str:
    """The text of the message that carries the state: a one-line header and the delimited JSON."""
    return f"{_HEADER}\n{STATE_OPEN}\n{state_json(state)}\n{STATE_CLOSE}"


def state_message(state: BaseModel) -> Message:
    """The user-role message that replaces the prose summary (same shape as Strands' summary message)."""
    return {"role": "user", "content": [{"text": render_state(state)}]}


def read_state_block(text: str) -> dict[str, Any] | None:
    """The JSON object between the delimiters of ``text``, or None if there is none (or it is not JSON)."""
    start = text.find(STATE_OPEN)
    end = text.find(STATE_CLOSE, start + len(STATE_OPEN))
    if start < 0 or end < 0:
        return None
    try:
        value = json.loads(text[start + len(STATE_OPEN) : end])
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _unique_texts(items: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    kept = []
    for item in items:
        text = item.strip()
        key = " ".join(text.casefold().split())
        if text and key not in seen:
            seen.add(key)
            kept.append(text)
    return kept


def _merge_facts(facts: Iterable[Fact], allowed_sources: set[int]) -> list[Fact]:
    merged: dict[str, Fact] = {}
    for fact in facts:
        text = fact.text.strip()
        if not text:
            continue
        key = " ".join(text.casefold().split())
        sources = [s for s in fact.sources if isinstance(s, int) and s in allowed_sources]
        if key in merged:
            sources = merged[key].sources + sources
            text = merged[key].text
        merged[key] = Fact(text=text, sources=sorted(set(sources)))
    return list(merged.values())


def clean_state(state: SessionState, allowed_sources: set[int]) -> SessionState:
    """Tidy a state the model returned: no duplicates, no empty items, no source the model made up.

    Args:
        state: The model's state.
        allowed_sources: Archive indices the model was shown (this reduction's) or that earlier states cited.

    Returns:
        A new state: facts and decisions deduplicated by text (case and spacing ignored; their sources merged),
        sources restricted to ``allowed_sources``, list items stripped and deduplicated.
    """
    return state.model_copy(
        update={
            "facts": _merge_facts(state.facts, allowed_sources),
            "decisions": _merge_facts(state.decisions, allowed_sources),
            "user_preferences": _unique_texts(state.user_preferences),
            "shared_concepts": _unique_texts(state.shared_concepts),
            "open_threads": _unique_texts(state.open_threads),
            "tone": state.tone.strip(),
            "narrative": state.narrative.strip(),
        }
    )


def cited_sources(state: BaseModel) -> set[int]:
    """Every archive index a ``SessionState`` cites (empty for other schemas)."""
    if not isinstance(state, SessionState):
        return set()
    return {s for fact in [*state.facts, *state.decisions] for s in fact.sources}


# ------------------------------------------------------------------ saved with the session


def dump_session_state(state: BaseModel) -> dict[str, Any]:
    """The state as saved in the manager's session state: ``{"schema": class name, "data": JSON object}``."""
    return {"schema": type(state).__name__, "data": state.model_dump(mode="json")}


def load_session_state(payload: Any, schema: type[BaseModel]) -> BaseModel:
    """A state saved by ``dump_session_state``, validated against ``schema``.

    Raises:
        StateError: If the payload is malformed, was produced with another schema (by class name), or does not
            validate; the message names the schema to restore with.
    """
    if not isinstance(payload, dict) or not isinstance(payload.get("data"), dict):
        raise StateError("the session's session_state must be an object with 'schema' and 'data'")
    saved, ours = payload.get("schema"), schema.__name__
    if saved != ours:
        raise StateError(
            f"the session's state was produced with the summary schema {saved!r}, but this manager uses {ours!r}: "
            f"restore with summary_schema={saved}"
        )
    try:
        return schema.model_validate(payload["data"])
    except ValidationError as error:
        raise StateError(f"the session's {ours} does not validate: {error}") from error
